"""Every relay event, read in one place: its decision-log record, its fact for the engine,
and what the cue side does with it besides (``EVENTS``, one row per event type).

The relay reports what it saw as one typed union (``relay/events.py``: input, typing, the
child's exit, job control, and what the output tracker found); the controller reads each by
its row (``Controller.relay_event``), in this order: ``first`` (True: it took the event, and
nothing more is done with it: a ``blocked`` report held for the screen, focus reports that
tmux merges, the keys told to the parts), then the record, then the fact stepped, then
``then``. Only some events are facts; the others are worth a line in the decision log. No
record holds the child's title itself (it may name the project, the task or a file): only
its length.

The lookup is by the event's exact type (the union's members are final classes), and every
member has its row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from cuewrap import facts as F
from cuewrap.deliver.title import MARKED
from cuewrap.relay.events import (
    ChildExited,
    GuardFellBack,
    JobChange,
    KeysRead,
    Provenance,
    RelayEvent,
)
from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.childqueries import ChildQuery
from cuewrap.term.clipboard import ClipboardSequence, GuardedSequence
from cuewrap.term.focus import FocusReport, HostStatusReply
from cuewrap.term.notices import ChildNotification
from cuewrap.term.outevents import Bell, FocusMayBeOff, ModeChange, TitleChange
from cuewrap.term.sequences import MODE_FOCUS
from cuewrap.term.statusguard import StatusQuery

if TYPE_CHECKING:
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine import Event
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.wiring.blocked import BlockedCheck
    from cuewrap.wiring.cuepage import CuePage


class Reader(Protocol):
    """What a row's reactions reach of the cue side (the controller)."""

    log: DecisionLog
    delivery: Delivery
    bridge: BridgeServer | None
    tmux: TmuxSide | None
    blocked: BlockedCheck | None
    page: CuePage  # /cue's (it says what guards the output once its tracker failed)
    pi: bool  # Pi mode
    on_key: tuple[Callable[[], None], ...]  # the parts that hear a key, in order

    def fact(self, fact: Event) -> None: ...

    def tell_focus(self) -> None: ...

    def terminal_answer(self, answer: TerminalAnswer | None) -> None: ...


Fields = dict[str, object]


class Reading(NamedTuple):
    """One event type's row."""

    record: Callable[[Any], tuple[str, Fields]] | None = None  # its decision-log record
    fact: Callable[[Any], Event] | None = None  # its fact for the engine
    first: Callable[[Reader, Any], bool] | None = None  # before: True when it took the event
    then: Callable[[Reader, Any], None] | None = None  # after its record and its step


IGNORED = Reading()  # an event of no known type: nothing (every member of the union has a row)


def read(c: Reader, event: RelayEvent, row: Reading) -> None:
    """The rest of ``event``'s row, once ``first`` did not take it: its record, its fact
    stepped, then ``then``."""
    if row.record is not None:
        kind, fields = row.record(event)
        c.log.write(kind, **fields)
    if row.fact is not None:
        c.fact(row.fact(event))
    if row.then is not None:
        row.then(c, event)


def to_fact(event: RelayEvent) -> Event | None:
    """The fact an event is for the engine, or None (the event is only logged)."""
    make = EVENTS.get(event.__class__, IGNORED).fact
    return make(event) if make is not None else None


def record(event: RelayEvent) -> tuple[str, Fields] | None:
    """The decision-log record of an event that is not a fact: ``(kind, fields)``, or None."""
    make = EVENTS.get(event.__class__, IGNORED).record
    return make(event) if make is not None else None


# -- the reactions -------------------------------------------------------------------------
def _typed(c: Reader, event: KeysRead) -> bool:
    """The user typed (one event per read of their input; the frequent one, straight
    through): each part that cares is told, in the order fixed at construction; the key
    window steps the ``Keystroke``, at most one a second."""
    for tell in c.on_key:
        tell()
    return True


def _blocked_held(c: Reader, event: F.ProgramStatus) -> bool:
    """An OSC 7501 report: without the bridge, a ``blocked`` one waits for the screen to show
    Pi's dialog (``wiring.blocked``); the others go on at once."""
    if c.blocked is None:
        return False
    try:
        return c.blocked.offer(event)
    except Exception as exc:  # fail closed for blocked, open for the others
        c.log.error("blocked_check", exc)
        return event.state == "blocked"


def _answered(c: Reader, event: TerminalAnswer) -> bool:
    c.terminal_answer(event)
    return True


def _presence(event: FocusReport) -> F.Presence:
    return F.Presence("focused" if event.direction == "in" else "away")


def _to_tmux(c: Reader, event: FocusReport) -> bool:
    """Inside tmux a focus report is merged with tmux's view of the pane (which steps the
    presence it makes of both)."""
    state = _presence(event).state if c.tmux is not None else "unknown"
    if c.tmux is None or state == "unknown":
        return False
    c.tmux.focus(state)
    return True


