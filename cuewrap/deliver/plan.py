"""The channel plan: which way a cue reaches the desktop, once (docs/architecture.md).

Pure: a function of the terminal choice (``terminal.Choice``), the two settings, whether
cuewrap's own desktop notification can be shown here, and what the terminal said about
itself. No I/O.

Many terminals turn their own notification OSC into a desktop notification (kitty: OSC 99;
ghostty, WezTerm, foot, iTerm2, Windows Terminal, VS Code; patched VTE and urxvt with its
extension: OSC 777). There cuewrap's D-Bus notification as well would be a second popup for
the same cue. With ``notify.terminal`` and ``notify.desktop`` both ``auto`` exactly one desktop
path is used:

| the terminal shows its own | where                 | the path                                   |
|----------------------------|-----------------------|--------------------------------------------|
| yes                        | outside tmux          | the terminal's (a click raises its window) |
| yes                        | in tmux, with desktop | cuewrap's (a click selects the tmux pane)  |
| maybe / no                 | desktop available     | cuewrap's (sure to show, once)             |
| any                        | no desktop (SSH, …)   | the terminal's                             |

Set explicitly: ``notify.desktop = on`` with a protocol in ``notify.terminal`` sends both
(the user asked; the plan says it duplicates where the terminal shows its own); one of them
explicit and the other ``auto``: the explicit one, and the other only where it is not a
second popup.

The bell (``notify.bell``) rings with each notification, except in a terminal whose bell is
itself a desktop popup while its window is not the active one (Konsole's "Bell in …"): there
it rings only when no other popup goes, so that a cue is still one popup.

Closing (a stale cue, docs/followups.md): only OSC 99 can close a terminal notification, and
only in kitty 0.36 and later (``p=close``); the terminal's own answer to the OSC 99 query
``p=?`` says so best, then its XTVERSION. Anything not known to support it gets no ``p=close``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cuewrap.deliver.terminal import Choice, Shows, bell_pops, terminal_shows

Path = Literal["terminal", "desktop", "both", "none"]
KITTY_CLOSE = (0, 36)  # the first kitty with OSC 99 p=close and the p=? query


@dataclass(frozen=True)
class Answers:
    """What the host terminal said about itself, in answer to cuewrap's start-up query."""

    version: str = ""  # XTVERSION, e.g. "kitty(0.26.5)", "XTerm(379)"
    osc99: str | None = None  # the OSC 99 p=? answer's key=value list; None: none came
    complete: bool = False  # the DA1 sentinel came back: no more answers are coming
    program_status: bool = False  # it answered the Program Status query (OSC 7501)

    def osc99_keys(self) -> dict[str, tuple[str, ...]]:
        """``a=focus,report:p=title,body,close`` -> {"a": ("focus", "report"), "p": (...)}."""
        keys: dict[str, tuple[str, ...]] = {}
        for part in (self.osc99 or "").split(":"):
            key, eq, values = part.partition("=")
            if eq and key:
                keys[key] = tuple(v for v in values.split(",") if v)
        return keys


@dataclass(frozen=True)
class Plan:
    terminal: bool  # cuewrap writes its terminal notification (OSC 777 / 9 / 99)
    desktop: bool  # cuewrap sends its own desktop notification (D-Bus; notify-py on macOS)
    path: Path  # what reaches the desktop: the terminal's popup, cuewrap's, both, neither
    why: str
    duplicates: bool  # two popups for one cue (both paths set on explicitly)
    shows: Shows  # the terminal shows its own notifications on the desktop
    can_close: bool  # cuewrap's terminal notification can be closed (OSC 99 p=close)
    close_why: str
    bell: bool = False  # cuewrap rings the bell with each notification (notify.bell)
    bell_why: str = ""  # why it rings or not


