"""Retraction, escalation and the progress indicator (docs/design.md#follow-ups) with real Pi under
cuewrap.

The rig plays the host terminal (``raw_output`` is everything cuewrap wrote to it). With
``notify.terminal = osc99`` every notification carries ``i=<id>`` and a withdrawal is
``OSC 99 ; i=<id> : p=close ; ST`` (kitty's protocol).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import waiting
from fakemodel import FakeModel, text, tool_call
from pirig import PiSession
from shared import RECORDER, calls

pytestmark = [pytest.mark.pi, pytest.mark.parametrize("pi_version", ["1.4.0"])]

_OSC99 = re.compile(rb"\x1b\]99;([^;\x07\x1b]*);([^\x07\x1b]*)\x1b\\")
OSC99 = {"CUEWRAP_NOTIFY_TERMINAL": "osc99", "TERM": "xterm-kitty"}
_QUERY = re.compile(rb"\x1b\]99;i=(cuewrap-q\d+):p=\?;\x1b\\")


def answer_as_kitty(s: PiSession, version: str = "0.36.0", close: bool = True) -> None:
    """Play kitty answering cuewrap's start-up query (XTVERSION, OSC 99 p=?, DA1), as kitty
    0.36+ does (``close``) or as an older kitty, which answers only XTVERSION and DA1."""
    [ident] = wait_until(lambda: _QUERY.findall(s.raw_output), 10, "the OSC 99 query", s)
    answer = b"\x1bP>|kitty(" + version.encode() + b")\x1b\\"
    if close:
        keys = b"a=focus,report:o=always,unfocused,invisible:p=title,body,?,close,icon"
        answer += b"\x1b]99;i=" + ident + b":p=?;" + keys + b"\x1b\\"
    s.send(answer + b"\x1b[?62;22c")
    wait_until(lambda: s.log_records("terminal_answers"), 5, "the answers taken in", s)


def osc99(raw: bytes) -> list[dict[str, str]]:
    """Every OSC 99 as its metadata (``i``, ``p``, ``d`` …), cuewrap's start-up query aside."""
    out = []
    for m in _OSC99.finditer(raw):
        meta = dict(kv.split("=", 1) for kv in m.group(1).decode().split(":") if "=" in kv)
        if meta.get("p") != "?":
            out.append(meta)
    return out


def sent_ids(raw: bytes) -> list[str]:
    return list(dict.fromkeys(m["i"] for m in osc99(raw) if m.get("p") == "title"))


def closed_ids(raw: bytes) -> list[str]:
    return [m["i"] for m in osc99(raw) if m.get("p") == "close"]


def wait_until(pred: Any, timeout: float, what: str, s: PiSession) -> Any:
    def detail() -> str:
        kinds = [(r.get("kind"), r.get("cue") or r.get("state")) for r in s.log_records()][-30:]
        return f"log: {kinds}\n{s.dump()}"

    return waiting.wait_until(pred, timeout, what, detail=detail)


def presence(s: PiSession, direction: str) -> None:
    """One focus report, and wait until cuewrap has stepped it (its Presence fact)."""

    def count() -> int:
        return sum(1 for r in s.log_records("fact") if r.get("type") == "Presence")

    n = count()
    s.focus_in() if direction == "in" else s.focus_out()
    wait_until(lambda: count() > n, 5, f"focus {direction} fact", s)


