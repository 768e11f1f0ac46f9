"""The sequence guard's content part, for the output tracker (docs/terminal-guard.md): inside
content (a frame the child draws, or all of a content-only child's output) the queries, the
DCSs but sixel images and the kitty graphics that read files are removed whole, and C1
controls written as UTF-8 are replaced by U+FFFD (what each is: ``term/content.py``). It works
on the scan's shared state (``term/scanstate.py``): a cut here changes what later sequences of
the same chunk may become."""

from __future__ import annotations

import re

from cuewrap.term.clipboard import GuardedSequence
from cuewrap.term.content import (
    C1_UTF8,
    REMOVE,
    REPLACEMENT,
    UNDECIDED,
    apc_class,
    csi_could_query,
    csi_query,
    dcs_class,
)
from cuewrap.term.grammar import ESC, ESCB, OSC_STOP, csi_at, seq_end, u8_complete
from cuewrap.term.openseq import OpenSequence
from cuewrap.term.outevents import Bell, Events
from cuewrap.term.scanstate import CAP, ESC_HEAD, NEUTRAL, Cuts, ScanState

_STR_STOP = re.compile(rb"[\x18\x1a\x1b]")  # what ends a DCS / APC (BEL does not)
_CSI_JUNK = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]")  # executed / ignored inside a CSI
_CSI_OPEN = re.compile(rb"([\x30-\x3f]*)([\x20-\x2f]*)")
# the sequences term/content.py may find a query, a DCS or an APC to remove (one search)
CONTENT_AT = re.compile(
    rb"\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*+(?:[P_]|\[(?:[\x30-\x3f]*+(?:[\x00-\x17\x19\x1c-\x2f\x7f]"
    rb"|[cntx])|\?[\x30-\x3f]*+[numS]|[>=][\x30-\x3f]*+[cq]))"
)

# events are immutable values: one instance each for the frequent ones (a frozen dataclass
# costs ~1 us to make)
_BELL = Bell()
_FRAMED_BELL = GuardedSequence("bel", 1)
_CAN = b"\x18"  # what takes a removed bell's place: a control that does nothing in ground


