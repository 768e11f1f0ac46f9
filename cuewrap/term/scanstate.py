"""The state the output tracker's scan shares with its guards (``term/tracker.py``).

What a guard decides about one sequence depends on what the scan did before it in the same
chunk: a sequence cut earlier changes the host's state at every later position, and that state
decides whether the next one may be removed (:meth:`ScanState.state_before`, with ``_reps``
and ``_bare_cuts``). So the guards (``term/contentguard.py``, ``term/clipguard.py``, …) get this
state, not a copy: :class:`~cuewrap.term.tracker.OutputTracker` is a :class:`ScanState`, and
its fields stay plain attributes of the tracker, read on the hot path without a lookup more.

Fields (set by the tracker's constructor): ``_pend`` the released bytes of the unfinished
sequence at the end (<= :data:`CAP`), ``held_bytes`` the bytes held back (public: the relay
reads it after each chunk), ``_u8`` the last <= 3 bytes of ground text released, ``_safe`` a
safe point after them, ``_stream`` a clipboard or content sequence decided at a chunk end and
still open (``term/openseq.py``), ``_base`` the bytes of the chunk released before it,
``_reps`` what takes the place of each cut (by its start), ``_bare_cuts`` the cuts a bare ESC
ended (that ESC -> the cut's start), ``_frame0`` / ``_sync`` synchronized output at the chunk's
start / end, ``_guard`` the sequence guard on, ``_all_content`` all output counts as content.
"""

from __future__ import annotations

import re

from cuewrap.term.clipboard import CLIP, clip_head
from cuewrap.term.content import REMOVE, apc_class, dcs_class
from cuewrap.term.grammar import ESC, ESCB, seq_end, synthetic, u8_complete
from cuewrap.term.noticeguard import NoticeGuard
from cuewrap.term.openseq import OpenSequence
from cuewrap.term.statusguard import StatusGuard

CAP = 4096  # bytes kept of an unfinished sequence (and longest held OSC 7501 prefix)
NEUTRAL = b"\x1b\x18"  # ESC CAN: what a removed sequence's ESC did, then ground
OPEN_OSC = b"\x1b]\x7f"  # stands for an open OSC already released (never an event)
FRAME_ON = b"\x1b[?2026h"
FRAME_OFF = b"\x1b[?2026l"
ESC_HEAD = re.compile(rb"\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*+([\[P_])")  # a CSI / DCS / APC begins

Cuts = list[tuple[int, int]]  # ranges of the chunk taken out of what the host sees