# -- retraction -----------------------------------------------------------------------------
def test_return_closes_the_notification_it_sent(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 1"}), text("all done"))
    s: PiSession = pi_session(env=OSC99)
    answer_as_kitty(s)
    presence(s, "out")
    s.prompt("run the tool")
    [ident] = wait_until(lambda: sent_ids(s.raw_output), 15, "an OSC 99 notification", s)
    assert re.fullmatch(r"cuewrap-\d+-\d+", ident), ident
    s.wait_idle()
    assert closed_ids(s.raw_output) == []  # still stale-free: the user has not come back
    presence(s, "in")
    wait_until(lambda: closed_ids(s.raw_output), 5, "p=close", s)
    assert closed_ids(s.raw_output) == [ident]
    [rec] = s.log_records("withdrawal")
    assert (rec["channel"], rec["state"], rec["reason"]) == (
        "terminal",
        "withdrawn",
        "user returned",
    )
    # leaving and coming back again closes nothing more
    presence(s, "out")
    presence(s, "in")
    s.quit()
    assert s.wait_exit() == 0
    assert closed_ids(s.raw_output) == [ident]


def test_kitty_before_0_36_gets_no_close_and_the_log_says_unsupported(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 1"}), text("all done"))
    s: PiSession = pi_session(env=OSC99)
    answer_as_kitty(s, "0.26.5", close=False)
    [answers] = s.log_records("terminal_answers")
    assert (answers["version"], answers["osc99"]) == ("kitty(0.26.5)", None)
    presence(s, "out")
    s.prompt("run the tool")
    [_sent] = wait_until(lambda: sent_ids(s.raw_output), 15, "an OSC 99 notification", s)
    s.wait_idle()
    presence(s, "in")
    [rec] = wait_until(lambda: s.log_records("withdrawal"), 5, "the withdrawal record", s)
    assert (rec["channel"], rec["state"]) == ("terminal", "unsupported")
    assert "0.36" in rec["reason"] and "kitty(0.26.5)" in rec["reason"], rec
    assert closed_ids(s.raw_output) == []
    # the answers never reached Pi: nothing of them in its editor or transcript
    assert "kitty(" not in s.screen_text and "62;22" not in s.screen_text
    s.quit()
    assert s.wait_exit() == 0
    assert closed_ids(s.raw_output) == []


def test_dialog_answered_while_away_withdraws_its_notification(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed"))
    s: PiSession = pi_session(env=OSC99)
    answer_as_kitty(s)
    presence(s, "out")
    s.prompt("confirm please")
    s.wait_dialog()
    [asked] = wait_until(lambda: sent_ids(s.raw_output), 10, "the [?] notification", s)
    s.enter()  # answered while away (with focus reports, keys do not mean "present")
    s.wait_for_screen(r"confirmed: yes")
    wait_until(lambda: closed_ids(s.raw_output), 5, "p=close for the [?] notification", s)
    assert closed_ids(s.raw_output) == [asked]
    reasons = [r["reason"] for r in s.log_records("withdrawal")]
    assert reasons == ["wait ended (ui_prompt_end)"], reasons
    # the run then settles while away: its own notification, not closed (never returned)
    s.wait_for_screen(r"^ deployed$")
    wait_until(lambda: len(sent_ids(s.raw_output)) == 2, 10, "the finished notification", s)
    finished = sent_ids(s.raw_output)[1]
    assert finished != asked
    assert closed_ids(s.raw_output) == [asked]


def test_nothing_closed_that_was_never_sent(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("test_confirm", {}), text("one"), text("two"))
    s: PiSession = pi_session(env=OSC99)
    presence(s, "in")
    s.prompt("first")
    s.wait_dialog()
    s.enter()
    s.wait_for_screen(r"^ one$")
    s.wait_idle()
    presence(s, "out")
    presence(s, "in")
    s.prompt("second")
    s.wait_for_screen(r"^ two$")
    s.wait_idle()
    s.quit()
    assert s.wait_exit() == 0
    assert osc99(s.raw_output) == []
    assert s.log_records("withdrawal") == []


# -- escalation -----------------------------------------------------------------------------
@pytest.fixture
def recorder_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out = tmp_path / "calls.jsonl"
    env = {
        "CUEWRAP_NOTIFY_COMMAND": shlex.join([sys.executable, str(script), str(out)]),
        "CUEWRAP_NOTIFY_ESCALATE_AFTER": "2",
    }
    return env, out


def escalated(out: Path) -> list[dict[str, Any]]:
    return [json.loads(c["stdin"]) for c in calls(out) if json.loads(c["stdin"])["escalated"]]


def dialog_reminded(
    pi_session: Any, fakemodel: FakeModel, recorder_env: Any
) -> tuple[PiSession, Path]:
    """The user away, a confirm dialog open, its needs-input call made to notify.command."""
    env, out = recorder_env
    fakemodel.push(tool_call("test_confirm", {}), text("done"))
    s: PiSession = pi_session(env=env)
    presence(s, "out")
    s.prompt("confirm please")
    s.wait_dialog()
    wait_until(lambda: calls(out), 10, "the needs-input call", s)
    return s, out


def test_escalation_after_two_seconds_away_with_a_dialog_open(
    pi_session: Any, fakemodel: FakeModel, recorder_env: Any
) -> None:
    s, out = dialog_reminded(pi_session, fakemodel, recorder_env)
    first = time.monotonic()
    [esc] = wait_until(lambda: escalated(out), 10, "the escalated call", s)
    assert time.monotonic() - first >= 1.5  # not before escalate_after (2 s) has passed
    [plain] = [json.loads(c["stdin"]) for c in calls(out) if c is not None][:1]
    assert esc["event"] == "needs-input" and esc["id"] == plain["id"]
    assert calls(out)[-1]["env"]["CUEWRAP_CUE_ESCALATED"] == "true"
    # never twice for the same wait
    wait_until(lambda: s.log_records("escalation"), 5, "escalation records", s)
    waiting.absence_window(2.5, "a second escalated call")
    assert len(escalated(out)) == 1
    presence(s, "in")
    s.enter()
    s.wait_for_screen(r"^ done$")


def test_no_escalation_when_the_user_returns_at_one_second(
    pi_session: Any, fakemodel: FakeModel, recorder_env: Any
) -> None:
    s, out = dialog_reminded(pi_session, fakemodel, recorder_env)
    waiting.absence_window(1.0, "the user is away for one second")
    presence(s, "in")
    presence(s, "out")  # away again, same wait: no new notification, no escalation
    waiting.absence_window(3.0, "an escalated call")
    assert escalated(out) == []
    assert len(calls(out)) == 1
    states = [r.get("state") for r in s.log_records("escalation")]
    assert states == ["armed", "cancelled"], states


def test_no_escalation_for_a_finished_run(
    pi_session: Any, fakemodel: FakeModel, recorder_env: Any
) -> None:
    env, out = recorder_env
    fakemodel.push(tool_call("bash", {"command": "sleep 1"}), text("done"))
    s: PiSession = pi_session(env=env)
    presence(s, "out")
    s.prompt("run it")
    wait_until(lambda: calls(out), 15, "the finished call", s)
    waiting.absence_window(3.0, "an escalated call")
    assert [json.loads(c["stdin"])["event"] for c in calls(out)] == ["finished"]
    assert escalated(out) == []


# -- progress -------------------------------------------------------------------------------
OURS_ON = b"\x1b]9;4;3\x1b\\"
OURS_OFF = b"\x1b]9;4;0\x1b\\"
PROGRESS = {"CUEWRAP_NOTIFY_PROGRESS": "true"}


def last_progress(raw: bytes) -> bytes | None:
    found = [m.group() for m in re.finditer(rb"\x1b\]9;4;[0-4]\x1b\\", raw)]
    return found[-1] if found else None


def test_progress_on_during_a_run_cleared_at_settle(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 3"}), text("done"))
    s: PiSession = pi_session(env=PROGRESS)
    assert OURS_ON not in s.raw_output
    s.prompt("run it")
    wait_until(lambda: last_progress(s.raw_output) == OURS_ON, 10, "progress on", s)
    s.wait_for_screen(r"^ done$")
    wait_until(lambda: last_progress(s.raw_output) == OURS_OFF, 10, "progress cleared", s)
    s.quit()
    assert s.wait_exit() == 0


def test_progress_cleared_when_cuewrap_is_terminated_mid_run(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 30"}), text("never"))
    s: PiSession = pi_session(env=PROGRESS)
    s.prompt("run it")
    wait_until(lambda: last_progress(s.raw_output) == OURS_ON, 10, "progress on", s)
    os.kill(s.pid, signal.SIGTERM)
    s.wait_exit(timeout=15)
    assert last_progress(s.raw_output) == OURS_OFF


def test_no_progress_when_pi_shows_its_own(
    pi_session: Any, fakemodel: FakeModel, pi_home: Any
) -> None:
    pi_home.write_settings(terminal={"showTerminalProgress": True})
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}), text("done"))
    s: PiSession = pi_session(env=PROGRESS)
    s.prompt("run it")
    wait_until(lambda: b"\x1b]9;4;3\x07" in s.raw_output, 10, "Pi's own progress", s)
    s.wait_for_screen(r"^ done$")
    s.wait_idle()
    s.quit()
    assert s.wait_exit() == 0
    assert OURS_ON not in s.raw_output
