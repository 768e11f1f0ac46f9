"""Pure tests of the bridge protocol: one line → fact, request, auth or rejection."""

from __future__ import annotations

import json
from typing import Any

import pytest
from shared import HELLO as MINIMAL_HELLO

from cuewrap.bridge.protocol import (
    MAX_ID,
    MAX_LINE,
    MAX_NAME,
    MAX_PATH,
    MESSAGE_TYPES,
    Auth,
    Rejection,
    Request,
    encode,
    notify,
    parse_line,
    reply,
)
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    AskBlocked,
    BridgeHello,
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

pytestmark = pytest.mark.unit

SID = "01a2369a-248d-7286-9e3b-473323633d9f"
SFILE = "/home/u/.pi/agent/sessions/--w--/2026-12-02_x.jsonl"

# the minimal hello with a real session's id and file, its name still unset
HELLO: dict[str, Any] = {
    **MINIMAL_HELLO,
    "sessionId": SID,
    "sessionFile": SFILE,
    "sessionName": None,
    "pid": 4242,
}
STARTED: dict[str, Any] = {
    "type": "subagent:async-started",
    "id": "run-1",
    "sessionId": SFILE,
    "completionOwnerId": "owner-1",
    "lifecycleArtifactVersion": 3,
    "parent": SFILE,
    "ownerNow": "owner-1",
}
COMPLETE: dict[str, Any] = {
    "type": "subagent:async-complete",
    "runId": "run-1",
    "sessionId": SFILE,
    "completionOwnerId": "owner-1",
    "success": True,
    "awaitedByWorkflow": False,
    "parent": SFILE,
    "ownerNow": "owner-1",
}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    d = dict(base)
    for k, v in changes.items():
        if v is _DEL:
            d.pop(k, None)
        else:
            d[k] = v
    return d


_DEL = object()


def bad_field(obj: Any) -> None:
    r = parse_line(line(obj))
    assert isinstance(r, Rejection) and r.reason == "bad_field", r


# -- framing -----------------------------------------------------------------------------------


def test_newline_optional() -> None:
    assert parse_line(b'{"type":"agent_start"}') == AgentStart()
    assert parse_line(b'{"type":"agent_start"}\n') == AgentStart()


def test_too_long() -> None:
    pad = "x" * MAX_LINE
    assert parse_line(line({"type": "agent_start", "pad": pad})) == Rejection("too_long")
    # exactly at the limit is fine (unknown fields are ignored)
    base = len(json.dumps({"type": "agent_start", "pad": ""}).encode())
    ok = json.dumps({"type": "agent_start", "pad": "x" * (MAX_LINE - base)}).encode()
    assert len(ok) == MAX_LINE
    assert parse_line(ok) == AgentStart()


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b'{"type": "agent_start"',
        b"\xff\xfe{}",
        b'{"type":"agent_settled","aborted":NaN}',
        b'{"type":"agent_settled","aborted":Infinity}',
        b"[" * 8000 + b"]" * 8000,  # deep nesting: RecursionError inside json
    ],
)
def test_bad_json(raw: bytes) -> None:
    r = parse_line(raw)
    assert isinstance(r, Rejection) and r.reason == "bad_json"


@pytest.mark.parametrize("raw", [b"[]", b"1", b'"agent_start"', b"null", b"true"])
def test_not_an_object(raw: bytes) -> None:
    r = parse_line(raw)
    assert isinstance(r, Rejection) and r.reason == "bad_json"


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"type": 1},
        {"type": None},
        {"type": "agent_started"},
        {"type": "message_update"},
        {"type": "rpiv:ask-user:prompt", "questions": []},
        {"type": "reply", "id": 1, "text": "x"},
        {"type": "notify", "text": "x"},
    ],
)
def test_unknown_type(obj: dict[str, Any]) -> None:
    assert parse_line(line(obj)) == Rejection("unknown_type")


def test_message_types_are_the_documented_set() -> None:
    assert {
        "auth",
        "hello",
        "session_start",
        "session_shutdown",
        "input",
        "agent_start",
        "agent_end",
        "agent_before_settle",
        "agent_settled",
        "tool_execution_start",
        "tool_execution_end",
        "ui_prompt_start",
        "ui_prompt_end",
        "rpiv:ask-user:blocked",
        "subagent:async-started",
        "subagent:async-complete",
        "subagent:foreground-complete",
        "request",
        "own",
    } == MESSAGE_TYPES