class ScanState:
    """The scan's state, shared by the tracker and its guards; see the module docstring."""

    status: StatusGuard
    title: str | None
    progress: int | None
    notices: NoticeGuard
    _pend: bytes
    held_bytes: bytes
    _u8: bytes
    _safe: bool
    _stream: OpenSequence | None
    _base: int
    _reps: dict[int, bytes]
    _bare_cuts: dict[int, int]
    _frame0: bool
    _sync: bool
    _guard: bool
    _all_content: bool
    _content_base: bool

    def framed(self, work: bytes, j: int) -> bool:
        """Synchronized output (a frame being drawn) is on at ``j``: the last exact
        ``CSI ? 2026 h`` / ``l`` before it decides (how TUIs and Pi write them). Always, for a
        child that writes no sequence of its own (``content_only``)."""
        if self._all_content:
            return True
        on = work.rfind(FRAME_ON, 0, j)
        off = work.rfind(FRAME_OFF, 0, j)
        if on < 0 and off < 0:
            return self._frame0
        return on > off

    def state_before(self, work: bytes, pos: int) -> tuple[bool, bytes]:
        """(ground at ``pos``, last <= 3 bytes of ground text before ``pos``)."""
        cuts = self._bare_cuts
        if cuts and pos in cuts:  # right after a clipboard sequence taken out
            start = cuts[pos]
            return (True, b"") if start in self._reps else self.state_before(work, start)
        k = work.rfind(ESCB, 0, pos)
        if k < 0:  # nothing but text since the previous chunk
            tail = work[pos - 3 : pos] if pos >= 3 else (self._u8 + work[:pos])[-3:]
            return True, tail
        e = seq_end(work, k, pos)
        if e < 0:
            if self._guard and k >= self._base and self._content_cut(work, k, pos):
                # a DCS / APC that the content guard takes out (it runs after the other
                # sequences): what was before it, or ESC CAN in its place
                ground, tail = self.state_before(work, k)
                return True, tail if ground and u8_complete(tail) else b""
            return False, b""
        return True, work[max(e, pos - 3) : pos]

    def _content_cut(self, work: bytes, k: int, pos: int) -> bool:
        """The DCS / APC open at ``k`` is one the content guard removes, ended by a bare ESC at
        ``pos`` (not ST, not the chunk's last byte)."""
        if work[pos] != ESC or work[pos + 1 : pos + 2] in (b"\\", b""):
            return False
        h = ESC_HEAD.match(work, k)
        if h is None or work[h.end() - 1] == 0x5B or not self.framed(work, k):
            return False
        b = h.end() - 1
        classify = dcs_class if work[b] == 0x50 else apc_class
        return classify(work[b + 1 : pos], True)[0] == REMOVE

    def removable_at(self, work: bytes, j: int) -> bool:
        """A sequence at ``j`` can be taken out without changing what the host's parser sees
        around it: ground there, not inside a UTF-8 character."""
        ground, tail = self.state_before(work, j)
        return ground and u8_complete(tail)

    def pending(self, seq_open: bytes) -> None:
        """The chunk ends inside ``seq_open`` (released): kept, bounded, for the next chunk."""
        self._pend = seq_open if len(seq_open) <= CAP else synthetic(seq_open)
        self._u8 = b""
        self._safe = False

    def set_before(self, work: bytes, start: int) -> None:
        """The tracker's state for output released up to ``start`` (``start`` >= base)."""
        ground, tail = self.state_before(work, start)
        if ground:
            self._u8 = tail
            self._safe = u8_complete(tail)
        else:  # the sequence open before ``start`` was released: it is pending
            k = work.rfind(ESCB, 0, start)
            pend = work[k:start]
            if clip_head(pend, True)[0] == CLIP:
                pend = OPEN_OSC  # an OSC 52 that passed (and was reported): not again
            self._pend = pend if len(pend) <= CAP else synthetic(pend)
            self._u8 = b""
            self._safe = False

    def drop_from(self, work: bytes, start: int) -> tuple[int, bytes]:
        """A sequence from ``start`` on is dropped to its end: the output ends before it, in
        the state before it where taking it out changes nothing around it, else with ``ESC
        CAN`` in its place (what its ESC did, then ground)."""
        if self.removable_at(work, start):
            self.set_before(work, start)
            return start, b""
        self._u8 = b""
        self._safe = True
        return start, NEUTRAL

    def hold_from(self, work: bytes, k_last: int, base: int, n: int) -> int:
        """Where to start holding back a possible OSC 7501 report (or notification) at the end,
        or -1."""
        if (not self.status.active and not self.notices.active) or k_last < base:
            return -1
        start = -1
        could = self._could_remove
        if k_last == n - 1:  # a lone ESC: a report's ST, or the start of one
            k2 = work.rfind(ESCB, base, k_last)
            if (
                k2 >= 0
                and work[k2 + 1] == 0x5D
                and seq_end(work, k2, k_last) < 0
                and could(work[k2 : k2 + 8], whole=True)
            ):
                start = k2
            elif could(ESCB):
                start = k_last
        elif could(work[k_last:]):
            start = k_last
        if start < 0 or n - start > CAP or not self.removable_at(work, start):
            return -1
        return start

    def _could_remove(self, s: bytes, whole: bool = False) -> bool:
        """Could ``s`` (ESC-led, unfinished) still become an OSC that would be removed now?
        ``whole``: ``s`` is the head of an OSC already known to be unfinished."""
        return self.status.could_remove(s, whole) or self.notices.could_remove(s, whole)
