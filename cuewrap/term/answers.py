"""Incremental input filter: the host terminal's answers to cuewrap's start-up query, taken out.

At start cuewrap asks the terminal about itself, before the child writes anything (so the
answers come before any answer to the child's own queries: a terminal answers in order):

    CSI > 0 q                 XTVERSION     -> DCS > | NAME(VERSION) ST
    OSC 99 ; i=ID : p=? ; ST  (kitty only)  -> OSC 99 ; i=ID : p=? ; KEY=VALUES:… ST|BEL
    OSC 7501 ; ? ST                         -> OSC 7501 ; ? ST|BEL (the Program Status Protocol)
    CSI c                     DA1, sentinel -> CSI ? NUMBERS c

The answers arrive on stdin, mixed with what the user types. :class:`AnswerFilter` is the
focus filter (``focus.py``) with one more job while the query is open: it removes those
answers from the input and returns them as :class:`TerminalAnswer` items, in stream order, so
they never reach the child, even split across reads. The first DA1 answer closes the query
(every terminal answers DA1, and answers in order, so nothing of ours can follow it): from
then on it is the plain focus filter, and the child's own DA1 and other answers pass. A
terminal that never answers: ``stop()`` (the shell calls it after a while) closes the query.

Holding: a prefix of an answer at the end of a read is held back. ``ESC`` and a two-byte
prefix (``ESC [``, ``ESC P``, ``ESC ]``) are released by :meth:`flush` like the focus
filter's (a user's Escape must reach the child within its ESC timeout); a longer prefix is
an answer on its way and is released only by ``flush(everything=True)``, by ``stop()`` and
the next flush, or when it grows past :data:`MAX_ANSWER` bytes without ending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from cuewrap.term.focus import FocusFilter, Item

MAX_ANSWER = 1024  # an "answer" longer than this without its end is not one: data
_XTVERSION = b"\x1bP>|"
_DA1 = b"\x1b[?"
_STATUS = b"\x1b]7501;"
_SHORT = 2  # held prefixes up to this length are released by a plain flush


@dataclass(frozen=True)
class TerminalAnswer:
    """One answer of the host terminal to cuewrap's query."""

    kind: Literal["xtversion", "osc99", "osc7501", "da1"]
    # XTVERSION: "kitty(0.26.5)"; osc99: "a=focus:p=title,body,close…"; osc7501: "?";
    # da1: "?62;c"
    text: str


AnyItem = Item | TerminalAnswer


class AnswerFilter(FocusFilter):
    """The focus filter, plus: the answers to cuewrap's query removed until the DA1 answer."""

    def __init__(self, osc99_ident: str | None = None, status: bool = False) -> None:
        super().__init__()
        self._status = status  # the Program Status query was asked (OSC 7501)
        self.active = True  # the query is open: answers may still come
        # the start of kitty's answer to our OSC 99 query (None: not asked)
        self._osc99 = (
            b"\x1b]99;i=" + osc99_ident.encode("ascii") + b":p=?;" if osc99_ident else None
        )
        self._partial = b""  # a held prefix of an answer (not yet returned)

    @property
    def pending(self) -> bool:
        return bool(self._partial) or super().pending

    def passes(self, data: bytes) -> bool:
        # FocusFilter.passes, and no answer's prefix held (inline: every keystroke)
        return not (self._partial or self._seen or self._held) and data.find(b"\x1b") < 0

    def stop(self) -> None:
        """The terminal did not answer in time: take nothing more out (a held prefix is
        released by the next feed or flush)."""
        self.active = False

    def feed(self, data: bytes) -> list[AnyItem]:  # type: ignore[override]
        if not self.active and not self._partial:
            return cast("list[AnyItem]", super().feed(data))
        buf = self._partial + data
        self._partial = b""
        if not self.active:
            return cast("list[AnyItem]", super().feed(buf))
        items: list[AnyItem] = []
        pos = i = 0
        while self.active:
            j = buf.find(b"\x1b", i)
            if j < 0:
                break
            found = self._match(buf, j)
            if found is None:
                i = j + 1
                continue
            items += super().feed(buf[pos:j])
            if isinstance(found, int):  # a prefix of an answer: held
                self._partial = buf[j:]
                return items
            answer, end = found
            items.append(answer)
            if answer.kind == "da1":
                self.active = False
            pos = i = end
        items += super().feed(buf[pos:])
        return items

    def flush(self, everything: bool = False) -> list[AnyItem]:  # type: ignore[override]
        """Release a held prefix as data: a short one always, a longer one (an answer on its
        way) only with ``everything`` or once the query is closed."""
        items: list[AnyItem] = []
        held = self._partial
        if held and (everything or not self.active or len(held) <= _SHORT):
            self._partial = b""
            items += super().feed(held)
        items += super().flush()
        return items

    # -- matching ---------------------------------------------------------------------------
    def _match(self, buf: bytes, j: int) -> tuple[TerminalAnswer, int] | int | None:
        """At ``buf[j]`` (an ESC): (the answer, its end), -1 when ``buf`` ends inside what may
        still become one, None when it is not one."""
        rest = len(buf) - j
        starts = [_XTVERSION, _DA1] + ([self._osc99] if self._osc99 is not None else [])
        if self._status:
            starts.append(_STATUS)
        for start in starts:
            if rest < len(start):
                if start.startswith(buf[j:]):
                    return -1
                continue
            if not buf.startswith(start, j):
                continue
            body = j + len(start)
            if start is _DA1:
                k = body
                while k < len(buf) and buf[k] in b"0123456789;":
                    k += 1
                if k == len(buf):
                    return -1 if k - j <= MAX_ANSWER else None
                if buf[k] != ord("c"):
                    return None
                return TerminalAnswer("da1", buf[j + 2 : k + 1].decode("ascii")), k + 1
            end, term_len = _string_end(buf, body)
            if term_len < 0:  # another ESC inside: not an answer (typing, or the child's)
                return None
            if end < 0:
                return -1 if rest <= MAX_ANSWER else None
            text = buf[body:end].decode("utf-8", "replace")
            kind: Literal["xtversion", "osc99", "osc7501"] = (
                "xtversion" if start is _XTVERSION else "osc7501" if start is _STATUS else "osc99"
            )
            return TerminalAnswer(kind, text), end + term_len
        return None


def _string_end(buf: bytes, start: int) -> tuple[int, int]:
    """Where a control string that began before ``start`` ends: (index, terminator length),
    ST (``ESC \\``) or BEL; (-1, 0) when ``buf`` ends first; (-1, -1) when an ESC that is
    not ST comes first (an answer holds no ESC)."""
    esc = buf.find(b"\x1b", start)
    bel = buf.find(b"\x07", start)
    if bel >= 0 and (esc < 0 or bel < esc):
        return bel, 1
    if esc < 0:
        return -1, 0
    if esc + 1 == len(buf):
        return -1, 0  # the ESC of ST, perhaps: wait for the next byte
    if buf[esc + 1] == 0x5C:  # "\\"
        return esc, 2
    return -1, -1
