"""Clipboard sequences in the child's output (docs/terminal-guard.md): OSC 52, and iTerm2's
``OSC 1337 ; Copy=`` and file downloads (``OSC 1337 ; File=`` / ``MultipartFile=`` without
``inline=1``; inline images are not guarded).

``ESC ] 52 ; Pc ; Pd`` sets the clipboard named by ``Pc`` to the base64 text ``Pd`` in most
terminals (kitty, WezTerm, Ghostty, Alacritty, foot, xterm when allowed); ``Pd = ?`` asks the
terminal to type the clipboard back into the program's input. A model's answer that carries
one (prompt injection) would write the user's clipboard: the output tracker recognises them and
asks a :class:`ClipboardPolicy` whether each one reaches the host terminal.

What counts as one, as strictly as the terminals that accept the most: its number as any
terminal reads it (:mod:`cuewrap.term.oscnum`: ``052;``, ``52c;`` in kitty, …), C0 controls
anywhere inside (terminals ignore them), and any terminator:
BEL, ST, an ESC that is not followed by ``\\``, CAN and SUB (terminals built on the DEC
parser model dispatch an OSC on every one of these). Only this module's pure helpers are here;
the tracker does the scanning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from cuewrap.term.oscnum import open_number, readings

_ESC_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")
_OSC_C0 = re.compile(rb"[\x00-\x06\x08-\x17\x19\x1c-\x1f]")

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
    why: str = ""  # the reason of the decision (filled on the byte path: relay/decisions.py)


@dataclass(frozen=True, slots=True)
class GuardedSequence:
    """A sequence that acts outside the window — a title, a notification, a program status
    report, the current directory, a font, a colour query, iTerm2's commands
    (:data:`GUARDED_WHATS`) — found inside a frame the child draws: content it renders, not its
    own; removed whole (``guard.sequences = own``). ``what``: "osc0", "osc777", "osc11 query", …;
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


# The sequences that act outside the window (docs/terminal-guard.md, "Sequences that pose as the
# program"), by number: titles, notifications, program status, the current directory (OSC 7:
# terminals open new tabs there), fonts (OSC 50: set, or asked for and answered into the input).
GUARDED_PS: dict[int, str] = {
    0: "osc0",
    1: "osc1",
    2: "osc2",
    7: "osc7",
    9: "osc9",
    50: "osc50",
    99: "osc99",
    777: "osc777",
    7501: "osc7501",
    21337: "osc21337",
}
# Colour and palette OSCs that a "?" in the payload makes a query the terminal answers into the
# program's input (xterm's 4, 5, 10-19; kitty's 21 colours and 22 pointer shapes). Setting or
# resetting a colour acts inside the window only: without a "?" they pass.
QUERY_PS: dict[int, str] = {n: f"osc{n} query" for n in (4, 5, *range(10, 20), 21, 22)}
# OSC 1337 (iTerm2) but images, the clipboard guard's copies and downloads, and the parts of
# multipart ones: SetUserVar, RequestAttention, StealFocus, CurrentDir, ReportCellSize, …
ITERM_WHAT = "osc1337"
GUARDED_WHATS = frozenset((*GUARDED_PS.values(), *QUERY_PS.values(), ITERM_WHAT))
_ITERM_KEYS = (b"Copy=", b"File=", b"MultipartFile=")
_ITERM_OWN = (*_ITERM_KEYS, b"FilePart=", b"FileEnd")  # never ITERM_WHAT
_HEAD_MAX = 8192  # bytes of a sequence looked at to classify it
_NOT = (NOT_CLIP, False, "osc52")


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


def _osc52(rest: bytes, final: bool) -> tuple[int, bool, str]:
    """What follows ``52 ;``: ``Pc ; Pd``, a read when ``Pd`` is ``?``."""
    _, semi, pd = rest.partition(b";")
    if (semi and pd) or final:
        return CLIP, bool(semi) and pd[:1] == b"?", "osc52"
    return MAYBE, False, "osc52"