def test_unknown_fields_are_ignored() -> None:
    assert parse_line(line({"type": "agent_settled", "aborted": True, "x": [1]})) == (
        AgentSettled(True)
    )


def test_rejection_detail_names_field_not_value() -> None:
    r = parse_line(line(with_(HELLO, sessionId="secret\nvalue")))
    assert r == Rejection("bad_field", "hello.sessionId")


# -- auth and hello ------------------------------------------------------------------------


def test_auth() -> None:
    assert parse_line(line({"type": "auth", "token": "ab" * 32})) == Auth("ab" * 32)
    for bad in ["", None, 5, "x" * (MAX_ID + 1), "a\nb"]:
        bad_field({"type": "auth", "token": bad})
    bad_field({"type": "auth"})


def test_hello() -> None:
    assert parse_line(line(HELLO)) == BridgeHello(
        protocol=1,
        pi_version="1.4.0",
        mode="tui",
        has_ui=True,
        session_id=SID,
        session_file=SFILE,
        pid=4242,
        session_name=None,
    )


def test_hello_optional_fields() -> None:
    h = parse_line(line(with_(HELLO, pi=None, sessionFile=_DEL, sessionName="my work")))
    assert isinstance(h, BridgeHello)
    assert h.pi_version == "unknown" and h.session_file is None and h.session_name == "my work"
    h = parse_line(line(with_(HELLO, pi=_DEL, sessionName=_DEL)))
    assert isinstance(h, BridgeHello) and h.pi_version == "unknown" and h.session_name is None


def test_hello_of_an_older_pi_without_mode_and_with_capabilities() -> None:
    # Pi 0.74.2 has no ctx.mode: the bridge sends null; capabilities say what this Pi emits
    h = parse_line(line(with_(HELLO, mode=None, capabilities=["agent_settled", "ui_prompt"])))
    assert isinstance(h, BridgeHello)
    assert h.mode is None and h.capabilities == frozenset({"agent_settled", "ui_prompt"})
    h = parse_line(line(with_(HELLO, mode=_DEL, capabilities=[])))
    assert isinstance(h, BridgeHello) and h.mode is None and h.capabilities == frozenset()
    h = parse_line(line(with_(HELLO, capabilities=None)))
    assert isinstance(h, BridgeHello) and h.capabilities is None


def test_hello_other_protocol_versions_parse() -> None:
    # The server, not the parser, decides which versions it speaks.
    h = parse_line(line(with_(HELLO, protocol=2)))
    assert isinstance(h, BridgeHello) and h.protocol == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("protocol", "1"),
        ("protocol", 1.0),
        ("protocol", True),
        ("protocol", -1),
        ("protocol", _DEL),
        ("pi", 140),
        ("pi", "x" * (MAX_NAME + 1)),
        ("mode", ""),
        ("mode", "t ui"),
        ("mode", "x" * 65),
        ("capabilities", "osc7501"),
        ("capabilities", ["agent settled"]),
        ("capabilities", [7]),
        ("capabilities", ["x"] * 65),
        ("hasUI", 1),
        ("hasUI", "true"),
        ("hasUI", None),
        ("hasUI", _DEL),
        ("sessionId", None),
        ("sessionId", ""),
        ("sessionId", 7),
        ("sessionId", "x" * (MAX_ID + 1)),
        ("sessionId", "a\x00b"),
        ("sessionId", "a\u2028b"),
        ("sessionId", "a\x9bb"),
        ("sessionId", "a\ud800b"),
        ("sessionFile", 3),
        ("sessionFile", ""),
        ("sessionFile", "/x" * MAX_PATH),
        ("sessionFile", "/tmp/a\nb"),
        ("sessionName", ["x"]),
        ("sessionName", "x" * (MAX_NAME + 1)),
        ("sessionName", "a\x1b]0;evil\x07"),
        ("pid", 0),
        ("pid", "42"),
        ("pid", 42.5),
        ("pid", True),
        ("pid", 2**31),
        ("pid", _DEL),
    ],
)
def test_hello_bad_fields(key: str, value: Any) -> None:
    r = parse_line(line(with_(HELLO, **{key: value})))
    assert r == Rejection("bad_field", f"hello.{key}")


def test_non_ascii_text_is_fine() -> None:
    h = parse_line(line(with_(HELLO, sessionName="π – café 日本")))
    assert isinstance(h, BridgeHello) and h.session_name == "π – café 日本"


# -- session and run events ---------------------------------------------------------------


