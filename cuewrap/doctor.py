"""``cuewrap doctor [--check]``: what this terminal supports, which channels cuewrap would use
and why (SPEC 8), and an interactive check.

The report reuses the deciders the session uses (``load_settings``,
``detect_terminal_protocol``, ``desktop_available``, ``default_inhibitor``, ``guard_holds``),
so what it says is what ``cuewrap pi`` would do in this terminal. Terminfo is read with
``curses.setupterm``/``tigetstr`` in a short child process (curses keeps the first
``setupterm`` of a process for good). Terminfo has no capability for OSC 777/9/99
notifications, and most entries predate focus reporting (``fe``/``fd``), so it is shown as
a fact, never used to decide: the interactive check tests the terminal itself.

``--check`` (both stdin and stdout must be terminals): raw mode, focus reporting on; the user
switches away and back within 15 s (``q``, Escape or Ctrl+C abort); then one test
notification over the chosen protocol and a ``[?]`` title mark for 2 s, and the user answers
y/n. The terminal is restored (focus reporting off, title popped, termios) on every path.
Exit status: 0 all confirmed, 1 something did not work or the check was aborted, 2 usage or
config error, 128+N on Ctrl+C (130) or a signal.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from cuewrap import __version__
from cuewrap.config import KEYS, ConfigError, Settings, default_config_path, load_settings
from cuewrap.deliver.desktop import desktop_available
from cuewrap.deliver.keepawake import default_inhibitor
from cuewrap.deliver.terminal import (
    _RULES,
    Choice,
    TerminalNotifier,
    TmuxInfo,
    _identify,
    _tmux,
    detect_terminal_protocol,
    query_tmux,
)
from cuewrap.engine.effects import MARK_WAITING, Eligibility, Notify
from cuewrap.host import HostTerminal, is_tty
from cuewrap.term import sequences as seq
from cuewrap.term.focus import FocusFilter, FocusReport

if TYPE_CHECKING:
    from cuewrap.cli import Args

USAGE = "usage: cuewrap [OPTIONS] doctor [--check]"
HELP = f"""{USAGE}

Show what this terminal supports (focus reports, title, notification protocol, tmux
options), the settings in effect and where each came from, and which channels cuewrap
would use, and why.

  --check   interactive: switch away and back (focus reports), then confirm that a test
            notification and a title mark were shown. Needs a terminal.
"""

FOCUS_WAIT = 15.0  # seconds to switch away and back
MARK_SHOW = 2.0  # seconds the test title mark stays up
ANSWER_WAIT = 120.0  # seconds to answer a y/n question
ESC_WAIT = 0.05  # a lone ESC not continued within this is the Escape key
MARK_TEXT = f"{MARK_WAITING} cuewrap doctor"

# terminfo capabilities worth showing (strings, then flags); ncurses names
_TI_STRINGS = ("fe", "fd", "kxIN", "kxOUT", "tsl", "fsl", "TS")
_TI_FLAGS = ("hs", "XT")
_TI_PROBE = """
import curses, json, sys
try:
    curses.setupterm(sys.argv[1], 1)
except curses.error as exc:
    print(json.dumps({"error": str(exc)}))
    raise SystemExit(0)
out = {}
for name in sys.argv[2].split(","):
    value = curses.tigetstr(name)
    out[name] = value.decode("latin-1") if value else None
for name in sys.argv[3].split(","):
    out[name] = curses.tigetflag(name) > 0
