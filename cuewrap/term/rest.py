"""Where the output stream the host terminal reads stands, after the output tracker failed
(docs/terminal-guard.md#when-the-tracker-fails): at rest (``safe``: the terminal's parser in
its ground state, not inside an escape sequence or a string, nor inside a UTF-8 character) or
not. cuewrap's own bytes (title marks, terminal notifications) are written only at rest; the
tracker says so while it runs, this says so once it is gone.

Pure and incremental: fed what was written to the host (after the guard's fallback), it keeps
only the head of an unfinished sequence (a few bytes: what decides where it ends) and the
last bytes of text (``grammar.seq_end``, ``grammar.u8_complete``: the tracker's own reading).
When it starts where the tracker left the stream inside something (``known=False``), it does
not know where that ends: not at rest until the next ESC, CAN or SUB, which every terminal's
parser obeys whatever state it is in (ESC begins a sequence, CAN and SUB abort one).
"""

from __future__ import annotations

import re

from cuewrap.term.grammar import seq_end, u8_complete

_RESYNC = re.compile(rb"[\x18\x1a\x1b]")
_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")  # ignored between ESC and what follows


class RestWatch:
    def __init__(self, known: bool = True) -> None:
        self._lost = not known  # inside something of unknown kind: wait for ESC, CAN or SUB
        self._open = b""  # the unfinished sequence's head (ESC and the byte that says its kind)
        self._text = b""  # the last <= 3 bytes of text (a UTF-8 character may go on)
        self.safe = known

    def feed(self, data: bytes) -> bool:
        """What was written to the host after what was fed before; whether it is at rest."""
        if not data:
            return self.safe
        start = 0
        if self._lost:
            m = _RESYNC.search(data)
            if m is None:
                return False
            self._lost = False
            start = m.start() if data[m.start()] == 0x1B else m.end()
        buf = self._open + data[start:] if self._open else data[start:]
        self._open = b""
        text_from = 0  # where the text after the last sequence begins
        i = buf.find(b"\x1b")
        while i >= 0:
            end = seq_end(buf, i, len(buf))
            if end < 0:  # open at the end: keep what decides where it ends
                self._open = _head(buf, i)
                self._text = b""
                self.safe = False
                return False
            text_from = end
            i = buf.find(b"\x1b", end)
        tail = buf[max(text_from, len(buf) - 3) :]
        self._text = (self._text + tail)[-3:] if text_from == 0 else tail
        self.safe = u8_complete(self._text)
        return self.safe


def _head(buf: bytes, i: int) -> bytes:
    """The ESC at ``i`` and the byte after the controls that follow it (CSI, OSC, DCS…): where
    such a sequence ends does not depend on its parameters or its string, only on its kind."""
    m = _SKIP.match(buf, i + 1)
    j = m.end() if m is not None else i + 1
    return buf[i : j + 1] if j < len(buf) else b"\x1b"