def kitty_version(version: str) -> tuple[int, ...] | None:
    """``kitty(0.26.5)`` -> (0, 26, 5); None for another terminal or no version."""
    m = re.match(r"kitty[( ]v?(\d+(?:\.\d+)*)", version.strip(), re.IGNORECASE)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def can_close(choice: Choice, answers: Answers, tmux_termtype: str = "") -> tuple[bool, str]:
    """Whether this terminal closes an OSC 99 notification (``p=close``), and why."""
    if choice.protocol != "osc99":
        return False, f"{choice.protocol} has no way to close a notification"
    if answers.osc99 is not None:
        if "close" in answers.osc99_keys().get("p", ()):
            return True, "the terminal lists p=close in its answer to the OSC 99 query"
        return False, "the terminal's answer to the OSC 99 query does not list p=close"
    version = answers.version or tmux_termtype
    kitty = kitty_version(version)
    if kitty is not None:
        if kitty >= KITTY_CLOSE:
            return True, f"{version}: kitty closes notifications since 0.36"
        return False, f"{version} has no p=close (it came in kitty 0.36): not sent"
    if choice.terminal == "kitty" and answers.complete:
        return False, "no answer to the OSC 99 query p=? (kitty before 0.36): no p=close sent"
    return False, "not known to support p=close (the terminal has not said so): not sent"


def _bell(setting: bool, terminal: str, path: Path) -> tuple[bool, str]:
    """Whether the bell rings with each notification: as ``notify.bell`` says, except in a
    terminal whose bell is a desktop popup of its own (Konsole) when a popup already goes."""
    if not setting:
        return False, "notify.bell = false"
    if bell_pops(terminal) and path != "none":
        return False, (
            f"notify.bell = true, not rung: a bell in {terminal} is a desktop popup of its own,"
            " and the cue has one already"
        )
    return True, "notify.bell = true: one BEL per notification"


def make_plan(
    choice: Choice,
    terminal_setting: str,
    desktop_setting: str,
    desktop_on: bool,
    desktop_why: str,
    *,
    in_tmux: bool,
    answers: Answers | None = None,
    tmux_termtype: str = "",
    bell: bool = False,
) -> Plan:
    """The channel plan (see the module's doc). ``bell``: ``notify.bell``."""
    answers = answers or Answers()
    shows = terminal_shows(choice.terminal)
    closes, close_why = can_close(choice, answers, tmux_termtype)
    name = choice.terminal if choice.terminal != "unknown" else "this terminal"
    own = {
        "yes": f"{name} shows its own notifications on the desktop",
        "maybe": f"{name} may show its own notifications on the desktop",
        "no": f"{name} shows no desktop notification of its own",
    }[shows]

    def plan(terminal: bool, desktop: bool, why: str) -> Plan:
        popup_t = terminal and shows != "no"
        path: Path = (
            "both" if popup_t and desktop else
            "terminal" if popup_t else
            "desktop" if desktop else
            "none"
        )  # fmt: skip
        dup = terminal and desktop and shows != "no"
        if dup:
            why += f"; {own}: every cue may pop up twice"
        rings, bell_why = _bell(bell, choice.terminal, path)
        return Plan(
            terminal, desktop, path, why, dup, shows, closes and terminal, close_why,
            rings, bell_why,
        )  # fmt: skip

    if choice.protocol == "off":
        if desktop_on:
            why = f"cuewrap's desktop notification (no terminal OSC: {choice.reason})"
            return plan(False, True, why)
        return plan(False, False, f"none: {desktop_why}; {choice.reason}")
    if not desktop_on:
        where = "the terminal's own" if shows != "no" else "none"
        return plan(True, False, f"{where}: cuewrap's desktop notification is off ({desktop_why})")
    term_explicit = terminal_setting != "auto"
    desk_explicit = desktop_setting == "on"
    if term_explicit and desk_explicit:
        return plan(True, True, "both: notify.terminal and notify.desktop are both set on")
    if shows == "no":
        why = f"cuewrap's desktop notification: {own}"
        return plan(term_explicit, True, why)
    if term_explicit:
        why = f"the terminal's own (notify.terminal = {terminal_setting}): {own}"
        return plan(True, False, why)
    if desk_explicit:
        why = f"cuewrap's desktop notification (notify.desktop = on): {own}, so no terminal OSC"
        return plan(False, True, why)
    if shows == "maybe":
        why = f"cuewrap's desktop notification, sure to show once: {own}, so no terminal OSC"
        return plan(False, True, why)
    if in_tmux:
        why = (
            f"cuewrap's desktop notification (a click selects Pi's tmux pane): {own},"
            " so no terminal OSC"
        )
        return plan(False, True, why)
    closing = "it closes them" if closes else f"it cannot close them ({close_why})"
    why = f"the terminal's own (a click raises its window): {own}; {closing}"
    return plan(True, False, why)
