"""The escape-sequence grammar the output tracker (``tracker.py``) reads the child's output
by, pure and without state: where a sequence that begins with ESC ends (ECMA-48 as xterm and
kitty parse it: CAN and SUB abort, C0 inside is executed), a CSI's parameters, intermediates and
final byte, whether text ends inside a UTF-8 character, a short stand-in for an unfinished
sequence too long to keep, and an OSC 7501 report's body (``state=…:app=…``).

Module functions called through module globals: on the relay's hot path, each call counts
(``scripts/bench_filters``).
"""

from __future__ import annotations

import re

from cuewrap.factbase import ProgramStatus

_MODE_MAX = 99999  # a larger mode number is none (None in ints)
_MISS_LIMIT = 16  # memchr false hits before switching to a plain substring find
ESC = 0x1B
ESCB = b"\x1b"
# after ESC: C0 (but CAN, SUB, ESC) and DEL keep the escape state
_ESC_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")
_CSI_FAST = re.compile(rb"[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]")
_CSI_PARTS = re.compile(rb"([\x30-\x3f]*)([\x20-\x2f]*)([\x40-\x7e])")
_CSI_STOP = re.compile(rb"[\x18\x1a\x1b\x40-\x7e\x80-\xff]")
_CSI_JUNK = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]")  # executed / ignored inside a CSI
_CSI_BODY = re.compile(rb"([\x30-\x3f]*)([\x20-\x2f]*)")
OSC_STOP = re.compile(rb"[\x07\x18\x1a\x1b]")
_STR_STOP = re.compile(rb"[\x18\x1a\x1b]")
_ESCINT_STOP = re.compile(rb"[\x18\x1a\x1b\x30-\x7e\x80-\xff]")
_TOKEN = re.compile(rb"[A-Za-z0-9_.+-]{1,64}")
_STRING_INTRO = frozenset(b"PX^_")


def seq_end(buf: bytes, j: int, stop: int) -> int:
    """End of the sequence whose ESC is at ``j``, looking at ``buf[:stop]``.

    Returns the index just after its last byte (ground follows), or the index of the byte
    that aborts it when that byte is processed anew (an ESC, or a non-ASCII byte that is
    text), or -1 when it is still open at ``stop``.
    """
    i = j + 1
    if i >= stop:
        return -1
    c = buf[i]
    if c < 0x20 or c == 0x7F:
        if c == ESC:
            return i
        if c == 0x18 or c == 0x1A:
            return i + 1
        m = _ESC_SKIP.match(buf, i, stop)
        i = m.end() if m else i
        if i >= stop:
            return -1
        c = buf[i]
        if c == ESC:
            return i
        if c == 0x18 or c == 0x1A:
            return i + 1
    if c == 0x5B:  # [  CSI
        m = _CSI_FAST.match(buf, i + 1, stop)
        if m is not None:
            return m.end()
        m = _CSI_STOP.search(buf, i + 1, stop)
        if m is None:
            return -1
        t = m.start()
        b = buf[t]
        return t + 1 if (0x40 <= b <= 0x7E or b == 0x18 or b == 0x1A) else t
    if c == 0x5D:  # ]  OSC
        m = OSC_STOP.search(buf, i + 1, stop)
        if m is None:
            return -1
        t = m.start()
        return t if buf[t] == ESC else t + 1
    if c in _STRING_INTRO:  # DCS SOS PM APC
        m = _STR_STOP.search(buf, i + 1, stop)
        if m is None:
            return -1
        t = m.start()
        return t if buf[t] == ESC else t + 1
    if 0x20 <= c <= 0x2F:  # intermediate
        m = _ESCINT_STOP.search(buf, i + 1, stop)
        if m is None:
            return -1
        t = m.start()
        b = buf[t]
        return t + 1 if (0x30 <= b <= 0x7E or b == 0x18 or b == 0x1A) else t
    if c < 0x80:
        return i + 1  # two-byte escape (ESC \ included)
    return i  # non-ASCII after ESC: the ESC is dropped, the byte is text


def u8_complete(tail: bytes) -> bool:
    """``tail``: the last <= 3 bytes of ground text. False if it ends inside a character."""
    n = len(tail)
    i = n - 1
    while i >= 0 and 0x80 <= tail[i] <= 0xBF:
        i -= 1
    if i < 0:
        return True
    b = tail[i]
    if 0xC2 <= b <= 0xDF:
        need = 1
    elif 0xE0 <= b <= 0xEF:
        need = 2
    elif 0xF0 <= b <= 0xF4:
        need = 3
    else:
        return True
    return n - 1 - i >= need