print(json.dumps(out))
"""

# environment markers shown in the report: those the detection reads, and a few more
_MARKERS = tuple(
    dict.fromkeys(
        [
            "TERM",
            "TERM_PROGRAM",
            "TERM_PROGRAM_VERSION",
            "COLORTERM",
            *(var for rule in _RULES for var, _ in rule.env),
            "TMUX",
            "TMUX_PANE",
            "SSH_CONNECTION",
            "SSH_TTY",
            "DISPLAY",
            "WAYLAND_DISPLAY",
        ]
    )
)


class _UsageError(Exception):
    pass


def doctor(args: Args, *, env: Mapping[str, str] | None = None) -> int:
    environ = dict(os.environ if env is None else env)
    try:
        check = _parse(args)
    except _UsageError as exc:
        _err(f"doctor: {exc} ({USAGE})")
        return 2
    if check is None:
        sys.stdout.write(HELP)
        return 0
    try:
        settings = load_settings(
            args.config,
            environ,
            {"no_cues": args.no_cues, "keep_awake": args.keep_awake, "log": args.log},
        )
    except ConfigError as exc:
        _err(str(exc).removeprefix("cuewrap: "))
        return 2
    if check and not (is_tty(0) and is_tty(1)):
        _err("doctor --check is interactive: stdin and stdout must both be a terminal")
        return 2
    text, choice = report(settings, environ, log_flag=bool(args.log))
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # cuewrap doctor | head
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if not check:
        return 0
    return run_check(settings, choice, environ)


def _parse(args: Args) -> bool | None:
    """doctor's own arguments (after ``doctor``): True for --check, None for --help.

    Global options given after ``doctor`` (``--config PATH`` …) are parsed by the CLI's own
    parser and merged into ``args``.
    """
    from cuewrap.cli import UsageError, parse_args

    check = False
    rest: list[str] = []
    for a in args.command:
        if a == "--check":
            check = True
        elif a in ("-h", "--help"):
            return None
        else:
            rest.append(a)
    if rest:
        try:
            more = parse_args([*rest, "doctor"])
        except UsageError as exc:
            raise _UsageError(str(exc)) from None
        if isinstance(more, str) or more.subcommand != "doctor" or more.command:
            raise _UsageError(f"unexpected argument {rest[0]}")
        args.config = more.config or args.config
        args.log = more.log or args.log
        args.no_cues = more.no_cues or args.no_cues
        args.keep_awake = more.keep_awake or args.keep_awake
    return check


def _err(msg: str) -> None:
    sys.stderr.write(f"cuewrap: {msg}\n")
    sys.stderr.flush()


# -- the report ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TmuxExtra:
    focus_events: str  # "on" | "off" | "" (unknown)
    set_titles: str
    client_features: str


def query_tmux_extra(env: Mapping[str, str], timeout: float = 1.0) -> TmuxExtra:
    """The tmux options the report needs beyond ``query_tmux`` (formats give 1/0)."""
    pane = env.get("TMUX_PANE", "")
    target = ["-t", pane] if pane else []
    fmt = "#{focus-events}\t#{set-titles}\t#{client_termfeatures}"
    shown = _tmux(["display-message", "-p", *target, fmt], env, timeout)
    fields = ["", "", ""]
    if shown is not None and shown[0] == 0:
        fields = [*shown[1].rstrip("\n").split("\t"), "", "", ""][:3]
    flag = {"1": "on", "0": "off"}
    return TmuxExtra(flag.get(fields[0], ""), flag.get(fields[1], ""), fields[2])


def terminfo_facts(term: str, env: Mapping[str, str]) -> dict[str, object]:
    """``{cap: value}`` for ``term`` from curses in a child process; ``{"error": …}`` if none."""
    if not term:
        return {"error": "TERM is not set"}
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                _TI_PROBE,
                term,
                ",".join(_TI_STRINGS),
                ",".join(_TI_FLAGS),
            ],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=5,
        )
        facts: dict[str, object] = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return {"error": f"cannot read terminfo: {exc.__class__.__name__}"}
    return facts


def _show(value: str, limit: int = 60) -> str:
    """An environment value made safe to print (no escape sequences)."""
    text = seq.sanitize(value, limit)
    return text if len(value) <= limit else text + "…"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _terminfo_lines(term: str, facts: dict[str, object]) -> list[str]:
    if "error" in facts:
        return [f"  terminfo {term or '(none)'}: not available ({facts['error']})"]
    has = {k: bool(v) for k, v in facts.items()}
    focus = has["fe"] and has["fd"]
    keys = has["kxIN"] and has["kxOUT"]
    title = has["tsl"] or has["hs"]
    return [
        f"  terminfo {term}: focus fe/fd {_yes(focus)} · focus keys kxIN/kxOUT {_yes(keys)}"
        f" · title tsl/hs {_yes(title)} · XT {_yes(has['XT'])}",
        "    (a hint only: few entries list fe/fd, none describe OSC notifications;"
        " --check tests the terminal itself)",
    ]


def _format_value(settings: Settings, name: str) -> str:
    section, key = name.split(".")
    value = getattr(getattr(settings, section), key)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return shlex.join(value)
    if value is None:
        return "(platform default)"
    return str(value)


def _origin(settings: Settings, name: str) -> str:
    where = settings.origin(name)
    if where == "default":
        return "default"
    if where.startswith("--"):
        return f"flag {where}"
    if where.startswith("CUEWRAP_"):
        return f"env {where}"
    return f"file {where}"


def report(
    settings: Settings,
    env: Mapping[str, str],
    *,
    log_flag: bool = False,
) -> tuple[str, Choice]:
    """The whole report, and the terminal notification choice (the check sends over it)."""
    lines = [f"cuewrap doctor {__version__}", ""]
    term = env.get("TERM", "")
    in_tmux = bool(env.get("TMUX"))
    info: TmuxInfo | None = query_tmux(env) if in_tmux else None
    extra = query_tmux_extra(env) if in_tmux and info is not None else None

    # the terminal
    lines.append("Terminal")
    _, _, identified = _identify(env, info)
    lines.append(f"  identified: {identified}")
    markers = [  # SSH_*: only whether it is set (the report may be pasted into a bug report)
        var if var.startswith("SSH_") else f"{var}={_show(env[var])}"
        for var in _MARKERS
        if env.get(var)
    ]
    lines.append(f"  environment markers: {', '.join(markers) or 'none'}")
    if not (is_tty(0) and is_tty(1)):
        lines.append("  stdin/stdout: not both terminals here (cuewrap pi needs both for cues)")
    lines += _terminfo_lines(term, terminfo_facts(term, env))
    if info is not None and info.client_termname and info.client_termname != term:
        lines += _terminfo_lines(info.client_termname, terminfo_facts(info.client_termname, env))

    # tmux
    if in_tmux:
        lines += ["", "tmux"]
        if info is None:
            lines.append("  TMUX is set, but tmux could not be asked (no server at that socket?)")
        else:
            lines += _tmux_lines(info, extra)

    # settings
    path = settings.config_file or default_config_path(env)
    found = "" if settings.config_file else ", not found: defaults"
    lines += ["", f"Settings (config file: {path}{found})"]
    width = max(len(spec.name) for spec in KEYS)
    for spec in KEYS:
        value = _format_value(settings, spec.name)
        lines.append(f"  {spec.name:<{width}}  {value:<20}  {_origin(settings, spec.name)}")
    if settings.log:
        log_from = "--log" if log_flag else "CUEWRAP_LOG"
        lines.append(f"  decision log: {settings.log} (from {log_from})")
    else:
        lines.append("  decision log: off (--log FILE or CUEWRAP_LOG)")

    # channels
    choice = detect_terminal_protocol(env, settings.notify.terminal, lambda: info)
    lines += ["", "Channels"]
    term_ok = bool(term) and term != "dumb"  # SPEC 3, the part that is not about this process
    if not term_ok:
        lines.append(
            f"  cues: off: TERM is {'dumb' if term else 'not set'}; cuewrap is a pure passthrough"
        )
    elif not settings.cues.enabled:
        lines.append(
            f"  cues: start off (cues.enabled = false, {_origin(settings, 'cues.enabled')});"
            " /cue on in Pi turns them on, with these channels:"
        )
    else:
        lines.append("  cues: on")
    if term_ok:
        for name, used, why in _channels(settings, env, choice, extra):
            lines.append(f"  {name:<21} {_yes(used):<3}  {why}")
    return "\n".join(lines) + "\n", choice


def _tmux_lines(info: TmuxInfo, extra: TmuxExtra | None) -> list[str]:
    client = info.client_termname or "none attached"
    if info.client_termtype:
        client += f" ({info.client_termtype})"
    lines = [f"  version {info.version or '?'}; client terminal: {client}"]
    if extra is not None and extra.client_features:
        lines.append(f"  client features (tmux's view): {extra.client_features}")
    if info.allow_passthrough is None:
        lines.append("  allow-passthrough: (no such option before tmux 3.3: always passes)")
    elif info.allow_passthrough in ("on", "all"):
        lines.append(f"  allow-passthrough: {info.allow_passthrough}: notifications get through")
    else:
        lines.append(
            "  allow-passthrough: off: tmux drops terminal notifications"
            " (tmux set -g allow-passthrough on)"
        )
    if extra is not None:
        if extra.focus_events == "off":
            lines.append(
                "  focus-events: off: tmux sends no focus reports to the pane"
                " (tmux set -s focus-events on)"
            )
        elif extra.focus_events:
            lines.append("  focus-events: on")
        if extra.set_titles == "off":
            lines.append(
                "  set-titles: off: title marks change the pane title only"
                " (tmux set -g set-titles on shows them in the terminal's title)"
            )
        elif extra.set_titles:
            lines.append("  set-titles: on")
    return lines


def _channels(
    settings: Settings, env: Mapping[str, str], choice: Choice, extra: TmuxExtra | None
) -> Iterator[tuple[str, bool, str]]:
    """(channel, used, why) for each channel."""
    n = settings.notify
    # title marks
    src = _origin(settings, "notify.title_marks")
    if n.title_marks:
        pane = extra is not None and extra.set_titles == "off"
        where = "; in the pane title (tmux set-titles is off)" if pane else ""
        yield (
            "title marks",
            True,
            f"notify.title_marks = true ({src}): [?] [✓] [!] [-] before Pi's title (OSC 2)"
            f"{where}; your title saved and restored (CSI 22;0 t / 23;0 t)",
        )
    else:
        yield "title marks", False, f"notify.title_marks = false ({src})"
    # terminal notification
    if choice.protocol == "off":
        yield "terminal notification", False, choice.reason
    else:
        wrapped = " in tmux passthrough" if choice.tmux_passthrough else ""
        yield (
            "terminal notification",
            True,
            f"{choice.protocol}{wrapped}: {choice.reason} (never confirmed by the terminal)",
        )
    # desktop
    on, why = desktop_available(env, n.desktop)
    if on:
        problems = []
        if importlib.util.find_spec("notifypy") is None:
            problems.append("notify-py is not installed")
        if sys.platform != "darwin" and not _session_bus(env):
            problems.append("no D-Bus session bus found")
        if problems:
            why += f" (but it will fail: {', '.join(problems)})"
    yield "desktop", on, why
    # bell
    src = _origin(settings, "notify.bell")
    if n.bell:
        yield "bell", True, f"notify.bell = true ({src}): one BEL per notification"
    else:
        yield "bell", False, f"notify.bell = false ({src})"
    # keep-awake
    k = settings.keep_awake
    command = list(k.command) if k.command else default_inhibitor()
    what = shlex.join(command) if command else "none for this platform"
    src = _origin(settings, "keep_awake.enabled")
    if not k.enabled:
        yield "keep-awake", False, f"keep_awake.enabled = false ({src}); inhibitor: {what}"
    elif not command:
        yield "keep-awake", False, "no inhibitor for this platform (set keep_awake.command)"
    elif shutil.which(command[0]) is None:
        yield "keep-awake", False, f"{command[0]} not found (keep_awake.command)"
    else:
        yield "keep-awake", True, f"while Pi works ({src}): {what}"


def _session_bus(env: Mapping[str, str]) -> bool:
    if env.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = env.get("XDG_RUNTIME_DIR", "")
    return bool(runtime) and os.path.exists(os.path.join(runtime, "bus"))


# -- the interactive check ------------------------------------------------------------------------
FOCUS_IN, FOCUS_OUT, ESCAPE, CTRL_C = "<focus-in>", "<focus-out>", "<escape>", "<ctrl-c>"


class _Aborted(Exception):
    """q or Escape."""


class _Interrupted(BaseException):
    """Ctrl+C, or a signal; ``status`` is the exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Gone(Exception):
    """The terminal closed (EOF on stdin)."""


