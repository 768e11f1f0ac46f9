"""The ``cuewrap doctor`` report: the terminal, tmux, the settings in effect and where each
came from, and which channels cuewrap would use, and why. It asks the deciders the session
uses, so what it says is what ``cuewrap pi`` would do in this terminal."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from cuewrap import __version__
from cuewrap.advice import Where, fixes, situation
from cuewrap.config import (
    KEYS,
    Settings,
    default_config_path,
    listed_value,
    show_origin,
)
from cuewrap.deliver.desktop import desktop_available
from cuewrap.deliver.keepawake import default_inhibitor
from cuewrap.deliver.plan import Answers, Plan, make_plan
from cuewrap.deliver.terminal import (
    TERMINAL_RULES,
    Choice,
    detect_terminal_protocol,
    identify_terminal,
    query_tmux,
)
from cuewrap.doctor.pi import pi_lines
from cuewrap.doctor.terminfo import terminfo_facts
from cuewrap.host import is_tty, term_allows_cues
from cuewrap.term import sequences as seq
from cuewrap.term.konsole import read_small, tab_title
from cuewrap.tmux.command import run_blocking
from cuewrap.tmux.view import TmuxInfo

# environment markers shown in the report: those the detection reads, and a few more
_MARKERS = tuple(
    dict.fromkeys(
        [
            "TERM",
            "TERM_PROGRAM",
            "TERM_PROGRAM_VERSION",
            "COLORTERM",
            *(var for rule in TERMINAL_RULES for var, _ in rule.env),
            "TMUX",
            "TMUX_PANE",
            "SSH_CONNECTION",
            "SSH_TTY",
            "DISPLAY",
            "WAYLAND_DISPLAY",
        ]
    )
)


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
    shown = run_blocking(env, ["display-message", "-p", *target, fmt], timeout)
    fields = ["", "", ""]
    if shown is not None and shown[0] == 0:
        fields = [*shown[1].rstrip("\n").split("\t"), "", "", ""][:3]
    flag = {"1": "on", "0": "off"}
    return TmuxExtra(flag.get(fields[0], ""), flag.get(fields[1], ""), fields[2])


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
    return listed_value(settings, name)


def _origin(settings: Settings, name: str) -> str:
    return show_origin(settings.origin(name))


def report(
    settings: Settings,
    env: Mapping[str, str],
    *,
    log_flag: bool = False,
    command: list[str] | None = None,
    answers: Answers | None = None,
) -> tuple[str, Choice]:
    """The whole report, and the terminal notification choice (the check sends over it).
    ``command``: ``cuewrap doctor -- COMMAND`` also says what generic mode would use for it.
    ``answers``: what the terminal said when asked (``doctor.ask``); None: not asked."""
    in_tmux = bool(env.get("TMUX"))
    info: TmuxInfo | None = query_tmux(env) if in_tmux else None
    extra = query_tmux_extra(env) if in_tmux and info is not None else None
    version = answers.version if answers is not None else ""
    lines = [f"cuewrap doctor {__version__}", ""]
    lines += _terminal_lines(env, info, answers)
    if in_tmux:
        lines += ["", "tmux"]
        if info is None:
            lines.append("  TMUX is set, but tmux could not be asked (no server at that socket?)")
        else:
            lines += _tmux_lines(info, extra)
    lines += ["", *pi_lines(env)]
    lines += ["", *_settings_lines(settings, env, log_flag)]
    if settings.phone.enabled:  # docs/phone.md: what `cuewrap phone --check` says
        from cuewrap.phone.setup import check

        lines += ["", "Phone (ntfy)", *(f"  {line}" for line in check(settings.phone, env)[0])]
    choice = detect_terminal_protocol(env, settings.notify.terminal, lambda: info, version)
    program = "Pi"  # what the title marks go before: Pi, or the generic-mode program
    if command:
        from cuewrap.doctor.generic import generic_lines
        from cuewrap.generic.presets import choose

        lines += ["", *generic_lines(command, settings, env, choice)]
        if os.path.basename(command[0]) != "pi":
            program = choose(command[0], settings.generic.preset)[0].app
    lines += ["", *_channel_lines(settings, env, choice, info, extra, answers, program)]
    lines += ["", *_quiet_lines(settings, env)]
    if term_allows_cues(env):
        where = _where_lines(settings, env, choice, info, extra, program)
        lines += ["", "Where cuewrap runs", *where]
    return "\n".join(lines) + "\n", choice


def _quiet_lines(settings: Settings, env: Mapping[str, str]) -> list[str]:
    """The attention budget (docs/attention.md): quiet hours now, and what of the desktop's
    do-not-disturb can be read here."""
    import time

    from cuewrap.quiethours import next_change, parse_hours, quiet_at

    q = settings.quiet
    lines = ["Quiet (nothing pops up or sounds; marks and the state stay)"]
    ranges = parse_hours(q.hours)
    if not ranges:
        lines.append("  quiet hours: none (quiet.hours)")
    else:
        t = time.localtime()
        now = quiet_at(ranges, t.tm_hour * 60 + t.tm_min)
        ahead = next_change(ranges, t.tm_hour, t.tm_min, float(t.tm_sec))
        when = (
            ""
            if ahead is None
            else time.strftime(" until %H:%M", time.localtime(time.time() + ahead))
        )
        lines.append(
            f"  quiet hours: {', '.join(q.hours)}: {'quiet' if now else 'not quiet'} now{when}"
        )
        urgent = f"after {q.urgent_after:g} s" if q.urgent_after else "never (quiet.urgent_after)"
        lines.append(f"  a wait unanswered in quiet hours reaches notify.command: {urgent}")
    if not q.follow_desktop:
        lines.append("  desktop do-not-disturb: not followed (quiet.follow_desktop = false)")
        return lines
    from cuewrap.deliver.desktop import desktop_available

    local, why = desktop_available(env, "auto")
    if not local:
        lines.append(f"  desktop do-not-disturb: not read ({why})")
        return lines
    from cuewrap.deliver.dnd import read_once

    got = read_once(env)
    if got is None:
        lines.append("  desktop do-not-disturb: could not be read (no answer in time)")
    elif not got.get("readable"):
        lines.append(
            "  desktop do-not-disturb: nothing readable here (no notification server with "
            "Inhibited, no dunst, no GNOME show-banners)"
        )
    else:
        state = "on (" + ", ".join(got.get("via") or []) + ")" if got.get("quiet") else "off"
        lines.append(f"  desktop do-not-disturb: {state}; read from {', '.join(got['readable'])}")
    return lines


def _terminal_lines(
    env: Mapping[str, str], info: TmuxInfo | None, answers: Answers | None
) -> list[str]:
    """The terminal: what it was identified as, what it answered, its markers and terminfo."""
    term = env.get("TERM", "")
    version = answers.version if answers is not None else ""
    _, _, identified = identify_terminal(env, info, version)
    lines = ["Terminal", f"  identified: {identified}"]
    if answers is not None:
        lines.append(f"  asked: {_answers_line(answers)}")
        lines.append(f"  status reports (OSC 7501): {_status_fate(answers)}")
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
    return lines


def _settings_lines(settings: Settings, env: Mapping[str, str], log_flag: bool) -> list[str]:
    """Every setting in effect and where it came from, and the decision log."""
    path = settings.config_file or default_config_path(env)
    found = "" if settings.config_file else ", not found: defaults"
    lines = [f"Settings (config file: {path}{found})"]
    width = max(len(spec.name) for spec in KEYS)
    for spec in KEYS:
        value = _format_value(settings, spec.name)
        lines.append(f"  {spec.name:<{width}}  {value:<20}  {_origin(settings, spec.name)}")
    if settings.log:
        log_from = "--log" if log_flag else "CUEWRAP_LOG"
        lines.append(f"  decision log: {settings.log} (from {log_from})")
    else:
        lines.append("  decision log: off (--log FILE or CUEWRAP_LOG)")
    return lines


def _channel_lines(
    settings: Settings,
    env: Mapping[str, str],
    choice: Choice,
    info: TmuxInfo | None,
    extra: TmuxExtra | None,
    answers: Answers | None,
    program: str,
) -> list[str]:
    """Whether cues are on, and each channel: used or not, and why; then the plan."""
    term = env.get("TERM", "")
    on, desktop_why = desktop_available(env, settings.notify.desktop)
    plan = make_plan(
        choice,
        settings.notify.terminal,
        settings.notify.desktop,
        on,
        desktop_why,
        in_tmux=bool(env.get("TMUX")),
        answers=answers,
        tmux_termtype=info.client_termtype if info is not None else "",
        bell=settings.notify.bell,
    )
    lines = ["Channels"]
    if not term_allows_cues(env):  # docs/design.md#guard, the part not about this process
        lines.append(
            f"  cues: off: TERM is {'dumb' if term else 'not set'}; cuewrap is a pure passthrough"
        )
        return lines
    if not settings.cues.enabled:
        lines.append(
            f"  cues: start off (cues.enabled = false, {_origin(settings, 'cues.enabled')});"
            " /cue on in Pi turns them on, with these channels:"
        )
    else:
        lines.append("  cues: on")
    for name, used, why in _channels(settings, env, choice, extra, program, plan):
        lines.append(f"  {name:<21} {_yes(used):<3}  {why}")
    return lines + _plan_lines(plan)


def _where_lines(
    settings: Settings,
    env: Mapping[str, str],
    choice: Choice,
    info: TmuxInfo | None,
    extra: TmuxExtra | None,
    program: str,
) -> list[str]:
    """The combination (SSH, tmux, terminal): what will happen, and what to change."""
    focus = extra.focus_events if extra is not None else ""
    where = Where(
        ssh=any(env.get(v) for v in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT")),
        tmux=bool(env.get("TMUX")),
        tmux_version=info.version if info is not None else "",
        focus_events={"on": True, "off": False}.get(focus),
        passthrough=None if info is None else info.allow_passthrough in (None, "on", "all"),
        terminal=identify_terminal(env, info)[0],
        idle_after=settings.presence.idle_after,
        terminal_notifications=choice.protocol != "off",
        desktop=desktop_available(env, settings.notify.desktop)[0],
        command=settings.notify.command is not None,
        program=program,
    )
    lines = [f"  {line}" for line in situation(where)]
    found = fixes(where)
    lines += [f"  to improve: {fix}" for fix in found] or ["  nothing to change here"]
    return lines


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


def _status_fate(answers: Answers) -> str:
    """What happens to Pi's and a program's own OSC 7501 reports (docs/generic-mode.md)."""
    if answers.program_status:
        return "passed on to the terminal (it answered the query); cuewrap reads them too"
    return "taken out (the terminal did not answer the query); cuewrap reads them"


def _answers_line(answers: Answers) -> str:
    said = f"XTVERSION {answers.version}" if answers.version else "no XTVERSION answer"
    if answers.osc99 is not None:
        said += f"; OSC 99 query: {_show(answers.osc99, 120)}"
    if answers.program_status:
        said += "; speaks the Program Status Protocol (OSC 7501)"
    if not answers.complete:
        said += " (no DA1 answer in time: the terminal may not have answered everything)"
    return said


def _plan_lines(plan: Plan) -> list[str]:
    """The channel plan: which way a cue reaches the desktop, and why."""
    lines = [f"  desktop popup: {plan.why}"]  # the reason begins with the path
    if plan.duplicates:
        lines.append(
            "    duplicates: notify.terminal and notify.desktop are both set on; set one of"
            " them to auto for one popup per cue"
        )
    if plan.terminal:
        state = "yes" if plan.can_close else "no"
        lines.append(f"  closing the terminal's notification on return: {state} ({plan.close_why})")
    return lines


def _channels(
    settings: Settings,
    env: Mapping[str, str],
    choice: Choice,
    extra: TmuxExtra | None,
    program: str = "Pi",
    plan: Plan | None = None,
) -> Iterator[tuple[str, bool, str]]:
    """(channel, used, why) for each channel."""
    n = settings.notify
    # title marks
    src = _origin(settings, "notify.title_marks")
    if n.title_marks:
        pane = extra is not None and extra.set_titles == "off"
        where = "; in the pane title (tmux set-titles is off)" if pane else ""
        if tab_title(env, read_small) is not None:
            where = "; Konsole's tab title format is %w while it runs (OSC 30), yours back after"
        yield (
            "title marks",
            True,
            f"notify.title_marks = true ({src}): [?] [✓] [!] [-] before {program}'s title (OSC 2)"
            f"{where}; your title saved and restored (CSI 22;0 t / 23;0 t)",
        )
    else:
        yield "title marks", False, f"notify.title_marks = false ({src})"
    # terminal notification
    if choice.protocol == "off":
        yield "terminal notification", False, choice.reason
    elif plan is not None and not plan.terminal:
        yield "terminal notification", False, f"{choice.protocol} not sent: one popup per cue"
    else:
        wrapped = " in tmux passthrough" if choice.tmux_passthrough else ""
        yield (
            "terminal notification",
            True,
            f"{choice.protocol}{wrapped}: {choice.reason} (never confirmed by the terminal)",
        )
    # desktop
    on, why = desktop_available(env, n.desktop)
    if on and plan is not None and not plan.desktop:
        on, why = False, f"not sent: one popup per cue ({why})"
    elif on:
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
    if n.bell and plan is not None and not plan.bell:
        yield "bell", False, f"{plan.bell_why} ({src})"
    elif n.bell:
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
