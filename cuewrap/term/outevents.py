"""What the output tracker reports (``term/tracker.py``): the events of its scan, in stream
order, each keyed by its position in the chunk while the scan runs (:data:`Events`)."""

from __future__ import annotations

from dataclasses import dataclass

from cuewrap.factbase import ChildProgress, ProgramStatus  # not all facts: start-up cost
from cuewrap.term.childqueries import ChildQuery
from cuewrap.term.clipboard import ClipboardSequence, GuardedSequence
from cuewrap.term.notices import ChildNotification
from cuewrap.term.statusguard import StatusQuery


@dataclass(frozen=True)
class ModeChange:
    """``CSI ? Pm h`` (on) / ``CSI ? Pm l`` (off), one per parameter."""

    mode: int
    on: bool


@dataclass(frozen=True)
class TitleChange:
    """``OSC 0`` / ``OSC 2`` from the child (UTF-8 decoded with replacement, C0 controls
    left out as terminals do). ``controls``: it carried control characters (C0, DEL or C1):
    not a title a program writes for itself; cuewrap composes no mark onto it."""

    title: str
    controls: bool = False


@dataclass(frozen=True)
class Bell:
    """A bare BEL in ground state (not an OSC terminator)."""


@dataclass(frozen=True)
class FocusMayBeOff:
    """With ``own_focus``: the host's focus reporting may be off now (docs/design.md#presence): the
    child reset the terminal (``ris``: ``ESC c``, ``decstr``: ``CSI ! p``), or turned mode 1004 off
    in a way that could not be taken out of the stream (``1004``). cuewrap turns it on again."""

    why: str


OutputEvent = (
    ModeChange
    | TitleChange
    | Bell
    | ProgramStatus
    | ChildProgress
    | ChildNotification
    | FocusMayBeOff
    | ClipboardSequence
    | GuardedSequence
    | StatusQuery
    | ChildQuery
)

Events = list[tuple[int, OutputEvent]]  # a chunk's events while it is scanned, by position