def _tokens(data: bytes) -> list[str]:
    """Key presses in ``data`` (focus reports are already taken out)."""
    out: list[str] = []
    i = 0
    while i < len(data):
        b = data[i]
        if b == 0x1B:
            nxt = data[i + 1] if i + 1 < len(data) else None
            if nxt is None or nxt == 0x1B:
                out.append(ESCAPE)
                i += 1
            elif nxt == ord("["):  # CSI: skip parameters and intermediates to the final byte
                i += 2
                while i < len(data) and not 0x40 <= data[i] <= 0x7E:
                    i += 1
                i += 1
            else:  # SS3 (ESC O x) or Alt+key
                i += 3 if nxt == ord("O") else 2
            continue
        if b == 0x03:
            out.append(CTRL_C)
        elif 0x20 <= b < 0x7F:
            out.append(chr(b).lower())
        i += 1
    return out


class _Keys:
    """Key presses and focus reports from the raw terminal on ``fd``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.filter = FocusFilter()

    def _read(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return None
        data = os.read(self.fd, 1024)
        if not data:
            raise _Gone
        return data

    def poll(self, timeout: float) -> list[str]:
        data = self._read(timeout)
        if data is None:
            return []
        items = self.filter.feed(data)
        while self.filter.pending:  # ESC or ESC [ at the end: wait a moment for the rest
            more = self._read(ESC_WAIT)
            items += self.filter.feed(more) if more is not None else self.filter.flush()
        out: list[str] = []
        for item in items:
            if isinstance(item, FocusReport):
                out.append(FOCUS_IN if item.direction == "in" else FOCUS_OUT)
            elif isinstance(item, bytes):
                out += _tokens(item)
        for token in out:
            if token == CTRL_C:
                raise _Interrupted(128 + signal.SIGINT)
        return out


class _SignalTrap:
    """SIGINT/SIGTERM/SIGHUP during the check: raise while armed, only record while the
    terminal is being restored (so a signal cannot cut the restore short)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.armed = False
        self.status = 0  # 128 + the last signal caught
        self._old: dict[int, Any] = {}  # the previous handlers

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.status = 128 + signum
        if self.armed:
            raise _Interrupted(self.status)

    def install(self) -> None:
        self._old = {sig: signal.signal(sig, self._handler) for sig in self.SIGNALS}
        self.armed = True

    def uninstall(self) -> None:
        self.armed = False
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old = {}


