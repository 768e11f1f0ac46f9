"""A sequence decided at a chunk's end and still open (``term/tracker.py``): a clipboard
sequence passed or dropped, or a DCS / APC removed from content, read to its end across the
chunks that follow.

The tracker decides it once, where its header is complete; from then on it only has to find
its end: BEL or ST for an OSC, ST for a DCS / APC (BEL does not end those), or what aborts any
of them (CAN, SUB, an ESC not followed by ``\\``). An ESC as the last byte of a chunk may be
the start of ST: :attr:`OpenSequence.esc` says so until the next byte comes. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cuewrap.term.clipboard import ClipboardSequence, GuardedSequence, clip_event
from cuewrap.term.content import CONTENT_WHATS
from cuewrap.term.grammar import ESC, OSC_STOP

_STR_STOP = re.compile(rb"[\x18\x1a\x1b]")  # what ends a DCS / APC (BEL does not)

GOES_ON = 0  # how an open sequence's chunk ends (OpenSequence.end_in)
ENDED = 1
CUT_BY_ESC = 2


@dataclass(slots=True)
class OpenSequence:
    """One open sequence: ``passing`` to the host or dropped, its ``what`` (``osc52``, a
    clipboard kind, or a content kind), whether it ``read`` the clipboard, its ``size`` so
    far, whether its last byte so far is an ESC (``esc``)."""

    passing: bool
    read: bool
    what: str
    size: int
    esc: bool
    stop: re.Pattern[bytes] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.stop = _STR_STOP if self.what in CONTENT_WHATS else OSC_STOP

    def event(self) -> ClipboardSequence | GuardedSequence:
        """What it was, now that it ended."""
        if self.what in CONTENT_WHATS:  # a DCS / APC removed from content (term/content.py)
            return GuardedSequence(self.what, self.size)
        return clip_event(self.read, self.passing, self.size, self.what)

    def end_in(self, data: bytes) -> tuple[int, int]:
        """Where in ``data`` (not empty; no ESC of its own pending before it) it ends: the
        index after it and how — :data:`GOES_ON` (the index is the length, less an ESC at the
        very end that may begin its ST: :attr:`esc` is then set), :data:`ENDED` (BEL, ST, CAN
        or SUB: the host is in ground after it), or :data:`CUT_BY_ESC` (an ESC not followed by
        ``\\``: it ends before that ESC, which begins what follows; a host it passed to is
        still inside it)."""
        m = self.stop.search(data)
        if m is None:
            self.size += len(data)
            return len(data), GOES_ON
        t = m.start()
        if data[t] == ESC:
            if t + 1 == len(data):  # held back until it is known to be ST or not
                self.size += t
                self.esc = True
                return t, GOES_ON
            if data[t + 1] != 0x5C:
                self.size += t
                return t, CUT_BY_ESC
            end = t + 2
        else:
            end = t + 1
        self.size += end
        return end, ENDED
