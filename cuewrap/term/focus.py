"""Incremental input filter (host stdin -> child): takes focus reports out of the input.

Modelled on prompt_toolkit's vt100 parser: :meth:`FocusFilter.feed` is pure and
incremental, and the timeout that releases a held prefix lives outside (the relay calls
:meth:`FocusFilter.flush` a few ms after ``feed`` left :attr:`FocusFilter.pending` set).

What it recognizes (docs/design.md#presence):

- ``ESC [ I`` / ``ESC [ O`` (xterm focus in/out, mode 1004): removed from the data and
  returned as :class:`FocusReport` items, in stream order.
- ``ESC [ 200 ~`` … ``ESC [ 201 ~`` (bracketed paste): inside, everything is data, focus-like
  bytes included. The markers themselves stay in the data.
- ``ESC ] 7501 ;`` (the host terminal answering or echoing Pi's program-status query):
  the bytes stay in the data and a :class:`HostStatusReply` item follows the ``;``.

Holding: only a trailing ``ESC`` or ``ESC [`` outside a paste is held (they could still
become a focus report, which must be removed). Paste markers and the ``ESC ] 7501 ;``
prefix pass through at once, since their bytes are data anyway: a prefix of them at the end
of a chunk is remembered (already sent) and completed by the next chunk, so a marker or
prefix split across reads is still recognized. After :meth:`flush`, released bytes are data
for good: ``ESC`` flushed, then ``[O`` in the next read, is data, not a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ESC = 0x1B
_FOCUS_IN = b"\x1b[I"
_FOCUS_OUT = b"\x1b[O"
_PASTE_START = b"\x1b[200~"
_PASTE_END = b"\x1b[201~"
_STATUS = b"\x1b]7501;"
# trailing prefixes that are held (could become a focus report, which is removed)
_HOLD = (b"\x1b", b"\x1b[")
_OUTSIDE = (_PASTE_START, _STATUS, _FOCUS_IN, _FOCUS_OUT)
_INSIDE = (_PASTE_END,)
_LONGEST = max(len(t) for t in _OUTSIDE + _INSIDE)


@dataclass(frozen=True)
class FocusReport:
    """``CSI I`` (``in``) or ``CSI O`` (``out``) from the host terminal."""

    direction: Literal["in", "out"]


@dataclass(frozen=True)
class HostStatusReply:
    """The host terminal answered or echoed Pi's OSC 7501 query (``ESC ] 7501 ;`` in the input)."""


Item = bytes | FocusReport | HostStatusReply


def _add(items: list[Item], data: bytes) -> None:
    """Append a data segment, joining it to a data item just before it."""
    if not data:
        return
    if items and isinstance(items[-1], bytes):
        items[-1] = items[-1] + data
    else:
        items.append(data)


class FocusFilter:
    """Removes ``CSI I`` / ``CSI O`` from the input, outside bracketed paste."""

    def __init__(self) -> None:
        self.in_paste: bool = False
        self._held = b""  # not yet returned: b"\x1b" or b"\x1b[" (outside paste)
        self._seen = b""  # already returned, a proper prefix of a paste marker or _STATUS

    @property
    def pending(self) -> bool:
        """True when a partial prefix (``ESC`` or ``ESC [``) is held back."""
        return bool(self._held)

    def passes(self, data: bytes) -> bool:
        """``feed(data)`` would return ``[data]`` and change nothing: nothing is held or
        remembered and ``data`` has no ESC (the usual keystroke). The relay then writes it to
        the child at once, without the filter's call."""
        return not (self._seen or self._held) and data.find(b"\x1b") < 0

    def feed(self, data: bytes) -> list[Item]:
        """Filter ``data``; return data segments and reports in stream order."""
        seen = self._seen
        if not (seen or self._held) and data.find(b"\x1b") < 0:
            return [data] if data else []  # typing: no ESC, nothing held (every keystroke)
        buf = seen + self._held + data if (seen or self._held) else data
        base = len(seen)  # bytes before base were returned already
        self._held = b""
        self._seen = b""
        items: list[Item] = []
        emit = base  # start of the data not yet added to items
        i = 0
        find = buf.find
        while True:
            j = find(b"\x1b", i)
            if j < 0:
                break
            if self.in_paste:
                if buf.startswith(_PASTE_END, j):
                    self.in_paste = False
                    i = j + len(_PASTE_END)
                    continue
            else:
                nxt = buf[j + 1 : j + 3]
                if j >= base and (nxt == b"[I" or nxt == b"[O"):
                    _add(items, buf[emit:j])
                    items.append(FocusReport("in" if nxt == b"[I" else "out"))
                    emit = i = j + 3
                    continue
                if buf.startswith(_PASTE_START, j):
                    self.in_paste = True
                    i = j + len(_PASTE_START)
                    continue
                if buf.startswith(_STATUS, j):
                    end = j + len(_STATUS)
                    _add(items, buf[emit:end])
                    items.append(HostStatusReply())
                    emit = i = end
                    continue
            i = j + 1
        # the tail: the last ESC may begin a sequence that is not complete yet
        k = buf.rfind(b"\x1b", max(0, len(buf) - _LONGEST + 1))
        if k >= 0:
            tail = buf[k:]
            if not self.in_paste and tail in _HOLD and k >= emit:
                _add(items, buf[emit:k])
                self._held = tail
                return items
            targets = _INSIDE if self.in_paste else _OUTSIDE
            if any(len(tail) < len(t) and t.startswith(tail) for t in targets):
                self._seen = tail
        _add(items, buf[emit:])
        return items

    def flush(self) -> list[Item]:
        """Release a held prefix unchanged, as data."""
        held = self._held
        if not held:
            return []
        self._held = b""
        # still a prefix of a paste marker / the status prefix: keep tracking it, as data
        self._seen = held
        return [held]
