"""Reading escape sequences out of what reached a terminal, as the most accepting terminals
read them (tests/test_termscan.py; used by the Pi tests of the guard).

``scan(raw)`` walks bytes as a DEC-style parser does (the model kitty, xterm, VTE and foot
share) and returns every control sequence in them however it is spelled:

- introduced by ``ESC`` (7-bit) or by a C1 control, in its UTF-8 form (U+009D ``OSC``, U+009B
  ``CSI``, U+0090 ``DCS``, U+009F ``APC``, U+009E ``PM``, U+0098 ``SOS``) or raw (a lone byte
  0x80-0x9f that is not part of a UTF-8 character);
- with C0 controls anywhere inside (terminals execute or ignore them: they neither end nor
  change the sequence), also between ``ESC`` and its introducer;
- ended by BEL (OSC only), ``ESC \\`` or U+009C (ST), an ``ESC`` not followed by ``\\`` (the
  string ends there and the ``ESC`` begins the next sequence: how a tmux passthrough wrapper's
  ``ESC ESC ]`` puts an OSC of its own on a terminal that is not tmux), CAN or SUB (kitty and
  others act on an OSC cut so), or not at all (the end of ``raw``: its start reached the
  terminal all the same);
- an OSC's number is its leading digit run, zero-padded or not, with or without ``;`` after it
  (kitty reads ``ESC ] 52c;…`` as OSC 52).

Nothing here imports cuewrap: this is the tests' own reading, not the code under test's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "FRAME_AGAIN",
    "FRAME_END",
    "Seq",
    "apcs",
    "clip_writes",
    "csis",
    "dcss",
    "last_title",
    "notifications",
    "osc_numbers",
    "oscs",
    "scan",
    "titles",
]

#: what ends and (re)opens a synchronized-output frame: how Pi draws, and what an answer can
#: carry to end Pi's frame early
FRAME_END, FRAME_AGAIN = "\x1b[?2026l", "\x1b[?2026h"

BEL, CAN, SUB, ESC, DEL = 0x07, 0x18, 0x1A, 0x1B, 0x7F
_C1_STRING = {0x90: "dcs", 0x98: "sos", 0x9D: "osc", 0x9E: "pm", 0x9F: "apc"}
_ESC_STRING = {ord("P"): "dcs", ord("X"): "sos", ord("]"): "osc", ord("^"): "pm", ord("_"): "apc"}
_CSI_C1, _ST_C1 = 0x9B, 0x9C
_DIGITS = re.compile(rb"\d*")


@dataclass(frozen=True)
class Seq:
    """One control sequence found in the bytes.

    ``kind``: ``osc``, ``csi``, ``dcs``, ``apc``, ``pm``, ``sos`` or ``esc`` (any other escape
    sequence). ``intro``: ``esc``, ``c1`` (UTF-8 form) or ``c1raw``. ``data``: what it carries,
    its C0 controls left out (a CSI: parameters and intermediates; a string: everything up to
    its end). ``final``: a CSI's or an escape sequence's final byte. ``number``: an OSC's
    leading digits as a number (None when it has none), ``payload`` what follows them (one
    ``;`` right after them dropped). ``end``: ``bel``, ``st``, ``esc``, ``can``, ``sub``,
    ``eof`` or ``final``. ``start``: its offset in the bytes."""

    kind: str
    intro: str
    data: bytes
    start: int
    end: str
    final: bytes = b""

    @property
    def number(self) -> int | None:
        if self.kind != "osc":
            return None
        digits = _DIGITS.match(self.data)
        return int(digits.group()) if digits and digits.group() else None

    @property
    def payload(self) -> bytes:
        digits = _DIGITS.match(self.data)
        rest = self.data[digits.end() if digits else 0 :]
        return rest[1:] if rest.startswith(b";") else rest


def _utf8_len(b: int) -> int:
    if 0xC2 <= b <= 0xDF:
        return 2
    if 0xE0 <= b <= 0xEF:
        return 3
    if 0xF0 <= b <= 0xF4:
        return 4
    return 1


def _c1_at(raw: bytes, i: int) -> tuple[int, int] | None:
    """(C1 code, bytes it takes) when a C1 control starts at ``i`` in its UTF-8 form."""
    if raw[i] == 0xC2 and i + 1 < len(raw) and 0x80 <= raw[i + 1] <= 0x9F:
        return raw[i + 1], 2
    return None


def scan(raw: bytes) -> list[Seq]:
    """Every control sequence in ``raw``, in order (see the module's docstring)."""
    out: list[Seq] = []
    i, n = 0, len(raw)
    while i < n:
        b = raw[i]
        c1 = _c1_at(raw, i)
        if b == ESC:
            i = _escape(raw, i, out)
        elif c1 is not None or 0x80 <= b <= 0x9F:
            code, width = c1 if c1 is not None else (b, 1)
            intro = "c1" if c1 is not None else "c1raw"
            if code == _CSI_C1:
                i = _csi(raw, i, i + width, intro, out)
            elif code in _C1_STRING:
                i = _string(raw, i, i + width, _C1_STRING[code], intro, out)
            else:
                i += width
        elif b >= 0xC0:
            i += _utf8_len(b)  # a whole character (its continuation bytes are no C1)
        else:
            i += 1
    return out


def _escape(raw: bytes, start: int, out: list[Seq]) -> int:
    """``ESC`` at ``start``: what it introduces."""
    i, n = start + 1, len(raw)
    inter = bytearray()
    while i < n:
        b = raw[i]
        if b in (CAN, SUB):
            return i + 1
        if b == ESC:
            return i  # begins again
        if b < 0x20 or b == DEL:
            i += 1  # executed or ignored, the escape goes on
            continue
        if 0x20 <= b <= 0x2F:
            inter.append(b)
            i += 1
            continue
        if not inter and b == ord("["):
            return _csi(raw, start, i + 1, "esc", out)
        if not inter and b in _ESC_STRING:
            return _string(raw, start, i + 1, _ESC_STRING[b], "esc", out)
        if b <= 0x7E:
            out.append(Seq("esc", "esc", bytes(inter), start, "final", bytes([b])))
            return i + 1
        return i  # a byte a terminal takes as text: the escape is abandoned
    out.append(Seq("esc", "esc", bytes(inter), start, "eof"))
    return n


def _csi(raw: bytes, start: int, i: int, intro: str, out: list[Seq]) -> int:
    n = len(raw)
    data = bytearray()
    while i < n:
        b = raw[i]
        if b in (CAN, SUB):
            out.append(Seq("csi", intro, bytes(data), start, "can" if b == CAN else "sub"))
            return i + 1
        if b == ESC:
            out.append(Seq("csi", intro, bytes(data), start, "esc"))
            return i
        if b < 0x20 or b == DEL:
            i += 1
            continue
        if 0x20 <= b <= 0x3F:
            data.append(b)
            i += 1
            continue
        if 0x40 <= b <= 0x7E:
            out.append(Seq("csi", intro, bytes(data), start, "final", bytes([b])))
            return i + 1
        return i  # a byte >= 0x80 ends it unfinished (not dispatched)
    out.append(Seq("csi", intro, bytes(data), start, "eof"))
    return n


def _string(raw: bytes, start: int, i: int, kind: str, intro: str, out: list[Seq]) -> int:
    """An OSC, DCS, APC, PM or SOS from ``i`` (its data) to its end."""
    n = len(raw)
    data = bytearray()
    while i < n:
        b = raw[i]
        c1 = _c1_at(raw, i)
        if b == BEL and kind == "osc":
            out.append(Seq(kind, intro, bytes(data), start, "bel"))
            return i + 1
        if b in (CAN, SUB):
            out.append(Seq(kind, intro, bytes(data), start, "can" if b == CAN else "sub"))
            return i + 1
        if b == ESC:
            if i + 1 < n and raw[i + 1] == ord("\\"):
                out.append(Seq(kind, intro, bytes(data), start, "st"))
                return i + 2
            out.append(Seq(kind, intro, bytes(data), start, "esc"))
            return i  # the ESC begins the next sequence
        if c1 is not None and c1[0] == _ST_C1:
            out.append(Seq(kind, intro, bytes(data), start, "st"))
            return i + 2
        if b < 0x20 or b == DEL:
            i += 1
            continue
        data.append(b)
        i += 1
    out.append(Seq(kind, intro, bytes(data), start, "eof"))
    return n


# --------------------------------------------------------------------------------------------
# Selections


def osc_numbers(raw: bytes, *numbers: int) -> list[Seq]:
    """Every OSC whose number is one of ``numbers`` (all OSCs without any)."""
    return [s for s in scan(raw) if s.kind == "osc" and (not numbers or s.number in numbers)]


def csis(raw: bytes, final: bytes, params: bytes | None = None) -> list[Seq]:
    """Every CSI ending in ``final``, only those with exactly ``params`` when given."""
    return [
        s
        for s in scan(raw)
        if s.kind == "csi" and s.final == final and (params is None or s.data == params)
    ]


def dcss(raw: bytes, prefix: bytes = b"") -> list[Seq]:
    """Every DCS whose data begins with ``prefix``."""
    return [s for s in scan(raw) if s.kind == "dcs" and s.data.startswith(prefix)]


def apcs(raw: bytes, prefix: bytes = b"") -> list[Seq]:
    """Every APC whose data begins with ``prefix`` (``G``: kitty graphics)."""
    return [s for s in scan(raw) if s.kind == "apc" and s.data.startswith(prefix)]


_OSC52 = re.compile(rb"\x1b\]0*52;([^;\x07\x1b]*);([^\x07\x1b]*)")


def clip_writes(raw: bytes) -> list[bytes]:
    """The payloads of every plainly written OSC 52 (``ESC ] 52 ; c ; DATA``) in ``raw``."""
    return [m.group(2) for m in _OSC52.finditer(raw)]


_OSC = re.compile(rb"\x1b\](\d+);([^\x07\x1b]*)(?:\x07|\x1b\\)")


def oscs(raw: bytes, *numbers: str) -> list[tuple[str, str]]:
    """Every complete, plainly written OSC (``ESC ] N ; … BEL|ST``) in ``raw`` as (number,
    payload), optionally only some numbers: what cuewrap and Pi write themselves."""
    out = []
    for m in _OSC.finditer(raw):
        num = m.group(1).decode()
        if not numbers or num in numbers:
            out.append((num, m.group(2).decode("utf-8", errors="replace")))
    return out


def notifications(raw: bytes) -> list[tuple[str, str]]:
    """(title, body) of every OSC 777 notification: ``OSC 777;notify;TITLE;BODY ST``."""
    out = []
    for _, payload in oscs(raw, "777"):
        parts = payload.split(";", 2)
        if parts[0] == "notify" and len(parts) == 3:
            out.append((parts[1], parts[2]))
    return out


def titles(raw: bytes) -> list[str]:
    """Every window title set (OSC 0 by Pi, OSC 2 by cuewrap), in order."""
    return [payload for _, payload in oscs(raw, "0", "2")]


def last_title(raw: bytes) -> str | None:
    t = titles(raw)
    return t[-1] if t else None
