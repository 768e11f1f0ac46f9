"""The bridge wire protocol, version 1: one line in, one fact (or request, or rejection) out.

Pure: no I/O, no state. ``parse_line`` validates a single newline-delimited JSON line sent by
the Pi extension (``extension/cuewrap-bridge.ts``) and returns

- a ``Fact`` (``cuewrap.facts``) for a Pi event or a ``pi.events`` message,
- ``Auth`` for the first line of a connection, ``Request`` for a ``/cue`` request,
- ``OwnWrite`` for one of Pi's own writes to its terminal (``own``: a title, a status report, a
  notification, a clipboard write, a query; docs/terminal-guard.md, "Whose sequence is it"),
- ``Rejection(reason)`` for anything else. Reasons: ``too_long``, ``bad_json`` (not UTF-8,
  not JSON, not an object), ``unknown_type``, ``bad_field`` (a field missing or of the wrong
  type or shape).

Unknown extra fields are ignored (a newer bridge may add optional fields within version 1).
The full protocol is described in ``docs/bridge-protocol.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    AskBlocked,
    BridgeHello,
    Fact,
    SessionShutdown,
    SessionStart,
    SubagentComplete,
    SubagentForegroundComplete,
    SubagentStarted,
    ToolEnd,
    ToolStart,
    UiPromptEnd,
    UiPromptStart,
    UserInput,
)

PROTOCOL_VERSION = 1
MAX_LINE = 16 * 1024  # bytes, without the newline
MAX_OWN_PART = 2048  # UTF-16 units of an ``own`` write per line (6 bytes each at most in JSON)
MAX_ID = 512  # session ids, tool call ids, run ids, owner ids, tokens
MAX_PATH = 4096  # session file paths
MAX_NAME = 256  # tool names, session names, Pi version
MAX_CAPABILITIES = 64  # words in a hello's capabilities list
MAX_SUMMARY = 1000  # characters of a summary kept (the extension sends at most 200)
MAX_OPTION = 1000  # a dialog's option number (ui_prompt_end's ``option``; the extension's too)

RejectReason = Literal["too_long", "bad_json", "unknown_type", "bad_field"]
CueAction = str  # "status", "on", "off", "unmute", "mute" or "mute DURATION" (_MUTE)


@dataclass(frozen=True)
class Auth:
    """First line of every connection: the token cuewrap put in Pi's environment."""

    token: str


@dataclass(frozen=True)
class Request:
    """``/cue`` in Pi: ``status`` asks for the status page, ``on``/``off`` toggle cues,
    ``mute [DURATION]`` / ``unmute`` mute this session (docs/attention.md)."""

    id: int
    action: CueAction


@dataclass(frozen=True)
class Rejection:
    reason: RejectReason
    detail: str = ""  # which type or field; never a field's value


@dataclass(frozen=True)
class OwnWrite:
    """A part of one of Pi's own writes to its terminal, encoded as Node writes it (UTF-8);
    ``more``: parts follow (a write longer than ``MAX_OWN_PART`` characters, e.g. ``/copy``).
    The connection joins the parts and checks the whole (``term.provenance``). Never a fact:
    the relay writes it to the terminal and its tracker reads it as Pi's."""

    data: bytes
    more: bool = False


Parsed = Fact | Auth | Request | OwnWrite | Rejection


