"""``privacy.body = "summary"``: the sanitizer, the engine's use of summaries, the protocol
field and notify.command's ``summary`` (pure tests; the real-Pi ones are in
test_summary_pi.py)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuewrap.bridge.protocol import MAX_SUMMARY, Rejection, parse_line
from cuewrap.deliver.command import cue_env, cue_fields
from cuewrap.engine import EngineConfig, initial_state, step
from cuewrap.engine.effects import Notify, Record
from cuewrap.engine.summary import BODY_MAX, body, clean, error_text
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    AskBlocked,
    BridgeHello,
    ChildExit,
    Fact,
    Presence,
    ProgramStatus,
    SessionStart,
    ToolEnd,
    ToolStart,
    UiPromptEnd,
    UiPromptStart,
    UserInput,
)

pytestmark = pytest.mark.unit

BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}


def unsafe(text: str) -> list[str]:
    """Characters that must never reach a notification."""
    return [
        ch
        for ch in text
        if ord(ch) in BIDI
        or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
        or (ch.isspace() and ch != " ")
    ]


# -- the sanitizer ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("plain text", "plain text"),
        ("a\nb\r\nc\td", "a b c d"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("x\x1b]0;evil title\x07y", "xy"),
        ("x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),
        ("x\x9b2Jy", "xy"),
        ("x\x1bPq#0;2;0;0;0\x1b\\y", "xy"),
        ("x\x1b(By", "xy"),
        ("unterminated \x1b]0;rest", "unterminated"),
        ("a\u202eevil\u202cb", "aevilb"),
        ("\u2066iso\u2069 \u200fmark\u200e", "iso mark"),
        ("bell\x07 nul\x00 del\x7f c1\x85", "bell nul del c1"),
        ("line\u2028sep\u2029para", "line sep para"),
        ("lone \ud800 surrogate", "lone surrogate"),
        ("  spaced   out  ", "spaced out"),
        ("😀 emoji and ünïcödé", "😀 emoji and ünïcödé"),
        ("", ""),
    ],
)
def test_clean(raw: str, want: str) -> None:
    assert clean(raw) == want


@given(st.text(max_size=600))
def test_clean_leaves_nothing_unsafe(raw: str) -> None:
    out = clean(raw)
    assert not unsafe(out), out
    assert "\x1b" not in out and out == out.strip()
    assert clean(out) == out  # idempotent


ESCAPY = st.text(
    alphabet=st.sampled_from(["\x1b", "[", "]", "\\", "\x07", "\x9b", "\x9c", "\u202e", "\n"])
    | st.characters(),
    max_size=400,
)


@given(st.text(max_size=40), ESCAPY, st.integers(min_value=0, max_value=300))
def test_body_is_safe_and_capped(status: str, summary: str, cap: int) -> None:
    out = body(status, summary, cap)
    assert len(out) <= cap
    assert not unsafe(out), out


@given(ESCAPY)
def test_body_keeps_the_status_and_cuts_the_summary(summary: str) -> None:
    out = body("Needs your input", summary)
    assert len(out) <= BODY_MAX
    assert out.startswith("Needs your input")
    said = clean(summary)
    if said:
        assert out.startswith("Needs your input: ")
        rest = out[len("Needs your input: ") :]
        assert rest == said or (rest.endswith("…") and said.startswith(rest[:-1]))
    else:
        assert out == "Needs your input"


def test_body_cut_exactly_at_the_cap() -> None:
    long = "\x1b[31m" + "x\u202e" * 500
    out = body("Finished", long)
    assert len(out) == BODY_MAX and out.endswith("…")
    assert out == "Finished: " + "x" * (BODY_MAX - len("Finished: ") - 1) + "…"
    assert body("Finished", "x" * (BODY_MAX - 10)) == "Finished: " + "x" * (BODY_MAX - 10)
    assert body("Finished", None) == "Finished"
    assert body("Finished", "\x1b[0m \u202e ") == "Finished"


# -- the engine ------------------------------------------------------------------------------

SESSION = "/s/1.jsonl"


class Eng:
    def __init__(self, summary: bool) -> None:
        self.s = initial_state(EngineConfig(privacy_summary=summary))
        self.fx: list[object] = []
        self(
            BridgeHello(1, "1.4.0", "tui", True, "sid", SESSION, 1),
            SessionStart("startup", "sid", SESSION),
            Presence("away"),
        )

    def __call__(self, *facts: Fact) -> None:
        for f in facts:
            self.s, fx = step(self.s, f, 0.0)
            self.fx += fx

    def notes(self) -> list[Notify]:
        return [e for e in self.fx if isinstance(e, Notify)]

    def log(self) -> str:
        return json.dumps([[e.kind, e.fields] for e in self.fx if isinstance(e, Record)])


SECRET_Q = "Delete \x1b[31mSECRET-Q\x1b[0m\u202e?"
SECRET_A = "SECRET-A first line\nsecond line"
SECRET_E = "400 SECRET-E bad request"
ALL_SECRETS = ("SECRET-Q", "SECRET-A", "SECRET-E", "SECRET-ASK", "second line")


def scenario(e: Eng) -> None:
    run = (UserInput("interactive"), AgentStart())
    e(*run, UiPromptStart("confirm", SECRET_Q), UiPromptEnd("confirm"))
    e(AgentEnd("stop", SECRET_A), AgentBeforeSettle("completed"), AgentSettled(False))
    e(*run, ToolStart("c1", "ask_user_question", "SECRET-ASK which way?"))
    e(AskBlocked(True), UiPromptStart("custom"), UiPromptEnd("custom"), AskBlocked(False))
    e(ToolEnd("c1", "ask_user_question", False))
    e(AgentEnd("error", SECRET_E), AgentBeforeSettle("error"), AgentSettled(False))
    e(*run, AgentEnd("aborted", None), AgentSettled(True))
    e(*run, AgentEnd("stop", "SECRET-A again"), ChildExit(1, None))


def test_summary_on_says_why() -> None:
    e = Eng(summary=True)
    scenario(e)
    got = [(n.kind, n.outcome, n.body, n.summary) for n in e.notes()]
    assert got == [
        ("needs-input", None, "Needs your input: Delete SECRET-Q?", "Delete SECRET-Q?"),
        ("finished", "completed", "Finished: SECRET-A first line second line",
         "SECRET-A first line second line"),
        ("needs-input", None, "Needs your input: SECRET-ASK which way?",
         "SECRET-ASK which way?"),
        ("finished", "failed", "Failed: 400 SECRET-E bad request", "400 SECRET-E bad request"),
        ("finished", "cancelled", "Cancelled", ""),
        ("exited", None, "Exited (status 1)", ""),
    ]  # fmt: skip
    # the decision log: that a summary was used and its length, never the text
    log = e.log()
    for secret in ALL_SECRETS:
        assert secret not in log, secret
    cues = [r.fields for r in e.fx if isinstance(r, Record) and r.kind == "cue"]
    assert [c["summary_chars"] for c in cues] == [len(n.summary or "") for n in e.notes()]
    assert [c["body"] for c in cues] == [
        "Needs your input", "Finished", "Needs your input", "Failed", "Cancelled",
        "Exited (status 1)",
    ]  # fmt: skip
    facts = [r.fields for r in e.fx if isinstance(r, Record) and r.kind == "fact"]
    assert {"type": "AgentEnd", "stop_reason": "stop", "source": "bridge",
            "summary_chars": len(SECRET_A)} in facts  # fmt: skip


def test_summary_off_uses_no_text_even_when_a_fact_has_some() -> None:
    e = Eng(summary=False)
    scenario(e)
    got = [(n.kind, n.body, n.summary) for n in e.notes()]
    assert got == [
        ("needs-input", "Needs your input", None),
        ("finished", "Finished", None),
        ("needs-input", "Needs your input", None),
        ("finished", "Failed", None),
        ("finished", "Cancelled", None),
        ("exited", "Exited (status 1)", None),
    ]
    assert not any(e.s.wait_says) and not any(e.s.ask_says)
    log = e.log()
    for secret in ALL_SECRETS:
        assert secret not in log, secret
    cues = [r.fields for r in e.fx if isinstance(r, Record) and r.kind == "cue"]
    assert cues and not any("summary_chars" in c for c in cues)  # no cue used one


def test_a_summary_that_disagrees_with_the_outcome_is_not_used() -> None:
    e = Eng(summary=True)
    # the last attempt ended in an error, but the run says completed: no answer to quote
    e(UserInput("interactive"), AgentStart(), AgentEnd("error", "400 x"))
    e(AgentBeforeSettle("completed"), AgentSettled(False))
    # a retry that succeeded replaces the first attempt's error
    e(UserInput("interactive"), AgentStart(), AgentEnd("error", "503 busy"), AgentStart())
    e(AgentEnd("stop", "all good"), AgentBeforeSettle("completed"), AgentSettled(False))
    assert [n.body for n in e.notes()] == ["Finished", "Finished: all good"]


def test_merged_waits_say_the_first_question() -> None:
    e = Eng(summary=True)
    e(UserInput("interactive"), AgentStart())
    e(ToolStart("c1", "ask_user_question", "first?"), ToolStart("c2", "ask_user_question", "2?"))
    e(AskBlocked(True, "c1"), AskBlocked(True, "c2"), UiPromptStart("custom"))
    assert [n.body for n in e.notes()] == ["Needs your input: first?"]
    assert [w for w, _ in e.s.wait_says] == [1, 2]  # the custom prompt (wait 3) said nothing


# -- the protocol ----------------------------------------------------------------------------


def parse(obj: dict[str, Any]) -> Any:
    return parse_line(json.dumps(obj).encode())


def test_protocol_summary_field() -> None:
    assert parse({"type": "ui_prompt_start", "kind": "confirm", "summary": "Allow?"}) == (
        UiPromptStart("confirm", "Allow?")
    )
    assert parse({"type": "agent_end", "stopReason": "stop", "summary": "a\x1b[0m"}) == (
        AgentEnd("stop", "a\x1b[0m")  # raw here: the engine cleans it
    )
    tool = {"type": "tool_execution_start", "toolCallId": "c", "toolName": "ask_user_question"}
    assert parse({**tool, "summary": "Q?"}) == ToolStart("c", "ask_user_question", "Q?")
    assert parse(tool) == ToolStart("c", "ask_user_question", None)
    assert parse({**tool, "summary": None}) == ToolStart("c", "ask_user_question", None)
    assert parse({**tool, "summary": ""}) == ToolStart("c", "ask_user_question", None)
    long = parse({"type": "agent_end", "stopReason": "stop", "summary": "x" * 5000})
    assert long == AgentEnd("stop", "x" * MAX_SUMMARY)
    for bad in (3, ["x"], {"a": 1}, True):
        r = parse({"type": "agent_end", "stopReason": "stop", "summary": bad})
        assert r == Rejection("bad_field", "agent_end.summary"), r


# -- notify.command --------------------------------------------------------------------------


def test_command_summary_field_only_when_on() -> None:
    e = Eng(summary=True)
    e(UserInput("interactive"), AgentStart(), AgentEnd("stop", "the answer"))
    e(AgentBeforeSettle("completed"), AgentSettled(False))
    on = e.notes()[0]
    fields = cue_fields(on, ident="i", session="s", cwd="/", time="t")
    assert fields["summary"] == "the answer"
    assert cue_env(fields)["CUEWRAP_CUE_SUMMARY"] == "the answer"
    off = Eng(summary=False)
    off(UserInput("interactive"), AgentStart(), AgentEnd("stop", "the answer"))
    off(AgentBeforeSettle("completed"), AgentSettled(False))
    fields = cue_fields(off.notes()[0], ident="i", session="s", cwd="/", time="t")
    assert "summary" not in fields and "the answer" not in json.dumps(fields)


# -- OSC 7501: the error report's message, when the bridge is not there ------------------------


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ('400: {"message":"fake bad request","type":"x"}', "400 fake bad request"),
        ('503 {"error":{"message":"overloaded"}}', "503 overloaded"),
        ("500: not json at all", "500 not json at all"),
        ("Connection error.", "Connection error."),
        ('429: {"message": 7}', '429 {"message": 7}'),
    ],
)
def test_error_text(raw: str, want: str) -> None:
    assert error_text(raw) == want


def test_osc7501_error_message_is_the_failed_summary() -> None:
    import base64

    from cuewrap.term.grammar import parse_status

    msg = base64.b64encode(b'400: {"message":"OSC-SECRET bad"}\x1b[0m').decode()
    error = parse_status(f"state=error:app=pi:msg={msg}".encode())
    assert error == ProgramStatus(
        "error", "pi", None, True, '400: {"message":"OSC-SECRET bad"}\x1b[0m'
    )
    done = parse_status(f"state=done:app=pi:msg={msg}".encode())
    assert done is not None and done.summary is None  # a done report's msg is the session name
    for on in (True, False):
        s = initial_state(EngineConfig(privacy_summary=on))
        fx: list[object] = []
        for f in (Presence("away"), ProgramStatus("working", "pi"), error):
            s, more = step(s, f, 0.0)
            fx += more
        [n] = [e for e in fx if isinstance(e, Notify)]
        assert n.body == ("Failed: 400 OSC-SECRET bad" if on else "Failed")
        log = json.dumps([e.fields for e in fx if isinstance(e, Record)])
        assert "OSC-SECRET" not in log and '"summary_chars": 37' in log


def test_osc7501_blocked_message_is_the_needs_input_summary() -> None:
    """Claude Code's ``blocked`` report says what it asks ("approve Bash: <command>"): with
    summaries the needs-input notification says it, one safe line, at most 200 characters;
    the log keeps its length only."""
    import base64

    from cuewrap.term.grammar import parse_status

    said = "approve Bash: echo OSC-SECRET > f.txt\n\x1b]0;title\x07\u202e" + "x" * 300
    msg = base64.b64encode(said.encode()).decode()
    blocked = parse_status(f"state=blocked:app=claude-code:kind=permission:msg={msg}".encode())
    assert blocked is not None and blocked.summary == said and blocked.kind == "permission"
    for on in (True, False):
        s = initial_state(EngineConfig(privacy_summary=on, generic=True))
        fx: list[object] = []
        for f in (Presence("away"), ProgramStatus("working", "claude-code"), blocked):
            s, more = step(s, f, 0.0)
            fx += more
        [n] = [e for e in fx if isinstance(e, Notify)]
        if on:
            assert n.body.startswith("Needs your input: approve Bash: echo OSC-SECRET > f.txt x")
            assert len(n.body) == 200 and n.body.endswith("…") and "\x1b" not in n.body
            assert "\u202e" not in n.body and "title" not in n.body
        else:
            assert n.body == "Needs your input"
        log = json.dumps([e.fields for e in fx if isinstance(e, Record)])
        assert "OSC-SECRET" not in log
