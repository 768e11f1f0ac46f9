"""Answering real Gemini CLI's tool approval from elsewhere, in generic mode (docs/answering.md,
"Gemini CLI"): the pinned Gemini CLI on the fake Gemini API, the user away. Gemini CLI reports
no state: its own notification ("needs your attention", "Approval required"; heard thanks to
cuewrap's session defaults) and its dialog on the screen make the wait answerable; ``cuewrap
answer`` approves (the command runs, the Finished follows: cuewrap tells it the focus is still
out after its key) or refuses (it does not run);
"Allow for this session" is refused by number and by token; the user's own key first kills
the token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from answerrig import WIDENS, AnswerRig, typed
from fakegemini import function_call, text
from geminirig import GeminiSession
from waiting import absence_window

pytestmark = pytest.mark.pi

TITLE = "Gemini CLI — proj".encode()
SESSION = "Allow for this session"


def shell(command: str) -> Any:
    return function_call("run_shell_command", {"command": command, "description": "Make it"})


class Rig(AnswerRig[GeminiSession]):
    program = "gemini"
    shows = "Allow execution of [Shell]?"
    session = GeminiSession

    def needs_input_at(self) -> list[float]:
        """When each of its approval notifications was read (the log's times)."""
        return [c["t"] for c in self.s.records("cue") if c.get("fact_kind") == "permission"]


def test_approved_by_number_the_command_runs_and_the_finished_follows(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    r = Rig(gemini_sessions, tmp_path, [shell("touch made.txt"), text("The tool ran.")])
    # a key makes 0.61.0 believe the user is back: cuewrap tells it the focus is still out,
    # so that it says when the turn ends; the Finished follows, once
    r.approved_by_number(TITLE, b"Finished (outcome unknown)")


def test_for_this_session_refused_then_no_by_token(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    steps = [shell("touch denied.txt"), text("Understood.")]
    r = Rig(gemini_sessions, tmp_path, steps, env={"CUEWRAP_PRIVACY_BODY": "summary"})
    r.prompt("make a file")
    w = r.token()
    assert w["options"] == ["Allow once", SESSION, "No, suggest changes"]
    assert r.cuewrap("answer", str(r.pid), "2") == (1, WIDENS)
    assert r.cuewrap("answer", "--token", w["token"], SESSION) == (1, WIDENS)
    absence_window(0.5, "anything typed")
    assert r.wait() == w
    r.s.wait_text(r.shows)
    assert r.cuewrap("answer", "--token", w["token"], "3") == (0, typed(3))
    r.s.wait_text("Request cancelled")
    absence_window(1.0, "the refused command to run")
    assert not (r.s.cwd / "denied.txt").exists()
    assert [(a["option"], a["result"]) for a in r.attempts()] == [
        (2, "refused"), (2, "refused"), (3, "answered")]  # fmt: skip


def test_allow_for_this_session_by_its_exact_label_with_the_pid(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    r = Rig(gemini_sessions, tmp_path, [shell("touch again.txt"), text("Allowed for good.")])
    r.prompt("make a file")
    r.token()
    assert r.cuewrap("answer", str(r.pid), SESSION) == (0, typed(2))
    r.s.wait_text("Allowed for good")
    assert (r.s.cwd / "again.txt").exists()


def test_the_users_key_first_kills_the_token_and_nothing_is_typed(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    r = Rig(gemini_sessions, tmp_path, [shell("touch keyed.txt"), text("Ran after your key.")])
    r.prompt("make a file")
    r.users_key_first("keyed.txt", "Ran after your key", b"1")


def test_report_to_token_and_answer_to_closed(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    """10 approvals answered by ``cuewrap answer`` at once: from its notification read to the
    token, from the claim and from the keys to the dialog closed (p50 / max, printed)."""
    import statistics

    n = 10
    steps: list[Any] = []
    for i in range(n):
        steps += [shell(f"touch made-{i}.txt"), text(f"Made number {i}.")]
    r = Rig(gemini_sessions, tmp_path, steps)
    r.answer_each(n)
    heard = r.needs_input_at()
    tokens = [a["t"] for a in r.s.records("answer") if a.get("state") == "answerable"]
    assert len(heard) == len(tokens) == n
    ready = [(t - h) * 1000 for h, t in zip(heard, tokens, strict=True)]
    closed = [float(a["ms"]) for a in r.attempts()]
    keys = [float(a["keys_ms"]) for a in r.attempts()]
    assert all(a["result"] == "answered" for a in r.attempts()) and len(closed) == n
    print(
        f"\nnotice -> token ms: p50 {statistics.median(ready):.0f} max {max(ready):.0f};"
        f" claim -> closed ms: p50 {statistics.median(closed):.1f} max {max(closed):.1f};"
        f" keys -> closed ms: p50 {statistics.median(keys):.1f} max {max(keys):.1f}"
    )