def _fell_back(c: Reader, event: GuardFellBack) -> None:
    c.page.fell_back(event.says())  # /cue says it too


def _title(c: Reader, event: TitleChange) -> None:
    # Pi's own title is "π - …": one that begins with a mark is never an inner cuewrap's
    # (only generic mode can wrap one) but content posing as cuewrap's mark
    # (docs/terminal-guard.md): never marked, never put back
    posing = c.pi and event.title.startswith(MARKED)
    c.delivery.child_title(event.title, event.controls or posing)


def _mode(c: Reader, event: ModeChange) -> None:
    if event.mode == MODE_FOCUS and event.on:  # the child wants to be told: now
        c.tell_focus()


def _translated(c: Reader, event: ChildNotification) -> bool:
    if event.consumed:
        c.log.write(
            "translation",
            source=event.protocol,
            terminal=c.delivery.terminal_choice.protocol,
            desktop=c.delivery.desktop_on,
            note="the child's notification was taken out and is re-emitted",
        )
    return False


def _continued(c: Reader, event: JobChange) -> bool:
    if event.state == "continued":  # the shell had the terminal meanwhile
        c.delivery.reapply_mark()
        c.delivery.reapply_progress()
    return False


def _drained(c: Reader, event: ChildExited) -> bool:
    if c.bridge is not None:  # what Pi said before it died comes first
        c.bridge.drain_all()
    return False


# -- the records ---------------------------------------------------------------------------
def _provenance(event: Provenance) -> tuple[str, Fields]:
    fields: Fields = {"state": event.state}
    if event.why:
        fields["why"] = event.why
    return "provenance", fields


def _wall_time() -> str:
    """The wall-clock time for /cue's "last removed at" (the engine reads no clock)."""
    import time

    return time.strftime("%H:%M:%S", time.localtime())


EVENTS: dict[type, Reading] = {
    # input: the user typed; a focus report; the host's answers to cuewrap's query
    KeysRead: Reading(fact=lambda e: F.Keystroke(), first=_typed),
    FocusReport: Reading(fact=_presence, first=_to_tmux),
    TerminalAnswer: Reading(first=_answered),
    HostStatusReply: Reading(
        record=lambda e: (
            "host_status_reply",
            {"note": "host answers OSC 7501: reports forwarded"},
        ),
    ),
    # the child: its exit, job control (for the session's state, stopped; no cue of its own)
    ChildExited: Reading(fact=lambda e: F.ChildExit(e.code, e.signal), first=_drained),
    JobChange: Reading(
        record=lambda e: ("job", {"state": e.state}),
        fact=lambda e: F.JobState(e.state == "stopped"),
        first=_continued,
    ),
    # the output tracker: the program's own reports; the child source
    # (docs/design.md#generic-mode; Pi mode only records it)
    F.ProgramStatus: Reading(fact=lambda e: e, first=_blocked_held),
    F.ChildProgress: Reading(fact=lambda e: e),
    Bell: Reading(fact=lambda e: F.ChildBell()),
    ChildNotification: Reading(
        fact=lambda e: F.ChildNotice(e.protocol, e.title, e.body, e.consumed), first=_translated
    ),
    TitleChange: Reading(record=lambda e: ("child_title", {"length": len(e.title)}), then=_title),
    ModeChange: Reading(record=lambda e: ("child_mode", {"mode": e.mode, "on": e.on}), then=_mode),
    FocusMayBeOff: Reading(record=lambda e: ("focus_reasserted", {"why": e.why})),
    # answered by the relay (docs/generic-mode.md, term/childqueries.py)
    StatusQuery: Reading(record=lambda e: ("status_query", {"answered": True, "taken_out": e.cut})),
    ChildQuery: Reading(
        record=lambda e: ("child_query", {"query": e.kind, "answered": True, "taken_out": e.cut})
    ),
    # the terminal guard (docs/terminal-guard.md): the engine logs, counts and says what was
    # decided (``engine/guard.py``), stamped with the wall-clock time
    ClipboardSequence: Reading(
        fact=lambda e: F.GuardDecided(
            "clipboard", e.what, e.passed, e.size, e.read, e.why, _wall_time()
        )
    ),
    GuardedSequence: Reading(  # a title, notification or status report inside a frame
        fact=lambda e: F.GuardDecided("sequences", e.what, False, e.size, at=_wall_time())
    ),
    GuardFellBack: Reading(
        record=lambda e: (
            "guard_fallback",
            {"clipboard": e.clipboard, "outside": e.outside, "note": e.says()},
        ),
        then=_fell_back,
    ),
    Provenance: Reading(record=_provenance),
}
