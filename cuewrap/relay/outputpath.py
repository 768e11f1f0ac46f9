"""The output path: what happens to the child's output between the relay's read and its write,
without I/O (docs/architecture.md, "An output chunk").

The relay hands every chunk to :meth:`OutputPath.feed` and writes what comes back; it does
nothing else with the output. The path holds the byte filters and the rules that act on what
they find:

- the output tracker (``term/tracker.py``): modes, title, status, notifications, clipboard,
  the guard's cuts, the safe point;
- provenance (Pi mode with the bridge, ``term/provenance.py``): the extension's mark is taken
  out of the stream, and from it on the stream is content; Pi's own writes come through the
  bridge (:meth:`OutputPath.own`) and go out where the output is at rest;
- the reactions that belong to the bytes: the child's Program Status query answered on its
  input (:attr:`to_child`), focus reporting switched back on when the child turned it off
  while cuewrap owns it (:attr:`to_inject`), a clipboard sequence explained by the decisions.

A scan that raises (not expected: the filters are pure) leaves the session a plain passthrough:
:meth:`OutputPath.failed` gives the :class:`FallbackPath`, an object with the same interface
that guards what it still can (``term/fallback.py``) and says where the output is at rest
(``term/rest.py``). The relay swaps one for the other; it never asks which it has.

Both hand back what the tracker's :class:`~cuewrap.term.tracker.Scan` holds (``out``,
``events``, ``safe``); after a chunk with events, :attr:`to_child` and :attr:`to_inject` may
hold bytes, which the relay takes with :meth:`take_child` and :meth:`take_inject`.
:attr:`seen` is what the output tap (the screen) must read of the last chunk when it is not
the chunk itself (None): the chunk without the provenance mark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from cuewrap.relay.events import GuardFellBack, Provenance, RelayEvent
from cuewrap.term import sequences as seq
from cuewrap.term.childqueries import ChildQuery
from cuewrap.term.childqueries import answer as child_answer
from cuewrap.term.clipboard import ClipboardSequence
from cuewrap.term.outevents import FocusMayBeOff, ModeChange, OutputEvent
from cuewrap.term.statusguard import StatusQuery
from cuewrap.term.tracker import OutputTracker

if TYPE_CHECKING:
    from cuewrap.relay.decisions import OutputDecisions
    from cuewrap.term.provenance import MarkFinder

Report = Callable[[str, BaseException], None]  # where a part failed, and how (the log)
# what a path hands back for a chunk: the bytes for the host, the events in stream order, the
# safe point after them (usually the tracker's own Scan, unchanged)
Passed = tuple[bytes, Sequence[RelayEvent], bool]
NO_MARK = Provenance("no_mark")
MARKED = Provenance("marked")


class Path(Protocol):
    """What the relay knows of its output path (the tracker's, or the fallback)."""

    seen: bytes | None
    to_child: bytes
    to_inject: bytes
    held: bool
    telling: bool

    @property
    def safe(self) -> bool: ...
    @property
    def provenance(self) -> str: ...
    def feed(self, data: bytes) -> Passed: ...
    def own(self, data: bytes) -> Passed: ...
    def flush(self) -> bytes: ...
    def end(self) -> Passed: ...
    def take_child(self) -> bytes: ...
    def take_inject(self) -> bytes: ...
    def focus_lost(self) -> None: ...
    def typed(self) -> None: ...
    def tell_focus(self, focused: bool) -> bytes: ...
    def child_mode(self, mode: int) -> bool: ...
    def pass_status_on(self) -> bytes: ...
    def pass_held_status(self) -> bytes: ...
    def lose(self, why: str) -> list[RelayEvent]: ...
    def restore(self) -> list[RelayEvent]: ...
    def restore_sequence(self, leaving: bool) -> bytes: ...
    def resume_sequence(self) -> bytes: ...
    def failed(self, known: bool) -> tuple[Path, list[RelayEvent]]: ...


class _Marks:
    """Provenance, shared by both paths: the mark looked for until found or given up, and
    where the stream stands (``""`` before the mark or without a bridge, ``marked`` while the
    bridge carries Pi's own writes, ``lost`` once it ended without one)."""

    def __init__(self, finder: MarkFinder | None, report: Report) -> None:
        self.finder = finder
        self.report = report
        self.state = ""

    def look(self, data: bytes) -> tuple[bytes, bytes] | Provenance | None:
        """Where the mark is in ``data``: what to read before it and after it (the mark
        itself left out where it is whole in this chunk); ``NO_MARK`` when Pi's first frame
        began without it (then it is not looked for any more); None: not here."""
        finder = self.finder
        assert finder is not None
        try:
            at = finder.look(data)
            if at is None:
                if finder.gave_up(data):
                    self.finder = None
                    return NO_MARK
                return None
        except Exception as exc:  # pure and small: not expected; then no provenance
            self.finder = None
            self.report("provenance", exc)
            return None
        self.finder = None
        start, end = at
        # its head went out with the last chunk (start < 0): the rest too (a DCS, ignored)
        return (data[:start] if start >= 0 else data[:end]), data[end:]


class OutputPath:
    """The tracker's path (see the module docstring)."""

    def __init__(
        self,
        tracker: OutputTracker,
        *,
        decisions: OutputDecisions | None = None,
        mark: MarkFinder | None = None,
        owns_focus: bool = False,
        fallback: tuple[bool, bool] = (False, False),
        report: Report = lambda where, exc: None,
    ) -> None:
        """``decisions``: the tracker's notice and clipboard policies (a clipboard sequence is
        explained by them). ``mark``: Pi mode with the bridge: look for the extension's mark.
        ``owns_focus``: cuewrap enabled focus reporting (the child turning it off turns it
        back on). ``fallback``: what a failed tracker leaves guarded (``term.fallback``: the
        clipboard class, the classes that act outside the window)."""
        self.tracker = tracker
        self.decisions = decisions
        self._marks = _Marks(mark, report)
        self._owns_focus = owns_focus
        self._fallback_classes = fallback
        self._own: list[bytes] = []  # Pi's own writes waiting for the output to be at rest
        self.seen: bytes | None = None
        self.to_child = b""
        self.to_inject = b""
        self.held = False
        # the cue side tells the child the user's presence (``tell_focus``): False until it
        # does (the host's reports are forwarded as they come); then what the child was told
        # last (None again once the child turns mode 1004 off: told anew when it turns it on)
        self.telling = False
        self._told: bool | None = None

    @property
    def safe(self) -> bool:
        return self.tracker.safe

    @property
    def provenance(self) -> str:
        return self._marks.state

    # -- the output --------------------------------------------------------------------------
    def feed(self, data: bytes) -> Passed:
        """One chunk of the child's output: what to write, the events, the safe point. The
        usual chunk (no mark looked for, no events, no own write waiting) costs the tracker's
        scan and a few attribute reads."""
        self.seen = None
        if self._marks.finder is not None:
            found = self._marks.look(data)
            if found is NO_MARK:  # Pi's first frame without it: the frame rule stays
                out, events, safe = self._scan(data)
                return (out, [NO_MARK, *events], safe)
            if found is not None:
                return self._at_mark(found)  # type: ignore[arg-type]
        return self._scan(data)

    def _scan(self, data: bytes) -> Passed:
        tracker = self.tracker
        scan = tracker.feed(data)
        if scan[1]:
            self._react(scan[1])
        self.held = bool(tracker.held_bytes)  # a plain attribute: no call on the hot path
        if self._own and tracker.at_rest:
            return self._with_own(scan)
        return scan

    def _at_mark(self, found: tuple[bytes, bytes]) -> Passed:
        """The mark: what came before it read as before, the rest as content."""
        before, after = found
        first = self._scan(before) if before else None
        tracker = self.tracker
        tracker.content_from_now()
        tracker.status.hold_blocked = False  # Pi's own reports come through the bridge
        self._marks.state = "marked"
        rest = self._scan(after) if after else None
        self.seen = before + after
        out = (first[0] if first else b"") + (rest[0] if rest else b"")
        events: list[RelayEvent] = [*(first[1] if first else ()), MARKED]
        if rest is not None:
            events.extend(rest[1])
        return (out, events, tracker.safe)

    def _react(self, events: list[OutputEvent]) -> None:
        """What belongs to the bytes themselves, done here so the relay only writes."""
        for i, event in enumerate(events):
            if isinstance(event, FocusMayBeOff):
                if self._owns_focus:  # docs/design.md#presence: cuewrap owns the mode
                    self.to_inject += seq.FOCUS_REPORTING_ON
            elif isinstance(event, StatusQuery):
                # answered now: the host has not yet seen what followed the query (its DA1)
                self.to_child += seq.PROGRAM_STATUS_ANSWER
            elif isinstance(event, ChildQuery):  # cuewrap's to answer (term/childqueries.py)
                self.to_child += child_answer(event, self.child_mode(seq.MODE_FOCUS))
            elif isinstance(event, ModeChange):
                if event.mode == seq.MODE_FOCUS:
                    self._told = None  # told anew from the mode's next start
            elif isinstance(event, ClipboardSequence) and self.decisions is not None:
                events[i] = self.decisions.explain(event)  # why it passed or not

    def own(self, data: bytes) -> Passed:
        """Pi's own write, from the bridge (checked there: ``term.provenance``): read by the
        tracker as Pi's, never as content; what to write now (nothing while the output is not
        at rest: it goes after the next chunk that leaves it so)."""
        self._own.append(data)
        if self.tracker.at_rest:
            return self._with_own((b"", [], self.tracker.safe))
        return (b"", (), self.tracker.safe)

    def _with_own(self, scan: Passed) -> Passed:
        own, self._own = self._own, []
        out, events, safe = scan
        for data in own:
            more = self.tracker.feed_own(data)
            out += more.out
            if more.events:
                self._react(more.events)
                events = [*events, *more.events]
            safe = more.safe
        self.held = bool(self.tracker.held_bytes)
        return (out, events, safe)

    def flush(self) -> bytes:
        """Held bytes, released after a short quiet time (the relay's timer)."""
        rest = self.tracker.flush()
        self.held = bool(self.tracker.held_bytes)
        return rest

    def end(self) -> Passed:
        """The child's output ended: whatever is still held, then Pi's own writes that waited
        for the output to come to rest (Pi writes its last words through the bridge, as it
        exits); where the output ended inside a sequence they are dropped, never written into
        it."""
        tracker = self.tracker
        out = tracker.end()
        self.held = False
        if self._own and tracker.at_rest:
            return self._with_own((out, [], tracker.safe))
        events: list[RelayEvent] = []
        if self._own:
            self._own = []
            events.append(Provenance("dropped", "the output ended inside a sequence"))
        return (out, events, tracker.safe)

    def take_child(self) -> bytes:
        out, self.to_child = self.to_child, b""
        return out

    def take_inject(self) -> bytes:
        out, self.to_inject = self.to_inject, b""
        return out

    def focus_lost(self) -> None:
        """The focus filter failed: cuewrap no longer owns focus reporting."""
        self._owns_focus = False

    def typed(self) -> None:
        """The user typed: the decisions hear it (a clipboard write right after a key)."""
        if self.decisions is not None:
            self.decisions.typed()

    def tell_focus(self, focused: bool) -> bytes:
        """The focus report to tell the child (generic mode, a preset that asks): one when the
        child has mode 1004 on and was not told this already; b"" otherwise. From the first
        call on the relay no longer forwards the host's own reports (``telling``)."""
        self.telling = True
        if not self.child_mode(seq.MODE_FOCUS) or self._told is focused:
            return b""
        self._told = focused
        return seq.FOCUS_IN if focused else seq.FOCUS_OUT

    # -- what the cue side and the relay ask ----------------------------------------------------
    def child_mode(self, mode: int) -> bool:
        return mode in self.tracker.modes.on

    def pass_status_on(self) -> bytes:
        """The host terminal speaks the Program Status Protocol: the child's reports pass on;
        the one taken out before the answer came, for the host to be told the state it
        missed."""
        return self.tracker.status.pass_on()

    def pass_held_status(self) -> bytes:
        """The screen check confirmed the ``blocked`` report the tracker held (Pi mode under
        the frame rule): what to write to the host (nothing where it does not speak the
        protocol)."""
        return self.tracker.status.take_held()

    def lose(self, why: str) -> list[RelayEvent]:
        """The bridge that carried Pi's own writes ended while Pi runs: back to the frame
        rule (its screen check decides again). No event: there was no provenance to lose."""
        if self._marks.state != "marked":
            return []
        self._marks.state = "lost"
        self.tracker.content_off()
        self.tracker.status.hold_blocked = True
        return [Provenance("lost", why)]

    def restore(self) -> list[RelayEvent]:
        """A new bridge connection after a loss: content again, Pi's own writes through the
        bridge. No event: nothing was lost."""
        if self._marks.state != "lost":
            return []
        self._marks.state = "marked"
        self.tracker.content_from_now()
        self.tracker.status.hold_blocked = False
        return [Provenance("restored")]

    def restore_sequence(self, leaving: bool) -> bytes:
        """What undoes the modes the child left on; when ``leaving`` for good, also the
        status and the progress its last report left shown (see ``Reactions.restore_sequence``)."""
        tracker = self.tracker
        out = tracker.modes.restore_sequence()
        if leaving and tracker.status.shown:
            out += seq.PROGRAM_STATUS_CLEAR
        if leaving and tracker.progress:
            out += seq.PROGRESS_OFF
        return out

    def resume_sequence(self) -> bytes:
        """What re-applies the child's modes and title after a stop."""
        out = self.tracker.modes.reapply_sequence()
        if self.tracker.title is not None:
            out += seq.set_title(self.tracker.title)
        return out

    def failed(self, known: bool) -> tuple[Path, list[RelayEvent]]:
        """The tracker raised: the fallback from here on (``known``: the output was at rest
        where the tracker left it), and what to tell the cue side."""
        status_left = not self.tracker.status.consume  # its reports reached the host
        clipboard, outside = self._fallback_classes
        path = FallbackPath(
            self._marks, known=known, status_left=status_left, guard=self._fallback_classes
        )
        events: list[RelayEvent] = []
        if clipboard or outside:
            events.append(GuardFellBack(clipboard, outside))
        return path, events


class FallbackPath:
    """The path once the tracker failed: the fallback guard where classes are guarded, the
    rest watch for the safe point, the mark still taken out; nothing else is known."""

    def __init__(
        self, marks: _Marks, *, known: bool, status_left: bool, guard: tuple[bool, bool]
    ) -> None:
        from cuewrap.term.fallback import GuardFallback
        from cuewrap.term.rest import RestWatch

        self._marks = marks
        self._status_left = status_left
        clipboard, outside = guard
        self.fallback: GuardFallback | None = (
            GuardFallback(clipboard=clipboard, outside=outside) if clipboard or outside else None
        )
        # where the output stands, from where the tracker left it (inside something: not at
        # rest until the stream says where it is); None once this failed too
        self.rest: RestWatch | None = RestWatch(known=known)
        self._safe = known
        self.seen: bytes | None = None
        self.to_child = b""
        self.to_inject = b""
        self.held = False  # the fallback's held bytes go at the end (``end``)
        self.telling = False  # no modes are known: the host's reports are forwarded

    @property
    def safe(self) -> bool:
        return self._safe

    @property
    def provenance(self) -> str:
        return self._marks.state

    def feed(self, data: bytes) -> Passed:
        self.seen = None
        events: list[RelayEvent] = []
        if self._marks.finder is not None:
            found = self._marks.look(data)
            if isinstance(found, Provenance):
                events.append(found)
            elif found is not None:
                before, after = found
                self._marks.state = "marked"
                out = self._guarded(before) + self._guarded(after)
                self.seen = before + after
                return (out, [MARKED], self._safe)
        return (self._guarded(data), events, self._safe)

    def _guarded(self, data: bytes) -> bytes:
        if not data:
            return b""
        fallback = self.fallback
        if fallback is not None:
            try:
                data = fallback.feed(data)
            except Exception as exc:  # not expected (pure, small): nothing is left to guard
                self.fallback = None
                self._marks.report("fallback", exc)
        rest = self.rest
        if rest is not None:
            try:
                self._safe = rest.feed(data)
            except Exception as exc:  # not expected; then nothing is at rest
                self.rest = None
                self._safe = False
                self._marks.report("rest", exc)
        return data

    def own(self, data: bytes) -> Passed:
        """Pi's own write: dropped (the fallback would remove it anyway)."""
        return (b"", [Provenance("dropped", "the output tracker failed")], self._safe)

    def flush(self) -> bytes:
        return b""

    def end(self) -> Passed:
        return (self.fallback.flush() if self.fallback is not None else b"", (), self._safe)

    def take_child(self) -> bytes:
        return b""

    def take_inject(self) -> bytes:
        return b""

    def focus_lost(self) -> None:
        pass

    def typed(self) -> None:
        pass

    def tell_focus(self, focused: bool) -> bytes:
        return b""

    def child_mode(self, mode: int) -> bool:
        return False

    def pass_status_on(self) -> bytes:
        return b""

    def pass_held_status(self) -> bytes:
        return b""

    def lose(self, why: str) -> list[RelayEvent]:
        if self._marks.state != "marked":
            return []
        self._marks.state = "lost"
        return [Provenance("lost", why)]

    def restore(self) -> list[RelayEvent]:
        if self._marks.state != "lost":
            return []
        self._marks.state = "marked"
        return [Provenance("restored")]

    def restore_sequence(self, leaving: bool) -> bytes:
        return seq.PROGRAM_STATUS_CLEAR if leaving and self._status_left else b""

    def resume_sequence(self) -> bytes:
        return b""

    def failed(self, known: bool) -> tuple[Path, list[RelayEvent]]:
        return self, []  # it does not raise: each part's failure is handled where it is