class ContentGuard:
    """Content's queries, DCSs, APCs and C1 controls in one chunk (:meth:`scan`) and at its end
    (:meth:`end`, :meth:`hold_c1`), the bells (:meth:`bells`), on the tracker's state ``s``."""

    def __init__(self, s: ScanState) -> None:
        self.s = s

    def scan(self, work: bytes, base: int, k_last: int, events: Events, cuts: Cuts) -> None:
        """The complete ones in the chunk (after the other sequences: their cuts decide what
        may be removed here). Those at the chunk end: :meth:`end`."""
        s = self.s
        if k_last >= base:
            n = len(work)
            for m in CONTENT_AT.finditer(work, base):
                j = m.start()
                h = ESC_HEAD.match(work, j)
                if h is None:  # cannot happen: CONTENT_AT begins the same way
                    continue
                b = h.end() - 1
                if work[b] == 0x5B:  # [
                    parsed = csi_at(work, b - 1)
                    if parsed is None or parsed[0] - j > CAP + 1:
                        continue  # unfinished or aborted (the end decides), or too long
                    end, params, inter, final = parsed
                    what = csi_query(params, inter, final)
                    if what is not None and s.framed(work, j):
                        self._cut(work, j, end, what, events, cuts)
                    continue
                stop = _STR_STOP.search(work, b + 1)
                if stop is None:
                    continue  # unfinished: the end decides
                t = stop.start()
                if work[t] == ESC:
                    if t + 1 == n:
                        continue  # its ESC is the last byte: decided at the chunk end
                    end = t + 2 if work[t + 1] == 0x5C else t
                else:
                    end = t + 1  # CAN, SUB
                cls, what = (dcs_class if work[b] == 0x50 else apc_class)(work[b + 1 : t], True)
                if cls == REMOVE and s.framed(work, j):
                    self._cut(work, j, end, what, events, cuts)
                    if end == t:  # a bare ESC ended it and begins the next sequence
                        s._bare_cuts[t] = j
        i = work.find(b"\xc2", base)
        if i < 0:
            return
        for m in C1_UTF8.finditer(work, i):
            p = m.start()
            k = work.rfind(ESCB, 0, p)
            if k >= 0 and not 0 <= seq_end(work, k, p + 1) <= p:
                continue  # inside a sequence: not a character
            if s.framed(work, p):
                cuts.append((p, p + 2))
                s._reps[p] = REPLACEMENT
                events.append((p, GuardedSequence("c1", 2)))

    def _cut(self, work: bytes, j: int, end: int, what: str, events: Events, cuts: Cuts) -> None:
        events.append((j, GuardedSequence(what, end - j)))
        cuts.append((j, end))
        if not self.s.removable_at(work, j):
            self.s._reps[j] = NEUTRAL

    def bells(self, work: bytes, base: int, events: Events, cuts: Cuts) -> None:
        """Every BEL in ground state (not one that ends an OSC). With the guard on, one inside
        a frame the child draws, or anywhere after the provenance mark (Pi's own writes come
        through ``feed_own``), is content (a model's answer): replaced with CAN, which does
        nothing in ground and ends a partial UTF-8 character as the BEL would (a bell is a
        desktop popup in some terminals: Konsole's "Bell in …"). A content-only child's
        (generic mode) rings: a bell is how such programs ask for attention."""
        s = self.s
        find = work.find
        b = find(b"\x07", base)
        while b >= 0:
            k = work.rfind(ESCB, 0, b)
            bare = (
                k < 0
                or (work[k + 1] == 0x5D and OSC_STOP.search(work, k + 2, b) is not None)
                or (work[k + 1] != 0x5D and seq_end(work, k, b) >= 0)
            )
            if bare:
                if s._guard and not s._content_base and s.framed(work, b):
                    cuts.append((b, b + 1))
                    s._reps[b] = _CAN  # ends a partial UTF-8 character as the BEL did
                    events.append((b, _FRAMED_BELL))
                else:
                    events.append((b, _BELL))
            b = find(b"\x07", b + 1)

    def end(self, work: bytes, k_last: int, base: int, n: int) -> tuple[int, bytes] | None:
        """The unfinished sequence at the end, inside content: a CSI that may still become a
        query, a DCS or APC not decided yet (held), or one to remove (dropped to its end). None:
        none of those. Returns (end of the output, bytes to append)."""
        s = self.s
        if k_last == n - 1:  # a lone ESC: it may end a DCS / APC to remove
            k2 = work.rfind(ESCB, base, k_last)
            if k2 < 0 or seq_end(work, k2, k_last) >= 0:
                return None
            m = ESC_HEAD.match(work, k2)
            if m is None or work[m.end() - 1] == 0x5B or not s.framed(work, k2):
                return None
            classify = dcs_class if work[m.end() - 1] == 0x50 else apc_class
            cls, what = classify(work[m.end() : k_last], True)
            if cls != REMOVE:
                return None
            return self._drop(work, k2, what, k_last - k2, True)
        m = ESC_HEAD.match(work, k_last)
        if m is None or not s.framed(work, k_last):
            return None
        intro = work[m.end() - 1]
        if intro == 0x5B:  # [
            body = work[m.end() :]
            if _CSI_JUNK.search(body) is not None:
                body = _CSI_JUNK.sub(b"", body)
            parts = _CSI_OPEN.fullmatch(body)
            if (
                n - k_last > CAP
                or parts is None
                or not csi_could_query(parts.group(1), parts.group(2))
            ):
                return None
            return self._hold(work, k_last)
        classify = dcs_class if intro == 0x50 else apc_class
        cls, what = classify(work[m.end() :], False)
        if cls == UNDECIDED:
            return self._hold(work, k_last)
        if cls != REMOVE:
            return None
        return self._drop(work, k_last, what, n - k_last, False)

    def _hold(self, work: bytes, start: int) -> tuple[int, bytes]:
        self.s.held_bytes = work[start:]
        self.s.set_before(work, start)
        return start, b""

    def _drop(self, work: bytes, start: int, what: str, size: int, esc: bool) -> tuple[int, bytes]:
        """A DCS / APC to remove, unfinished at the chunk end: dropped up to its end."""
        self.s._stream = OpenSequence(passing=False, read=False, what=what, size=size, esc=esc)
        return self.s.drop_from(work, start)

    def hold_c1(self, work: bytes, base: int, k_last: int, e: int) -> tuple[int, bytes]:
        """The chunk ends in the first byte of what may be a C1 control, inside content: held."""
        s = self.s
        n = len(work)
        if n - 1 < base:
            return n, b""
        s.held_bytes = b"\xc2"
        if k_last >= 0 and seq_end(work, k_last, n - 1) < 0:
            # the C2 ends an ESC or a CSI (a non-ASCII byte aborts them): without it, still open
            s.pending(work[k_last : n - 1])
            return n - 1, b""
        tail = work[max(e, n - 4) : n - 1] if k_last >= 0 else (s._u8 + work[:-1])[-3:]
        s._u8 = tail
        s._safe = u8_complete(tail)
        return n - 1, b""
