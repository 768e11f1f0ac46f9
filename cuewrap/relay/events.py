"""What the relay tells the cue side: one typed union.

The relay learns these from the two byte filters (``term.focus`` on the input, ``term.tracker``
on the output) and from the child's exit. What each becomes on the cue side (its log record,
its fact for the engine, what else is done with it) is read in one place, the event table
(``wiring/eventtable.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.focus import FocusReport, HostStatusReply
from cuewrap.term.outevents import OutputEvent


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
