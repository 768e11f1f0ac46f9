"""Clipboard sequences in the child's output (docs/terminal-guard.md): OSC 52, and iTerm2's
``OSC 1337 ; Copy=`` and file downloads (``OSC 1337 ; File=`` / ``MultipartFile=`` without
``inline=1``; inline images are not guarded).

``ESC ] 52 ; Pc ; Pd`` sets the clipboard named by ``Pc`` to the base64 text ``Pd`` in most
terminals (kitty, WezTerm, Ghostty, Alacritty, foot, xterm when allowed); ``Pd = ?`` asks the
terminal to type the clipboard back into the program's input. A model's answer that carries
one (prompt injection) would write the user's clipboard: the output tracker recognises them and
asks a :class:`ClipboardPolicy` whether each one reaches the host terminal.

What counts as one, as strictly as the terminals that accept the most: ``Ps`` with leading
zeros (``052``), C0 controls anywhere inside (terminals ignore them), and any terminator:
BEL, ST, an ESC that is not followed by ``\\``, CAN and SUB (terminals built on the DEC
parser model dispatch an OSC on every one of these). Only this module's pure helpers are here;
the tracker does the scanning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

_ESC_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")
_OSC_C0 = re.compile(rb"[\x00-\x06\x08-\x17\x19\x1c-\x1f]")
_DIGITS = re.compile(rb"[0-9]*")

# classification of the head of a sequence (see clip_head)
NOT_CLIP = 0  # cannot be (or become) an OSC 52
MAYBE = 1  # could still become one, or is one whose header is not complete yet
CLIP = 2  # an OSC 52 whose header is complete: read or write is known


class ClipboardPolicy(Protocol):
    """Decides, when an OSC 52 from the child is about to reach the host terminal, whether it
    passes. ``read``: it asks for the clipboard (``Pd = ?``). ``framed``: it sits inside a
    synchronized-output frame (``CSI ? 2026 h`` … ``l``), i.e. it is part of drawn content,
    not a write of its own."""

    def clipboard(self, read: bool, framed: bool) -> bool: ...


@dataclass(frozen=True, slots=True)
class ClipboardSequence:
    """An OSC 52 from the child ended (or was cut short by the end of the output).

    ``passed``: it reached the host terminal unchanged; else it was removed whole. ``size``:
    its length in bytes (never its payload)."""

    read: bool
    passed: bool
    size: int
    # "osc52", "osc1337 Copy", "osc1337 File" (a download), "osc5522" (kitty: a read or the
    # start of a write), "osc5522 data" / "osc5522 end" (a write's data: its start's decision)
    what: str = "osc52"


@dataclass(frozen=True, slots=True)
class GuardedSequence:
    """A sequence that acts outside the window — a title, a notification, a program status
    report (:data:`GUARDED_PS`) — found inside a frame the child draws: content it renders,
    not its own; removed whole (``guard.sequences = own``). ``what``: "osc0", "osc777", …;
    ``size``: its length in bytes (never its payload)."""

    what: str
    size: int


def clip_event(
    read: bool, passed: bool, size: int, what: str
) -> ClipboardSequence | GuardedSequence:
    """The event for a sequence the guard decided (a guarded one is always removed)."""
    if what in GUARDED_WHATS:
        return GuardedSequence(what, size)
    return ClipboardSequence(read, passed, size, what)


_PS = (b"52", b"1337", b"5522")
# The sequences that act outside the window (docs/terminal-guard.md, "Sequences that pose as the
# program"), by ``Ps`` without leading zeros ("" is 0): titles, notifications, program status.
GUARDED_PS: dict[bytes, str] = {
    b"": "osc0",
    b"1": "osc1",
    b"2": "osc2",
    b"9": "osc9",
    b"777": "osc777",
    b"99": "osc99",
    b"7501": "osc7501",
    b"21337": "osc21337",
}
GUARDED_WHATS = frozenset(GUARDED_PS.values())
_ITERM_KEYS = (b"Copy=", b"File=", b"MultipartFile=")
_HEAD_MAX = 8192  # bytes of a sequence looked at to classify it


def is_clip_ps(ps: bytes) -> bool:
    """``Ps`` of an OSC (C0 already removed) is 52 or 1337 (leading zeros allowed)."""
    return ps.lstrip(b"0") in _PS and _DIGITS.fullmatch(ps) is not None


def _kitty(rest: bytes, final: bool) -> tuple[int, bool, str]:
    """What follows ``5522 ;`` (kitty's clipboard protocol): ``type=read`` (a read),
    ``type=write`` (a write begins: "osc5522"), ``type=wdata`` / ``walias`` (its data: "osc5522
    data"; a ``wdata`` without payload ends it: "osc5522 end"). Other types are replies."""
    meta, semi, payload = rest.partition(b";")
    if not semi and not final:
        return MAYBE, False, "osc5522"
    kind = b""
    for item in meta.split(b":"):
        key, _, value = item.partition(b"=")
        if key == b"type":
            kind = value
            break
    if kind == b"read":
        return CLIP, True, "osc5522"
    if kind == b"write":
        return CLIP, False, "osc5522"
    if kind == b"walias":
        return CLIP, False, "osc5522 data"
    if kind == b"wdata":
        if payload:
            return CLIP, False, "osc5522 data"
        return (CLIP, False, "osc5522 end") if final else (MAYBE, False, "osc5522")
    return NOT_CLIP, False, "osc5522"


def _iterm(rest: bytes, final: bool) -> tuple[int, bool, str]:
    """What follows ``1337 ;``: a clipboard write or a download (CLIP), or not."""
    for key in _ITERM_KEYS:
        if rest.startswith(key):
            break
    else:
        if not final and any(k.startswith(rest) for k in _ITERM_KEYS):
            return MAYBE, False, "osc1337"
        return NOT_CLIP, False, "osc1337"
    if key == b"Copy=":
        return CLIP, False, "osc1337 Copy"
    args = rest[len(key) :]
    if key == b"File=":
        args, colon, _ = args.partition(b":")
        if not colon and not final:
            return MAYBE, False, "osc1337 File"
    elif not final:  # MultipartFile=args: its arguments end with it
        return MAYBE, False, "osc1337 File"
    if b"inline=1" in args.split(b";"):
        return NOT_CLIP, False, "osc1337 File"  # an image drawn in the window
    return CLIP, False, "osc1337 File"


def is_read(rest: bytes) -> bool:
    """``rest``: what follows ``52 ;`` (C0 removed). A read is ``Pc ; ?``."""
    _, semi, pd = rest.partition(b";")
    return bool(semi) and pd[:1] == b"?"


def guarded_ps(ps: bytes) -> str | None:
    """``Ps`` of an OSC (C0 already removed) names a guarded sequence: its ``what``, or None."""
    if _DIGITS.fullmatch(ps) is None:
        return None
    return GUARDED_PS.get(ps.lstrip(b"0"))


def clip_head(
    s: bytes, final: bool, clip: bool = True, guard: bool = False
) -> tuple[int, bool, str]:
    """Classify ``s``: an ESC-led sequence (``ESC [C0…] ] …``) without its terminator.

    ``final``: its terminator has arrived (its content is complete). Returns (class, read,
    what) where class is :data:`NOT_CLIP`, :data:`MAYBE` or :data:`CLIP`; ``read`` and
    ``what`` (see :class:`ClipboardSequence`) are meaningful for :data:`CLIP`. Only the first
    8 KiB are looked at (a header longer than that is not complete: :data:`MAYBE`).

    ``clip``: clipboard sequences count; ``guard``: the guarded sequences of
    :data:`GUARDED_PS` count too (``what`` "osc0", "osc777", …; never a read): the tracker
    asks for them only inside a frame, where they are content to remove."""
    if not clip and not guard:
        return _NOT
    content, final, early = _osc_content(s, final)
    if content is None:
        return early
    if guard:
        ps, semi, _ = content.partition(b";")
        if semi:
            what = guarded_ps(ps)
            if what is not None:
                return CLIP, False, what
        elif not final and _DIGITS.fullmatch(ps) is not None:
            short = ps.lstrip(b"0")
            if any(p.startswith(short) for p in GUARDED_PS):
                return MAYBE, False, "osc52"
    return _clip_content(content, final) if clip else _NOT


_NOT = (NOT_CLIP, False, "osc52")


def _osc_content(s: bytes, final: bool) -> tuple[bytes | None, bool, tuple[int, bool, str]]:
    """The content of the OSC that ``s`` begins (C0 removed, at most 8 KiB: then not final), or
    None and the class when ``s`` is no OSC or too short to say."""
    if len(s) > _HEAD_MAX:
        s = s[:_HEAD_MAX]
        final = False
    m = _ESC_SKIP.match(s, 1)
    i = m.end() if m is not None else 1
    if i >= len(s):
        return None, final, ((NOT_CLIP if final else MAYBE), False, "osc52")
    if s[i] != 0x5D:  # ]
        return None, final, _NOT
    content = s[i + 1 :]
    if _OSC_C0.search(content) is not None:
        content = _OSC_C0.sub(b"", content)
    return content, final, _NOT


def _clip_content(content: bytes, final: bool) -> tuple[int, bool, str]:
    """:func:`clip_head` for the clipboard sequences alone, from the OSC's content."""
    ps, semi, rest = content.partition(b";")
    if not semi:
        if final or _DIGITS.fullmatch(ps) is None:
            return NOT_CLIP, False, "osc52"
        short = ps.lstrip(b"0")
        return (MAYBE if any(p.startswith(short) for p in _PS) else NOT_CLIP), False, "osc52"
    if not is_clip_ps(ps):
        return NOT_CLIP, False, "osc52"
    short = ps.lstrip(b"0")
    if short == b"1337":
        return _iterm(rest, final)
    if short == b"5522":
        return _kitty(rest, final)
    _, semi2, pd = rest.partition(b";")
    if (semi2 and pd) or final:
        return CLIP, bool(semi2) and pd[:1] == b"?", "osc52"
    return MAYBE, False, "osc52"
