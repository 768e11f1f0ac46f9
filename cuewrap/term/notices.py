"""A child's own notifications in its output: OSC 9, OSC 777 and OSC 99
(docs/design.md#generic-mode).

Pure and incremental: the tracker hands every complete ``OSC 9|777|99 ; …`` to
:meth:`NoticeParser.osc` and gets back the notification it completes (if any) and whether
to remove that OSC from the output. Removal ("consume") is decided by a :class:`NoticePolicy`
supplied from outside (the cue side knows presence and what the host terminal shows); the
parser only asks it, once per notification, when the tracker says the OSC could be removed
at all.

What is a notification (and what is not):

- ``OSC 9 ; text`` (iTerm2 "Post a notification"). NOT ``OSC 9 ; <digits>`` or
  ``OSC 9 ; <digits> ; …``: those are ConEmu / Windows Terminal commands (``9;4`` is the progress
  bar Pi and others use, docs/pi-facts.md#escape-sequences); they are never events and never
  removed.
- ``OSC 777 ; notify ; title ; body`` (rxvt-unicode notify extension, VTE, foot). Other
  ``OSC 777`` commands (VTE's ``preexec`` / ``precmd`` shell integration) are not.
- ``OSC 99 ; metadata ; payload`` (kitty "Desktop notifications"): colon-separated ``k=v``
  metadata; ``p`` is ``title`` (default) or ``body``; chunks with the same ``i`` (default
  ``0``) are concatenated while ``d=0`` and the notification is complete at ``d=1`` (the
  default); ``e=1`` means a base64 payload. Other payload types (``close``, ``?``, ``alive``,
  icons, buttons) are not notifications: never events, never removed.

A multi-part OSC 99 notification is consumed or passed as a whole: the decision is made at
its first chunk and kept for the rest, so the host never sees half of one.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Literal, Protocol

NoticeProtocol = Literal["osc9", "osc777", "osc99"]
NOTICE_PROTOCOLS: tuple[NoticeProtocol, ...] = ("osc9", "osc777", "osc99")

TEXT_CAP = 4096  # bytes kept of a title or body (terminals cap them too)
PENDING_MAX = 16  # OSC 99 notifications being assembled at once; the oldest is dropped

# What follows ``ESC ]`` in each protocol (the tracker holds these prefixes at a chunk end).
INTROS: tuple[tuple[bytes, NoticeProtocol], ...] = (
    (b"\x1b]9;", "osc9"),
    (b"\x1b]777;", "osc777"),
    (b"\x1b]99;", "osc99"),
)
_PS: dict[bytes, NoticeProtocol] = {b"9": "osc9", b"777": "osc777", b"99": "osc99"}
_OSC9_COMMAND = re.compile(rb"[0-9]+(?:;|\Z)")
_KITTY_ID = re.compile(rb"[A-Za-z0-9_.+-]{1,64}")


class NoticePolicy(Protocol):
    """Decides, at the moment a child's notification passes, whether cuewrap takes it out of
    the output (to re-emit it in the host's protocol) or lets it through unchanged."""

    def consume(self, protocol: NoticeProtocol) -> bool: ...


@dataclass(frozen=True, slots=True)
class ChildNotification:
    """A complete notification from the child. ``consumed``: removed from the output (the
    cue side must deliver it); else it went to the host terminal unchanged."""

    protocol: NoticeProtocol
    title: str
    body: str
    consumed: bool


def protocol_of(ps: bytes) -> NoticeProtocol | None:
    """The notification protocol of an OSC number (``b"9"`` …), or None."""
    return _PS.get(ps)


def _text(raw: bytes) -> str:
    return raw[:TEXT_CAP].decode("utf-8", "replace")


class NoticeParser:
    """Turns complete notification OSCs into :class:`ChildNotification` values."""

    def __init__(self) -> None:
        # OSC 99 id -> [consumed, title, body] while its chunks arrive (d=0)
        self._pending: dict[bytes, list[object]] = {}

    @property
    def consuming(self) -> bool:
        """An OSC 99 notification being assembled is being consumed (hold its next chunk)."""
        return any(p[0] for p in self._pending.values())

    def osc(
        self, proto: NoticeProtocol, rest: bytes, policy: NoticePolicy | None
    ) -> tuple[ChildNotification | None, bool]:
        """One complete OSC (``rest``: what follows ``Ps ;``). ``policy`` is None when this
        OSC cannot be removed (not at a safe point, already released, or no policy).

        Returns (the notification it completes or None, remove this OSC)."""
        if proto == "osc9":
            if not rest or _OSC9_COMMAND.match(rest):
                return None, False
            cut = policy is not None and policy.consume("osc9")
            return ChildNotification("osc9", "", _text(rest), cut), cut
        if proto == "osc777":
            fields = rest.split(b";", 2)
            if fields[0] != b"notify" or len(fields) < 2:
                return None, False
            body = fields[2] if len(fields) > 2 else b""
            cut = policy is not None and policy.consume("osc777")
            return ChildNotification("osc777", _text(fields[1]), _text(body), cut), cut
        return self._osc99(rest, policy)

    def _osc99(
        self, rest: bytes, policy: NoticePolicy | None
    ) -> tuple[ChildNotification | None, bool]:
        meta, semi, payload = rest.partition(b";")
        if not semi:
            return None, False
        keys: dict[bytes, bytes] = {}
        for item in meta.split(b":"):
            k, eq, v = item.partition(b"=")
            if eq and len(k) == 1:
                keys[k] = v
        kind = keys.get(b"p", b"title")
        if kind not in (b"title", b"body"):
            return None, False  # close, ?, alive, icon, buttons …: not a notification
        ident = keys.get(b"i", b"0")
        if _KITTY_ID.fullmatch(ident) is None:
            return None, False
        if keys.get(b"e") == b"1":
            try:
                payload = binascii.a2b_base64(payload)
            except (binascii.Error, ValueError):
                payload = b""
        part = self._pending.pop(ident, None)
        if part is None:
            cut = policy is not None and policy.consume("osc99")
            part = [cut, b"", b""]
        elif part[0] and policy is None:
            part[0] = False  # a chunk of a consumed one could not be removed: it is out now
        slot = 1 if kind == b"title" else 2
        text: bytes = part[slot]  # type: ignore[assignment]
        part[slot] = (text + payload)[:TEXT_CAP]
        cut = bool(part[0])
        if keys.get(b"d", b"1") == b"0":
            if len(self._pending) >= PENDING_MAX:
                self._pending.pop(next(iter(self._pending)))
            self._pending[ident] = part
            return None, cut
        title: bytes = part[1]  # type: ignore[assignment]
        body: bytes = part[2]  # type: ignore[assignment]
        return ChildNotification("osc99", _text(title), _text(body), cut), cut