def test_session_start() -> None:
    msg = {"type": "session_start", "reason": "reload", "sessionId": SID, "sessionFile": SFILE}
    assert parse_line(line(msg)) == SessionStart("reload", SID, SFILE)
    assert parse_line(line(with_(msg, sessionFile=None))) == SessionStart("reload", SID, None)
    bad_field(with_(msg, reason=None))
    bad_field(with_(msg, reason="re load"))
    bad_field(with_(msg, sessionId=_DEL))
    bad_field(with_(msg, sessionFile=1))


def test_session_shutdown() -> None:
    for reason in ("quit", "reload", "new", "resume", "fork"):
        assert parse_line(line({"type": "session_shutdown", "reason": reason})) == (
            SessionShutdown(reason)
        )
    bad_field({"type": "session_shutdown"})
    bad_field({"type": "session_shutdown", "reason": None})
    bad_field({"type": "session_shutdown", "reason": 3})


def test_input_carries_source_only() -> None:
    assert parse_line(line({"type": "input", "source": "interactive"})) == UserInput("interactive")
    assert parse_line(line({"type": "input", "source": "rpc", "text": "ignored"})) == UserInput(
        "rpc"
    )
    bad_field({"type": "input"})
    bad_field({"type": "input", "source": "my prompt text"})


def test_agent_events() -> None:
    assert parse_line(line({"type": "agent_start"})) == AgentStart()
    assert parse_line(line({"type": "agent_end", "stopReason": "stop"})) == AgentEnd("stop")
    assert parse_line(line({"type": "agent_end", "stopReason": None})) == AgentEnd(None)
    assert parse_line(line({"type": "agent_end"})) == AgentEnd(None)
    bad_field({"type": "agent_end", "stopReason": 1})
    bad_field({"type": "agent_end", "stopReason": "the assistant said this"})
    for outcome in ("completed", "error", "aborted"):
        assert parse_line(line({"type": "agent_before_settle", "outcome": outcome})) == (
            AgentBeforeSettle(outcome)
        )
    assert parse_line(line({"type": "agent_before_settle"})) == AgentBeforeSettle(None)
    bad_field({"type": "agent_before_settle", "outcome": False})
    assert parse_line(line({"type": "agent_settled", "aborted": False})) == AgentSettled(False)
    assert parse_line(line({"type": "agent_settled", "aborted": True})) == AgentSettled(True)
    bad_field({"type": "agent_settled"})
    bad_field({"type": "agent_settled", "aborted": 0})
    bad_field({"type": "agent_settled", "aborted": None})


def test_tool_events() -> None:
    start = {"type": "tool_execution_start", "toolCallId": "call_1", "toolName": "bash"}
    assert parse_line(line(start)) == ToolStart("call_1", "bash")
    end = {**start, "type": "tool_execution_end", "isError": True}
    assert parse_line(line(end)) == ToolEnd("call_1", "bash", True)
    for msg in (start, end):
        bad_field(with_(msg, toolCallId=_DEL))
        bad_field(with_(msg, toolCallId=""))
        bad_field(with_(msg, toolCallId=12))
        bad_field(with_(msg, toolCallId="x" * (MAX_ID + 1)))
        bad_field(with_(msg, toolName=None))
        bad_field(with_(msg, toolName="x" * (MAX_NAME + 1)))
    bad_field(with_(end, isError=_DEL))
    bad_field(with_(end, isError="false"))
    # nested call ids (codemode) look like "<parent>/<n>": accepted
    assert parse_line(line(with_(start, toolCallId="call_1/2"))) == ToolStart("call_1/2", "bash")


def test_ui_prompt_events() -> None:
    for kind in ("select", "confirm", "input", "editor", "custom"):
        assert parse_line(line({"type": "ui_prompt_start", "kind": kind})) == UiPromptStart(kind)
        assert parse_line(line({"type": "ui_prompt_end", "kind": kind})) == UiPromptEnd(kind)
    bad_field({"type": "ui_prompt_start"})
    bad_field({"type": "ui_prompt_end", "kind": "Really delete?"})
    # the option the dialog closed with: its number (0 none), never its label
    end = {"type": "ui_prompt_end", "kind": "select"}
    assert parse_line(line(with_(end, option=2))) == UiPromptEnd("select", 2)
    assert parse_line(line(with_(end, option=0))) == UiPromptEnd("select", 0)
    assert parse_line(line(with_(end, option=None))) == UiPromptEnd("select")
    for bad in ("Blue", True, 1.5, -1, 1001):
        bad_field(with_(end, option=bad))


