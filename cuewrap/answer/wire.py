"""The control socket's wire format (pure): one request line, one reply line, bounded.

Request: one JSON object on one line, at most ``MAX_REQUEST`` bytes with its newline::

    {"v": 1, "op": "answer", "choice": "2"}                    by the session's pid
    {"v": 1, "op": "answer", "choice": "yes", "token": "…"}    by token
    {"v": 1, "op": "mute", "duration": 1800}                   cuewrap mute (null: no end)
    {"v": 1, "op": "unmute"}                                   cuewrap unmute
    {"v": 1, "op": "popup"}            another session: show the desktop popup you lead

Reply: ``{"ok": true}``, ``{"ok": true, "said": "<one line>"}`` (an answer: what the dialog
closed with) or ``{"ok": false, "why": "<one line>"}``. Anything else is refused with a reason
(``read_request`` never raises on any bytes).
"""

from __future__ import annotations

import json
from typing import NamedTuple

MAX_REQUEST = 1024
MAX_CHOICE = 200
MAX_TOKEN = 100
VERSION = 1
MAX_MUTE = 7 * 24 * 3600  # seconds: a mute lasts at most a week


class Request(NamedTuple):
    choice: str
    token: str | None


class MuteRequest(NamedTuple):
    """``cuewrap mute`` (``muted``, for ``duration`` seconds or None: until unmuted) or
    ``cuewrap unmute`` (docs/attention.md)."""

    muted: bool
    duration: float | None


class PopupRequest(NamedTuple):
    """Another session of this user: show the desktop popup several sessions share, which
    this one leads (deliver/batch.py)."""


class Incomplete(NamedTuple):
    """More bytes are needed (no newline yet)."""


def read_request(data: bytes) -> Request | MuteRequest | PopupRequest | Incomplete | str:
    """The request in ``data`` (what a connection sent so far): a ``Request``, ``Incomplete``
    or why it is refused."""
    end = data.find(b"\n")
    if end < 0:
        return "request too long" if len(data) >= MAX_REQUEST else Incomplete()
    if end + 1 > MAX_REQUEST:
        return "request too long"
    if end + 1 != len(data):
        return "more than one request"
    try:
        obj = json.loads(data[:end].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "not JSON"
    if not isinstance(obj, dict):
        return "not an object"
    if obj.get("v") != VERSION or obj.get("op") not in ("answer", "mute", "unmute", "popup"):
        return "unknown request"
    if obj["op"] == "popup":
        return PopupRequest() if len(obj) == 2 else "bad request"
    if obj["op"] == "unmute":
        return MuteRequest(False, None) if len(obj) == 2 else "bad request"
    if obj["op"] == "mute":
        duration = obj.get("duration")
        if duration is None:
            return MuteRequest(True, None)
        if (
            isinstance(duration, bool)
            or not isinstance(duration, int | float)
            or not 0 < duration <= MAX_MUTE
        ):
            return "bad duration"
        return MuteRequest(True, float(duration))
    choice = obj.get("choice")
    if not isinstance(choice, str) or not choice.strip() or len(choice) > MAX_CHOICE:
        return "bad choice"
    token = obj.get("token")
    if token is not None and (not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN):
        return "bad token"
    return Request(choice, token)


def _line(text: str) -> bool:
    """One printable line, bounded: what a reply may make the command print."""
    return 0 < len(text) <= MAX_CHOICE and text.isprintable()


def request_line(choice: str, token: str | None) -> bytes:
    obj: dict[str, object] = {"v": VERSION, "op": "answer", "choice": choice}
    if token is not None:
        obj["token"] = token
    return json.dumps(obj).encode() + b"\n"


def mute_line(muted: bool, duration: float | None) -> bytes:
    obj: dict[str, object] = {"v": VERSION, "op": "mute" if muted else "unmute"}
    if muted:
        obj["duration"] = duration
    return json.dumps(obj).encode() + b"\n"


def reply_line(ok: bool, why: str = "") -> bytes:
    """``why``: why not, or what was done (``said``: none when empty)."""
    obj: dict[str, object] = {"ok": ok}
    if not ok:
        obj["why"] = why
    elif why:
        obj["said"] = why
    return json.dumps(obj).encode() + b"\n"


def read_reply(data: bytes) -> tuple[bool, str]:
    """The session's reply as (ok, why not / what was done: "" when it said nothing); a
    broken one is not ok."""
    try:
        obj = json.loads(data.split(b"\n", 1)[0][:MAX_REQUEST].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, "the session gave no answer"
    if not isinstance(obj, dict) or not isinstance(obj.get("ok"), bool):
        return False, "the session gave no answer"
    if obj["ok"]:
        said = obj.get("said")
        return True, said if isinstance(said, str) and _line(said) else ""
    why = obj.get("why")
    return False, why if isinstance(why, str) and why else "refused"