class _Bad(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


# -- field readers -----------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
# No control characters (C0, DEL, C1), line/paragraph separators or lone surrogates.
_CTRL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")

_MISSING = object()


def _get(obj: dict[str, object], key: str) -> object:
    return obj.get(key, _MISSING)


def _text(obj: dict[str, object], key: str, limit: int, *, optional: bool = False) -> str | None:
    """A non-empty string without control characters, at most ``limit`` characters.

    ``optional``: absent or ``null`` gives None.
    """
    v = _get(obj, key)
    if optional and (v is _MISSING or v is None):
        return None
    if not isinstance(v, str) or not v or len(v) > limit or _CTRL.search(v):
        raise _Bad(key)
    return v


def _req_text(obj: dict[str, object], key: str, limit: int) -> str:
    v = _text(obj, key, limit)
    assert v is not None
    return v


def _word(obj: dict[str, object], key: str, *, optional: bool = False) -> str | None:
    """A short identifier such as a mode, reason, kind or outcome (``[A-Za-z0-9_.:-]{1,64}``)."""
    v = _get(obj, key)
    if optional and (v is _MISSING or v is None):
        return None
    if not isinstance(v, str) or not _WORD.fullmatch(v):
        raise _Bad(key)
    return v


def _req_word(obj: dict[str, object], key: str) -> str:
    v = _word(obj, key)
    assert v is not None
    return v


def _bool(obj: dict[str, object], key: str, *, default: bool | None = None) -> bool:
    v = _get(obj, key)
    if v is _MISSING and default is not None:
        return default
    if not isinstance(v, bool):
        raise _Bad(key)
    return v


def _opt_bool(obj: dict[str, object], key: str) -> bool | None:
    v = _get(obj, key)
    if v is _MISSING or v is None:
        return None
    if not isinstance(v, bool):
        raise _Bad(key)
    return v


def _int(obj: dict[str, object], key: str, lo: int, hi: int) -> int:
    v = _get(obj, key)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise _Bad(key)
    return v


def _opt_int(obj: dict[str, object], key: str, lo: int, hi: int) -> int | None:
    """An optional *int* (absent or ``null`` gives None)."""
    v = _get(obj, key)
    if v is _MISSING or v is None:
        return None
    return _int(obj, key, lo, hi)


def _words(obj: dict[str, object], key: str, most: int) -> frozenset[str] | None:
    """An optional list of at most ``most`` words (absent or ``null`` gives None)."""
    v = _get(obj, key)
    if v is _MISSING or v is None:
        return None
    if not isinstance(v, list) or len(v) > most:
        raise _Bad(key)
    for item in v:
        if not isinstance(item, str) or not _WORD.fullmatch(item):
            raise _Bad(key)
    return frozenset(v)


def _summary(obj: dict[str, object], key: str = "summary") -> str | None:
    """The optional ``summary`` text (privacy.body = "summary"): absent, ``null`` or empty gives
    None; any string is kept, cut to ``MAX_SUMMARY`` characters. It is Pi's raw text: control
    characters are allowed here and removed by ``cuewrap.engine.summary`` before any use."""
    v = _get(obj, key)
    if v is _MISSING or v is None or v == "":
        return None
    if not isinstance(v, str):
        raise _Bad(key)
    return v[:MAX_SUMMARY]


def _first_id(obj: dict[str, object], *keys: str) -> str:
    """The first of ``keys`` that is present (absent/null are skipped) as an id."""
    for key in keys:
        v = _text(obj, key, MAX_ID, optional=True)
        if v is not None:
            return v
    raise _Bad("/".join(keys))


# -- one builder per message type -------------------------------------------------------------


def _auth(o: dict[str, object]) -> Auth:
    return Auth(_req_text(o, "token", MAX_ID))


def _hello(o: dict[str, object]) -> BridgeHello:
    pi_version = _text(o, "pi", MAX_NAME, optional=True)
    return BridgeHello(
        protocol=_int(o, "protocol", 0, 2**31 - 1),
        pi_version=pi_version if pi_version is not None else "unknown",
        mode=_word(o, "mode", optional=True),
        has_ui=_bool(o, "hasUI"),
        session_id=_req_text(o, "sessionId", MAX_ID),
        session_file=_text(o, "sessionFile", MAX_PATH, optional=True),
        pid=_int(o, "pid", 1, 2**31 - 1),
        session_name=_text(o, "sessionName", MAX_NAME, optional=True),
        capabilities=_words(o, "capabilities", MAX_CAPABILITIES),
    )


def _session_start(o: dict[str, object]) -> SessionStart:
    return SessionStart(
        reason=_req_word(o, "reason"),
        session_id=_req_text(o, "sessionId", MAX_ID),
        session_file=_text(o, "sessionFile", MAX_PATH, optional=True),
    )


def _tool_start(o: dict[str, object]) -> ToolStart:
    return ToolStart(
        _req_text(o, "toolCallId", MAX_ID),
        _req_text(o, "toolName", MAX_NAME),
        _summary(o),
        _summary(o, "dialog"),
    )


def _tool_end(o: dict[str, object]) -> ToolEnd:
    return ToolEnd(
        _req_text(o, "toolCallId", MAX_ID),
        _req_text(o, "toolName", MAX_NAME),
        _bool(o, "isError"),
    )


def _ask_blocked(o: dict[str, object]) -> AskBlocked:
    return AskBlocked(_bool(o, "active"), _text(o, "toolCallId", MAX_ID, optional=True))


def _subagent_started(o: dict[str, object]) -> SubagentStarted:
    return SubagentStarted(
        run_id=_first_id(o, "id", "runId"),
        session_id=_req_text(o, "sessionId", MAX_PATH),
        completion_owner_id=_req_text(o, "completionOwnerId", MAX_ID),
        artifact_version=_int(o, "lifecycleArtifactVersion", 0, 2**31 - 1),
        parent=_text(o, "parent", MAX_PATH, optional=True),
        owner_now=_text(o, "ownerNow", MAX_ID, optional=True),
    )


def _subagent_complete(o: dict[str, object]) -> SubagentComplete:
    return SubagentComplete(
        run_id=_first_id(o, "runId", "id"),
        session_id=_req_text(o, "sessionId", MAX_PATH),
        completion_owner_id=_req_text(o, "completionOwnerId", MAX_ID),
        success=_opt_bool(o, "success"),
        awaited_by_workflow=_bool(o, "awaitedByWorkflow", default=False),
        parent=_text(o, "parent", MAX_PATH, optional=True),
        owner_now=_text(o, "ownerNow", MAX_ID, optional=True),
    )


def _subagent_foreground(o: dict[str, object]) -> SubagentForegroundComplete:
    return SubagentForegroundComplete(_first_id(o, "runId"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _own(o: dict[str, object]) -> OwnWrite:
    """``{"type": "own", "data": "<part of the write>", "more": bool}``: a part of the string
    Pi wrote, encoded as Node writes it (UTF-8, a lone surrogate as U+FFFD)."""
    v = _get(o, "data")
    if not isinstance(v, str) or not v or len(v) > MAX_OWN_PART:
        raise _Bad("data")
    return OwnWrite(_SURROGATE.sub("\ufffd", v).encode("utf-8"), _bool(o, "more", default=False))


_ACTIONS: tuple[CueAction, ...] = ("status", "on", "off", "unmute", "mute")
_MUTE = re.compile(r"mute [0-9]{1,7}[smhd]?")  # a duration, checked again where it is used


def _request(o: dict[str, object]) -> Request:
    action = _get(o, "action")
    for a in _ACTIONS:
        if action == a:
            return Request(_int(o, "id", 0, 2**31 - 1), a)
    if isinstance(action, str) and _MUTE.fullmatch(action):
        return Request(_int(o, "id", 0, 2**31 - 1), action)
    raise _Bad("action")


_BUILDERS: dict[str, Callable[[dict[str, object]], Parsed]] = {
    "auth": _auth,
    "hello": _hello,
    "session_start": _session_start,
    "session_shutdown": lambda o: SessionShutdown(_req_word(o, "reason")),
    "input": lambda o: UserInput(_req_word(o, "source")),
    "agent_start": lambda o: AgentStart(),
    "agent_end": lambda o: AgentEnd(_word(o, "stopReason", optional=True), _summary(o)),
    "agent_before_settle": lambda o: AgentBeforeSettle(_word(o, "outcome", optional=True)),
    "agent_settled": lambda o: AgentSettled(_bool(o, "aborted")),
    "tool_execution_start": _tool_start,
    "tool_execution_end": _tool_end,
    "ui_prompt_start": lambda o: UiPromptStart(
        _req_word(o, "kind"), _summary(o), _summary(o, "dialog")
    ),
    "ui_prompt_end": lambda o: UiPromptEnd(
        _req_word(o, "kind"), _opt_int(o, "option", 0, MAX_OPTION)
    ),
    "rpiv:ask-user:blocked": _ask_blocked,
    "subagent:async-started": _subagent_started,
    "subagent:async-complete": _subagent_complete,
    "subagent:foreground-complete": _subagent_foreground,
    "request": _request,
    "own": _own,
}

MESSAGE_TYPES = frozenset(_BUILDERS)


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN, Infinity, -Infinity are not JSON


def parse_line(line: bytes) -> Parsed:
    """Validate one line (without or with its trailing newline)."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if len(line) > MAX_LINE:
        return Rejection("too_long")
    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Rejection("bad_json")
    if not isinstance(obj, dict):
        return Rejection("bad_json", "not an object")
    kind = obj.get("type")
    builder = _BUILDERS.get(kind) if isinstance(kind, str) else None
    if builder is None:
        return Rejection("unknown_type")
    try:
        return builder(obj)
    except _Bad as bad:
        return Rejection("bad_field", f"{kind}.{bad.detail}")


def encode(message: dict[str, object]) -> bytes:
    """One outbound line (cuewrap → bridge): compact JSON, ASCII only, newline-terminated."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def reply(request_id: int, text: str) -> dict[str, object]:
    return {"type": "reply", "id": request_id, "text": text}


def notify(text: str) -> dict[str, object]:
    return {"type": "notify", "text": text}
