"""``cuewrap doctor --check``: the interactive check. Raw mode and focus reporting on; the
user switches away and back, then a test notification and a title mark are shown and the
user says whether they saw them. The terminal is restored on every path."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

from cuewrap.args import err
from cuewrap.config import Settings
from cuewrap.deliver.terminal import Choice, TerminalNotifier, terminal_shows
from cuewrap.engine.effects import MARK_WAITING, Eligibility, Notify
from cuewrap.host import HostTerminal
from cuewrap.term import sequences as seq
from cuewrap.term.focus import FocusFilter, FocusReport

FOCUS_WAIT = 15.0  # seconds to switch away and back
MARK_SHOW = 2.0  # seconds the test title mark stays up
ANSWER_WAIT = 120.0  # seconds to answer a y/n question
ESC_WAIT = 0.05  # a lone ESC not continued within this is the Escape key
MARK_TEXT = f"{MARK_WAITING} cuewrap doctor"

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
    # a terminal that may or may not show its own (a patched VTE, urxvt's extension): the
    # user's answer settles it; ``use_own``: they chose its popup instead of cuewrap's
    maybe: bool = False
    use_own: bool | None = None


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
        err("doctor: check interrupted (terminal restored)")
        return status
    if status == -1:
        print("check aborted (terminal restored)")
        return 1
    if status == -2:
        err(f"doctor: check failed: {failure} (terminal restored)")
        return 1
    saved = _save_own(choice, env) if result.use_own else ""
    return _summary(result, choice, env, saved)


def _save_own(choice: Choice, env: Mapping[str, str]) -> str:
    """The user saw this terminal's own notification and chose it: ``notify.terminal`` set to
    its protocol and ``notify.desktop`` off in the settings file (by ``cuewrap config set``,
    the one writer of that file), so a cue is that one popup (docs/terminals.md). What was
    saved, or why not, for the summary."""
    import subprocess
    import sys

    for key, value in (("notify.terminal", choice.protocol), ("notify.desktop", "off")):
        try:
            done = subprocess.run(
                [sys.executable, "-m", "cuewrap", "config", "set", key, value],
                env=dict(env), capture_output=True, text=True, timeout=30,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            done = subprocess.CompletedProcess([], 1, "", str(exc))
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["cuewrap config set failed"])[-1]
            return (
                f"not saved ({why}): set notify.terminal = {choice.protocol}, notify.desktop = off"
            )
    return (
        f"saved notify.terminal = {choice.protocol} and notify.desktop = off"
        " (`cuewrap config unset` both to undo)"
    )


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
        result.maybe = terminal_shows(choice.terminal) == "maybe"
        if result.maybe and result.notification:
            result.use_own = _ask(
                keys,
                say,
                "   This terminal shows them itself: use its popup instead of cuewrap's from"
                " now on (saved in your settings)?",
            )
    result.title = _ask(keys, say, f"   Did the title show '{MARK_TEXT}'?")


def _summary(result: CheckResult, choice: Choice, env: Mapping[str, str], saved: str = "") -> int:
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
        if result.maybe and result.use_own:
            lines.append(f"  its own popup from now on: {saved}")
        elif result.maybe:
            lines.append(
                "  its own popup: not chosen; cuewrap's own stays the one popup of a cue"
                " (notify.terminal and notify.desktop as they are)"
            )
    elif result.maybe:
        lines.append(
            f"  terminal notification: not seen ({choice.protocol}): this {choice.terminal}"
            " does not show its own; cuewrap's popup is the one a cue gives (nothing to set)"
        )
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
    # a terminal that may not show its own: "not seen" is an answer too (cuewrap's popup)
    told = result.notification or (result.maybe and result.notification is False)
    ok = result.focus_ok and result.title and (told or not result.notification_sent)
    return 0 if ok else 1