def _clip_reading(code: int, payload: bytes, final: bool) -> tuple[int, bool, str]:
    """A clipboard sequence (OSC 52, 1337, 5522) read as ``code`` with ``payload``."""
    if code == 52:
        return _osc52(payload, final)
    if code == 1337:
        return _iterm(payload, final)
    if code == 5522:
        return _kitty(payload, final)
    return _NOT


def _guarded_reading(code: int, payload: bytes, final: bool) -> tuple[int, str]:
    """A guarded sequence (:data:`GUARDED_WHATS`) read as ``code`` with ``payload``: (class,
    what)."""
    what = GUARDED_PS.get(code)
    if what is not None:
        return CLIP, what
    what = QUERY_PS.get(code)
    if what is not None:
        if b"?" in payload:
            return CLIP, what
        return (NOT_CLIP if final else MAYBE), what
    if code == 1337:
        if payload.startswith(_ITERM_OWN):
            return NOT_CLIP, ITERM_WHAT
        if not final and any(k.startswith(payload) for k in _ITERM_OWN):
            return MAYBE, ITERM_WHAT
        return CLIP, ITERM_WHAT
    return NOT_CLIP, ""


def osc_class(
    content: bytes, final: bool, clip: bool = True, guard: bool = False
) -> tuple[int, bool, str]:
    """Classify an OSC by its ``content`` (C0 removed, no terminator) as any terminal reads its
    number (:func:`cuewrap.term.oscnum.readings`): (class, read, what) as for :func:`clip_head`.
    A guarded reading wins over a clipboard one (it is removed whatever the clipboard policy),
    a reading not decided yet over a decided clipboard one, a read over a write."""
    if not final and open_number(content):
        return MAYBE, False, "osc52"  # the number is not known yet
    maybe: tuple[int, bool, str] | None = None
    found: tuple[int, bool, str] | None = None
    for code, payload in readings(content):
        if guard:
            kind, what = _guarded_reading(code, payload, final)
            if kind == CLIP:
                return CLIP, False, what
            if kind == MAYBE and maybe is None:
                maybe = (MAYBE, False, what)
        if clip:
            got = _clip_reading(code, payload, final)
            if got[0] == MAYBE:
                if maybe is None:
                    maybe = got
            elif got[0] == CLIP and (found is None or got[1]):
                found = got
    return maybe or found or _NOT


def guarded_what(content: bytes) -> tuple[str, bytes] | None:
    """The guarded class of a complete OSC (content as for :func:`osc_class`), and the payload
    of the reading that makes it one; None when no reading does."""
    for code, payload in readings(content):
        kind, what = _guarded_reading(code, payload, True)
        if kind == CLIP:
            return what, payload
    return None


def clip_head(
    s: bytes, final: bool, clip: bool = True, guard: bool = False
) -> tuple[int, bool, str]:
    """Classify ``s``: an ESC-led sequence (``ESC [C0…] ] …``) without its terminator.

    ``final``: its terminator has arrived (its content is complete). Returns (class, read,
    what) where class is :data:`NOT_CLIP`, :data:`MAYBE` or :data:`CLIP`; ``read`` and
    ``what`` (see :class:`ClipboardSequence`) are meaningful for :data:`CLIP`. Only the first
    8 KiB are looked at (a header longer than that is not complete: :data:`MAYBE`).

    ``clip``: clipboard sequences count; ``guard``: the guarded sequences of
    :data:`GUARDED_WHATS` count too (``what`` "osc0", "osc777", …; never a read): the tracker
    asks for them only inside a frame, where they are content to remove. Every spelling a
    terminal reads counts (:func:`osc_class`)."""
    if not clip and not guard:
        return _NOT
    content, final, early = _osc_content(s, final)
    if content is None:
        return early
    return osc_class(content, final, clip, guard)


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