def find_all(buf: bytes, needle: bytes, first: int) -> list[int]:
    """Start indexes of ``needle`` in ``buf`` (``needle`` cannot overlap itself).

    ``first``: index of the first occurrence of the needle's last (rare) byte at or after
    ``len(needle) - 1``, found by the caller with memchr. Candidates are checked in Python;
    if that byte turns out to be common here, switch to the slower substring search.
    """
    last = needle[-1:]
    m = len(needle) - 1
    found: list[int] = []
    find = buf.find
    i = first
    misses = 0
    while i >= 0:
        j = i - m
        if buf.startswith(needle, j):
            found.append(j)
        else:
            misses += 1
            if misses > _MISS_LIMIT:
                j = find(needle, j + 1)
                while j >= 0:
                    found.append(j)
                    j = find(needle, j + m + 1)
                return found
        i = find(last, i + 1)
    return found


def csi_at(buf: bytes, j: int) -> tuple[int, bytes, bytes, int] | None:
    """Parse the CSI at ``j`` (``buf[j:j+2] == ESC [``): (end, params, intermediates, final).

    None when it is unfinished or aborted. C0 controls inside are skipped (executed); a
    parameter byte after an intermediate makes it malformed (intermediates ``!``).
    """
    m = _CSI_PARTS.match(buf, j + 2)
    if m is not None:
        return m.end(), m.group(1), m.group(2), buf[m.end() - 1]
    s = _CSI_STOP.search(buf, j + 2)
    if s is None:
        return None
    t = s.start()
    final = buf[t]
    if not 0x40 <= final <= 0x7E:
        return None
    body = _CSI_JUNK.sub(b"", buf[j + 2 : t])
    m = _CSI_BODY.fullmatch(body)
    if m is None:
        return t + 1, b"", b"!", final
    return t + 1, m.group(1), m.group(2), final


def ints(params: bytes) -> list[int | None]:
    """``1;;25`` -> [1, None, 25]; values above _MODE_MAX become None."""
    out: list[int | None] = []
    for p in params.split(b";"):
        if p and len(p) <= 5:
            v = int(p)
            out.append(v if v <= _MODE_MAX else None)
        else:
            out.append(None)
    return out


def synthetic(pend: bytes) -> bytes:
    """A short stand-in for an overflowed unfinished sequence: same state, never an event."""
    i = 1
    c = pend[1] if len(pend) > 1 else -1
    if 0 <= c < 0x20 or c == 0x7F:
        m = _ESC_SKIP.match(pend, 1)
        i = m.end() if m else 1
        if i >= len(pend):
            return b"\x1b\x00"
        c = pend[i]
    if c == 0x5B:
        return b"\x1b[!"  # an intermediate first: what follows can never be well-formed
    if c == 0x5D:
        # keep a trailing ESC (it may be the start of the ST)
        return b"\x1b]\x7f\x1b" if pend.endswith(ESCB) else b"\x1b]\x7f"
    if c == -1:
        return ESCB
    return b"\x1b" + bytes((c,))


def parse_status(body: bytes) -> ProgramStatus | None:
    """``state=working:app=pi[:kind=K][:msg=B64]`` -> ProgramStatus; None if no valid state."""
    fields: dict[bytes, bytes] = {}
    for part in body.split(b":"):
        key, eq, val = part.partition(b"=")
        if eq and key not in fields:
            fields[key] = val
    state = fields.get(b"state")
    if state is None or _TOKEN.fullmatch(state) is None:
        return None
    app = fields.get(b"app")
    kind = fields.get(b"kind")
    msg = fields.get(b"msg")
    return ProgramStatus(
        state=state.decode("ascii"),
        app=app.decode("ascii") if app is not None and _TOKEN.fullmatch(app) else None,
        kind=kind.decode("ascii") if kind is not None and _TOKEN.fullmatch(kind) else None,
        has_msg=bool(msg),
        summary=error_msg(msg) if msg and state in (b"error", b"blocked") else None,
    )


def error_msg(msg: bytes) -> str | None:
    """An ``error`` or ``blocked`` report's base64 ``msg`` (the first line of the error; what
    the wait is about, Claude Code's "approve Bash: <command>"), decoded, at most 1000
    characters; None when it is not base64. Raw text: the engine cleans it before use."""
    import binascii

    try:
        return binascii.a2b_base64(msg[:1400]).decode("utf-8", "replace")[:1000] or None
    except (binascii.Error, ValueError):
        return None
