"""The OSCs the output tracker reads (``term/tracker.py``), by their number: the window title
(OSC 0 / 2), ConEmu's progress (OSC 9 ; 4), Pi's program status (OSC 7501: what it becomes is
``term/statusguard.py``'s to say), the child's notifications (OSC 9 / 777 / 99:
``term/noticeguard.py``); inside a frame the child draws, or posing as one of cuewrap's marks,
an OSC is content (the clipboard guard removes it whole: ``term/clipguard.py``). It works on the
scan's shared state (``term/scanstate.py``)."""

from __future__ import annotations

import re
from typing import NamedTuple

from cuewrap.factbase import ChildProgress
from cuewrap.term.clipboard import guarded_what
from cuewrap.term.clipguard import OSC_C0, ClipGuard
from cuewrap.term.grammar import ESC, OSC_STOP
from cuewrap.term.outevents import Events, TitleChange
from cuewrap.term.scanstate import CAP, NEUTRAL, OPEN_OSC, Cuts, ScanState
from cuewrap.term.statusguard import CUT_NEUTRAL

_TITLE_CONTROLS = re.compile("[\x7f-\x9f]")  # DEL and C1 in a decoded title
_PROGRESS = re.compile(rb"[0-4]")  # OSC 9 ; 4 ; state: 0 off, 1-2 value, 3 busy, 4 paused


class Osc(NamedTuple):
    """One complete OSC read: at ``j`` .. ``end`` of ``work`` (the chunk, new bytes from
    ``base`` on), its Ps and the rest of its content (C0 controls removed; ``had_c0``: there
    were some)."""

    work: bytes
    j: int
    end: int
    base: int
    ps: bytes
    rest: bytes
    had_c0: bool


_new = tuple.__new__  # Osc(...) runs the named tuple's Python-level __new__: slower


class OscGuard:
    """Every complete OSC but hyperlinks (:meth:`read`), on the tracker's state ``s``; what is
    a clipboard sequence or content goes to ``clipg``."""

    def __init__(self, s: ScanState, clipg: ClipGuard) -> None:
        self.s = s
        self.clipg = clipg

    def read(
        self,
        work: bytes,
        j: int,
        base: int,
        events: Events,
        cuts: Cuts,
    ) -> None:
        m = OSC_STOP.search(work, j + 2)
        if m is None:
            return
        t = m.start()
        term = work[t]
        if term == 0x07:
            end = t + 1
        elif term == ESC and work[t + 1 : t + 2] == b"\\":
            end = t + 2
        else:
            if self.clipg.policy is not None or self.s._guard:  # a terminal may take it as complete
                self.clipg.osc(work, j, j + 2, base, events, cuts)
            return  # aborted (CAN, SUB, ESC not followed by "\"), or unfinished
        if end - j > CAP + 1:
            if self.clipg.policy is not None or self.s._guard:
                self.clipg.osc(work, j, j + 2, base, events, cuts)
            return
        if j < base and work.startswith(OPEN_OSC, j):
            return  # the stand-in for an OSC released and reported before: never again
        content = work[j + 2 : t]
        had_c0 = OSC_C0.search(content) is not None
        if had_c0:
            content = OSC_C0.sub(b"", content)
        ps, semi, rest = content.partition(b";")
        guarded = guarded_what(content)  # as any terminal reads its number (term/oscnum.py)
        if guarded is not None and self.s.framed(work, j):
            # inside a frame the child draws: content it renders, never a fact
            if self.s._guard and j >= base:
                self.clipg.osc(work, j, j + 2, base, events, cuts)  # removed whole
                return
            if self.clipg.policy is not None:  # another terminal's reading may be a clipboard one
                seen = len(events)
                self.clipg.osc(work, j, j + 2, base, events, cuts)
                if len(events) > seen:
                    return  # a clipboard sequence (52ltitle): that alone, as between frames
            if guarded[0] == "osc0" or guarded[0] == "osc2":
                title = guarded[1].decode("utf-8", "replace")
                self.s.title = title
                events.append((j, TitleChange(title, True)))  # never a mark composed onto it
            return
        if (
            guarded is not None
            and self.clipg.marked_titles
            and self.s._guard
            and j >= base
            and self.clipg.poses(work[j:t], True)
        ):
            self.clipg.as_content(work, j, base, events, cuts)  # posing as cuewrap's mark
            return
        handler = _OSC_HANDLERS.get(ps) if semi else None
        if handler is not None:
            handler(self, _new(Osc, (work, j, end, base, ps, rest, had_c0)), events, cuts)
        elif self.clipg.policy is not None:
            self.clipg.osc(work, j, j + 2, base, events, cuts)  # if it is a clipboard sequence

    # The OSCs read, by Ps (the table is _OSC_HANDLERS, after the class). Each gets
    # the complete OSC (``Osc``), the chunk's events and its cuts to add to.

    def _title(self, o: Osc, events: Events, cuts: Cuts) -> None:
        """OSC 0 / 2: the window title."""
        title = o.rest.decode("utf-8", "replace")
        self.s.title = title
        controls = o.had_c0 or _TITLE_CONTROLS.search(title) is not None
        events.append((o.j, TitleChange(title, controls) if controls else TitleChange(title)))

    def _osc_9(self, o: Osc, events: Events, cuts: Cuts) -> None:
        """OSC 9: ConEmu's progress (``9 ; 4 ; state``), else a notification."""
        if o.rest[:2] != b"4;":
            self._notice(o, events, cuts)
            return
        state = _PROGRESS.match(o.rest, 2)
        if state is not None and int(state.group()) != self.s.progress:
            self.s.progress = int(state.group())  # reported on change only (Pi repeats it)
            events.append((o.j, ChildProgress(self.s.progress)))

    def _status(self, o: Osc, events: Events, cuts: Cuts) -> None:
        """OSC 7501: a program status report, or the child's query; what becomes of it is the
        status guard's to say (``term/statusguard.py``)."""
        guard = self.s.status
        fresh = o.j >= o.base
        if o.rest == b"?" and guard.answer_query:
            cut = fresh and self.s.removable_at(o.work, o.j)
            if cut:
                cuts.append((o.j, o.end))
            events.append((o.j, guard.query(cut)))
            return
        status, verdict = guard.report(
            o.rest, o.work[o.j : o.end], fresh, lambda: self.s.removable_at(o.work, o.j)
        )
        if status is not None:
            events.append((o.j, status))
        if verdict:
            cuts.append((o.j, o.end))
            if verdict == CUT_NEUTRAL:
                self.s._reps[o.j] = NEUTRAL

    def _notice(self, o: Osc, events: Events, cuts: Cuts) -> None:
        """OSC 9 / 777 / 99: the child's own notification, or kitty's query; what becomes of it
        is the notice guard's to say (``term/noticeguard.py``)."""
        event, cut = self.s.notices.read(
            o.ps, o.rest, lambda: o.j >= o.base and self.s.removable_at(o.work, o.j)
        )
        if cut:
            cuts.append((o.j, o.end))
        if event is not None:
            events.append((o.j, event))


_OSC_HANDLERS = {
    b"0": OscGuard._title,
    b"2": OscGuard._title,
    b"9": OscGuard._osc_9,
    b"7501": OscGuard._status,
    b"777": OscGuard._notice,
    b"99": OscGuard._notice,
}