@dataclass
class CheckResult:
    focus: list[str]  # "out"/"in" in arrival order
    focus_ok: bool = False
    notification: bool | None = None  # None: not sent or not answered
    notification_sent: bool = False
    title: bool | None = None


def run_check(settings: Settings, choice: Choice, env: Mapping[str, str]) -> int:
    host = HostTerminal(0, 1)
    result = CheckResult(focus=[])
    trap = _SignalTrap()
    status = 0
    failure = ""
    try:
        trap.install()
        host.enter_raw()
        host.enable(seq.TITLE_PUSH, seq.TITLE_POP)
        host.enable(seq.FOCUS_REPORTING_ON, seq.FOCUS_REPORTING_OFF)

        def say(text: str, end: str = "\n") -> None:
            host.write((text + end).replace("\n", "\r\n").encode())

        _check_steps(_Keys(0), say, host.write, settings, choice, result)
    except _Interrupted as exc:
        status = exc.status
    except _Aborted:
        status = -1
    except _Gone:
        status = 129
    except Exception as exc:
        status = -2
        failure = f"{exc.__class__.__name__}: {exc}"
    finally:
        trap.armed = False  # from here on a signal is only recorded
        with contextlib.suppress(Exception):
            host.restore()
        trap.uninstall()
    if trap.status and status <= 0:
        status = trap.status  # a signal arrived while restoring
    print()
    if status > 0:
        _err("doctor: check interrupted (terminal restored)")
        return status
    if status == -1:
        print("check aborted (terminal restored)")
        return 1
    if status == -2:
        _err(f"doctor: check failed: {failure} (terminal restored)")
        return 1
    return _summary(result, choice, env)


