"""What the relay tells the cue side: one typed union, one translation to facts, one log record.

The relay learns these from the two byte filters (``term.focus`` on the input, ``term.tracker``
on the output) and from the child's exit. Only some of them are facts for the engine; the
others are worth a line in the decision log. No record holds the child's title itself (it may
name the project, the task or a file): only its length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.childqueries import ChildQuery
from cuewrap.term.focus import FocusReport, HostStatusReply
from cuewrap.term.notices import ChildNotification
from cuewrap.term.statusguard import StatusQuery
from cuewrap.term.tracker import (
    Bell,
    FocusMayBeOff,
    ModeChange,
    OutputEvent,
    TitleChange,
)

if TYPE_CHECKING:
    from cuewrap.facts import Fact


@dataclass(frozen=True)
class KeysRead:
    """The user typed (input other than focus reports)."""


@dataclass(frozen=True)
class ChildExited:
    code: int | None
    signal: int | None


@dataclass(frozen=True)
class JobChange:
    """The pair stopped (to the user's shell) or continued (docs/design.md#real-environments)."""

    state: str  # "stopped" | "continued"


@dataclass(frozen=True)
class GuardFellBack:
    """The output tracker failed: the output passes through the fallback guard
    (``term.fallback``), which removes the clipboard class and, with ``outside``, the
    notification, status and title classes, the program's own among them."""

    clipboard: bool
    outside: bool

    def says(self) -> str:
        """What it means, for the log and /cue."""
        classes = []
        if self.clipboard:
            classes.append("clipboard")
        if self.outside:
            classes.append("notification, status and title")
        return (
            "the output tracker failed: the program's output passes through a fallback that"
            f" removes every {' and '.join(classes)} sequence (it cannot tell the program's own)"
        )


@dataclass(frozen=True)
class Provenance:
    """Pi mode with the bridge (docs/terminal-guard.md, "Whose sequence is it"): the
    extension's mark reached the output (``marked``: from there on every sequence in the stream
    is content Pi draws, Pi's own come through the bridge), or Pi's first frame began without
    it (``no_mark``: the frame rule stays); or an own write was refused (``refused``, with
    ``why``) or dropped because the output tracker is gone (``dropped``); or the bridge that
    carried Pi's own writes ended while Pi runs (``lost``, with ``why``: the frame rule again,
    ``wiring/bridgewatch.py``) and a new one said hello (``restored``: content again)."""

    state: str
    why: str = ""


RelayEvent = (
    FocusReport
    | HostStatusReply
    | TerminalAnswer
    | KeysRead
    | ChildExited
    | JobChange
    | GuardFellBack
    | Provenance
    | OutputEvent
)
"""Input (focus filter, the host terminal's answers to cuewrap's query), typing, the child's
exit, job control, and what the output tracker reports."""


def to_fact(event: RelayEvent) -> Fact | None:
    """The fact an event is for the engine, or None (the event is only logged)."""
    # here, not at the top: the relay imports this module while the child boots, and all the
    # facts are needed only by the cue side (docs/architecture.md#start-up-the-child-first)
    from cuewrap import facts as F

    if isinstance(event, F.ProgramStatus | F.ChildProgress):
        return event
    if isinstance(event, FocusReport):
        return F.Presence("focused" if event.direction == "in" else "away")
    if isinstance(event, KeysRead):
        return F.Keystroke()
    if isinstance(event, ChildExited):
        return F.ChildExit(event.code, event.signal)
    if isinstance(event, JobChange):  # for the session's state (stopped); no cue of its own
        return F.JobState(event.state == "stopped")
    # the child source (docs/design.md#generic-mode); Pi mode only records it
    if isinstance(event, Bell):
        return F.ChildBell()
    if isinstance(event, ChildNotification):
        return F.ChildNotice(event.protocol, event.title, event.body, event.consumed)
    return None


def record(event: RelayEvent) -> tuple[str, dict[str, object]] | None:
    """The decision-log record of an event that is not a fact: ``(kind, fields)``, or None."""
    if isinstance(event, TitleChange):
        return "child_title", {"length": len(event.title)}
    if isinstance(event, ModeChange):
        return "child_mode", {"mode": event.mode, "on": event.on}
    if isinstance(event, JobChange):
        return "job", {"state": event.state}
    if isinstance(event, FocusMayBeOff):
        return "focus_reasserted", {"why": event.why}
    if isinstance(event, StatusQuery):  # the relay answered it (docs/generic-mode.md)
        return "status_query", {"answered": True, "taken_out": event.cut}
    if isinstance(event, ChildQuery):  # the relay answered it (term/childqueries.py)
        return "child_query", {"query": event.kind, "answered": True, "taken_out": event.cut}
    if isinstance(event, GuardFellBack):
        return "guard_fallback", {
            "clipboard": event.clipboard,
            "outside": event.outside,
            "note": event.says(),
        }
    if isinstance(event, Provenance):
        fields: dict[str, object] = {"state": event.state}
        if event.why:
            fields["why"] = event.why
        return "provenance", fields
    if isinstance(event, HostStatusReply):
        return "host_status_reply", {"note": "host answers OSC 7501: reports forwarded"}
    return None