# -- pi.events ------------------------------------------------------------------------------


def test_ask_blocked() -> None:
    t = "rpiv:ask-user:blocked"
    assert parse_line(line({"type": t, "active": True})) == AskBlocked(True, None)
    assert parse_line(line({"type": t, "active": False, "toolCallId": "call_9"})) == AskBlocked(
        False, "call_9"
    )
    assert parse_line(line({"type": t, "active": True, "toolCallId": None})) == AskBlocked(True)
    bad_field({"type": t})
    bad_field({"type": t, "active": "yes"})
    bad_field({"type": t, "active": True, "toolCallId": 5})
    bad_field({"type": t, "active": True, "toolCallId": ""})


def test_subagent_started() -> None:
    assert parse_line(line(STARTED)) == SubagentStarted(
        run_id="run-1",
        session_id=SFILE,
        completion_owner_id="owner-1",
        artifact_version=3,
        parent=SFILE,
        owner_now="owner-1",
    )
    # runId when there is no id; parent/ownerNow may be null
    s = parse_line(line(with_(STARTED, id=_DEL, runId="run-2", parent=None, ownerNow=None)))
    assert isinstance(s, SubagentStarted)
    assert (s.run_id, s.parent, s.owner_now) == ("run-2", None, None)
    # other versions parse; the engine decides (only version 3 is recorded)
    s = parse_line(line(with_(STARTED, lifecycleArtifactVersion=2)))
    assert isinstance(s, SubagentStarted) and s.artifact_version == 2
    for key, value in [
        ("id", 5),
        ("id", _DEL),
        ("sessionId", _DEL),
        ("sessionId", None),
        ("completionOwnerId", _DEL),
        ("completionOwnerId", 1),
        ("lifecycleArtifactVersion", _DEL),
        ("lifecycleArtifactVersion", "3"),
        ("lifecycleArtifactVersion", 3.5),
        ("lifecycleArtifactVersion", True),
        ("parent", 1),
        ("ownerNow", False),
    ]:
        bad_field(with_(STARTED, **{key: value}))


def test_subagent_complete() -> None:
    assert parse_line(line(COMPLETE)) == SubagentComplete(
        run_id="run-1",
        session_id=SFILE,
        completion_owner_id="owner-1",
        success=True,
        awaited_by_workflow=False,
        parent=SFILE,
        owner_now="owner-1",
    )
    c = parse_line(line(with_(COMPLETE, success=_DEL, awaitedByWorkflow=_DEL)))
    assert isinstance(c, SubagentComplete)
    assert c.success is None and c.awaited_by_workflow is False
    c = parse_line(line(with_(COMPLETE, runId=_DEL, id="run-3", awaitedByWorkflow=True)))
    assert isinstance(c, SubagentComplete) and c.run_id == "run-3" and c.awaited_by_workflow
    for key, value in [
        ("runId", _DEL),
        ("runId", 1),
        ("sessionId", _DEL),
        ("completionOwnerId", _DEL),
        ("success", "true"),
        ("success", 1),
        ("awaitedByWorkflow", None),
        ("awaitedByWorkflow", "no"),
    ]:
        bad_field(with_(COMPLETE, **{key: value}))


def test_subagent_foreground_complete() -> None:
    t = "subagent:foreground-complete"
    assert parse_line(line({"type": t, "runId": "r1", "id": "r1:0"})) == (
        SubagentForegroundComplete("r1")
    )
    bad_field({"type": t, "id": "r1:0"})
    bad_field({"type": t, "runId": 3})


# -- two-way ---------------------------------------------------------------------------------


def test_request() -> None:
    for action in ("status", "on", "off"):
        assert parse_line(line({"type": "request", "id": 7, "action": action})) == Request(
            7, action
        )
    bad_field({"type": "request", "id": 7, "action": "reboot"})
    bad_field({"type": "request", "id": 7})
    bad_field({"type": "request", "id": "7", "action": "status"})
    bad_field({"type": "request", "id": -1, "action": "status"})
    bad_field({"type": "request", "action": "status"})


def test_outbound_encoding() -> None:
    assert encode(reply(3, "π ok")) == b'{"type":"reply","id":3,"text":"\\u03c0 ok"}\n'
    assert encode(notify("a\nb")) == b'{"type":"notify","text":"a\\nb"}\n'
    assert encode(notify("x")).count(b"\n") == 1