def _wait(keys: _Keys, seconds: float, on_token: Callable[[str], bool]) -> bool:
    """Read keys for up to ``seconds``; True as soon as ``on_token`` returns True."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        for token in keys.poll(left):
            if token in (ESCAPE, "q"):
                raise _Aborted
            if on_token(token):
                return True
    return False


def _ask(keys: _Keys, say: Callable[..., None], question: str) -> bool | None:
    say(f"{question} [y/n] ", end="")
    answer: list[bool] = []

    def on_token(token: str) -> bool:
        if token in ("y", "n"):
            answer.append(token == "y")
            return True
        return False

    if not _wait(keys, ANSWER_WAIT, on_token):
        say("(no answer)")
        return None
    say("yes" if answer[0] else "no")
    return answer[0]


def _check_steps(
    keys: _Keys,
    say: Callable[..., None],
    write: Callable[[bytes], None],
    settings: Settings,
    choice: Choice,
    result: CheckResult,
) -> None:
    say("")
    say("Interactive check (q or Escape aborts, Ctrl+C interrupts)")
    say(f"1. Switch to another window or tab, then come back (within {FOCUS_WAIT:g} s).")

    def on_focus(token: str) -> bool:
        if token == FOCUS_OUT:
            result.focus.append("out")
            say("   CSI O arrived: you left")
        elif token == FOCUS_IN:
            result.focus.append("in")
            back = "out" in result.focus
            say("   CSI I arrived: you are back" if back else "   CSI I arrived (focused)")
            return back
        return False

    result.focus_ok = _wait(keys, FOCUS_WAIT, on_focus)
    if result.focus_ok:
        say("   focus reports work")
    else:
        say(f"   no complete away-and-back within {FOCUS_WAIT:g} s")

    notifier = TerminalNotifier(choice, bell=settings.notify.bell)
    if choice.protocol != "off":
        step = f"2. Sending a test notification ({choice.protocol}) and a title mark"
        result.notification_sent = True
    else:
        step = f"2. No terminal notification ({choice.reason}); showing a title mark"
    say(f"{step} for {MARK_SHOW:g} s (some terminals show notifications only when unfocused).")
    test = Notify(
        cue_id=0,
        kind="finished",
        outcome="completed",
        title="Pi",
        body="cuewrap doctor: test notification",
        eligibility=Eligibility(generation=0, run=None, cue_id=0, epoch=0),
    )
    write(notifier.build(test) + seq.set_title(MARK_TEXT))
    try:
        _wait(keys, MARK_SHOW, lambda token: False)
    finally:
        write(seq.TITLE_POP + seq.TITLE_PUSH)  # the user's title back, and saved again
    if result.notification_sent:
        result.notification = _ask(keys, say, "   Did you see the test notification?")
    result.title = _ask(keys, say, f"   Did the title show '{MARK_TEXT}'?")


def _summary(result: CheckResult, choice: Choice, env: Mapping[str, str]) -> int:
    lines = ["Check results"]
    if result.focus_ok:
        lines.append("  focus reports: working (CSI O and CSI I arrived)")
    else:
        got = ", ".join("CSI O" if d == "out" else "CSI I" for d in result.focus) or "nothing"
        hint = (
            "inside tmux, check tmux set -s focus-events on"
            if env.get("TMUX")
            else "this terminal may not report focus (mode 1004)"
        )
        lines.append(
            f"  focus reports: not confirmed (got {got}); {hint}. Without them cuewrap counts"
            " you away after presence.idle_after seconds without keystrokes"
        )
    if not result.notification_sent:
        lines.append(f"  terminal notification: not sent ({choice.reason})")
    elif result.notification:
        lines.append(f"  terminal notification: seen ({choice.protocol})")
    else:
        lines.append(
            f"  terminal notification: not seen ({choice.protocol}); try another protocol"
            " with notify.terminal / CUEWRAP_NOTIFY_TERMINAL (osc777, osc9, osc99), or off"
        )
    if result.title:
        lines.append("  title mark: seen")
    else:
        lines.append(
            "  title mark: not seen; the terminal (or tmux without set-titles) ignores OSC 2;"
            " notify.title_marks = false turns marks off"
        )
    print("\n".join(lines))
    ok = result.focus_ok and result.title and (result.notification or not result.notification_sent)
    return 0 if ok else 1
