"""The rest of a clipboard or content sequence decided at a chunk's end, for the output tracker
(``term/tracker.py``; the sequence itself: ``term/openseq.py``): passed or dropped up to its
end, over as many chunks as it takes. It works on the scan's shared state
(``term/scanstate.py``): where the sequence ends, the host's state is what it left."""

from __future__ import annotations

from cuewrap.term.clipboard import ClipboardSequence, GuardedSequence
from cuewrap.term.grammar import ESCB
from cuewrap.term.openseq import CUT_BY_ESC, GOES_ON, OpenSequence
from cuewrap.term.scanstate import OPEN_OSC, ScanState

ST = b"\x1b\\"


class StreamGuard:
    """Steps the open sequence (``s._stream``) through the next chunk, on the tracker's state
    ``s``."""

    def __init__(self, s: ScanState) -> None:
        self.s = s

    def step(self, data: bytes) -> tuple[bytes, ClipboardSequence | GuardedSequence | None, bytes]:
        """(what goes out of ``data`` for the sequence, its event if it ended here, the rest of
        ``data`` for the scan; with no event, the sequence goes on past ``data``)."""
        s = self.s
        st = s._stream
        assert st is not None
        passing = st.passing
        if st.esc:  # ST, or a bare ESC that ended it
            st.esc = False
            if data[0] == 0x5C:
                st.size += 2
                return (ST if passing else b""), self._end(st), data[1:]
            ev = self._end(st)
            if passing:  # the host is still inside it: a released open OSC stands for it
                s._pend = OPEN_OSC
                s._safe = False
            return b"", ev, ESCB + data  # the ESC, not released, begins the next one
        end, how = st.end_in(data)
        if how == GOES_ON:
            return (data[:end] if passing else b""), None, b""
        ev = self._end(st)
        if passing and how == CUT_BY_ESC:  # the host is still inside it
            s._pend = OPEN_OSC
            s._safe = False
        return (data[:end] if passing else b""), ev, data[end:]

    def _end(self, st: OpenSequence) -> ClipboardSequence | GuardedSequence:
        s = self.s
        if st.passing:  # the host is in ground after it
            s._u8 = b""
            s._safe = True
        s._stream = None
        return st.event()
