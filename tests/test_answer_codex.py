"""Answering real Codex CLI's approval dialog from elsewhere, in generic mode (docs/answering.md,
"Codex CLI"): the pinned Codex on the fake Responses API, the user away. Its own report (OSC
7501 ``blocked:kind=permission``) and its dialog on the screen make the wait answerable;
``cuewrap answer`` approves (the command runs, the Finished follows) or refuses (it does not
run); "don't ask again" is refused by number and by token and taken only by its exact label
with the pid; the user's own key first kills the token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from answerrig import WIDENS, AnswerRig, typed
from codexrig import CodexSession
from fakeresponses import text, tool_call
from waiting import absence_window

TITLE = "Codex — proj".encode()
SHOWS = "Would you like to run the following command"
AGAIN = "Yes, and don't ask again for commands that start with `touch {}`"


def escalated(command: str) -> Any:
    """A command the model asks to run outside the sandbox: Codex asks the user."""
    return tool_call(
        "exec_command",
        {"cmd": command, "sandbox_permissions": "require_escalated", "justification": "Make it"},
    )


class Rig(AnswerRig[CodexSession]):
    program = "codex"
    shows = SHOWS
    session = CodexSession

    def statuses(self) -> list[str]:
        return [f["state"] for f in self.s.statuses()]


@pytest.mark.pi
def test_approved_by_number_the_command_runs_and_the_finished_follows(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    r = Rig(codex_sessions, tmp_path, [escalated("touch made.txt"), text("The tool ran.")])
    r.approved_by_number(TITLE, b"Finished")


@pytest.mark.pi
def test_dont_ask_again_refused_by_number_and_token_then_no_by_token(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    steps = [escalated("touch denied.txt"), text("Understood.")]
    r = Rig(codex_sessions, tmp_path, steps, env={"CUEWRAP_PRIVACY_BODY": "summary"})
    r.prompt("make a file")
    w = r.token()
    again = AGAIN.format("denied.txt")
    assert w["options"] == ["Yes, proceed", again, "No, and tell Codex what to do differently"]
    before = len(r.statuses())
    assert r.cuewrap("answer", str(r.pid), "2") == (1, WIDENS)
    assert r.cuewrap("answer", "--token", w["token"], again) == (1, WIDENS)
    assert r.cuewrap("answer", str(r.pid), "4") == (1, "no such option")
    # nothing typed: Codex still waits, the same token still answers
    absence_window(0.5, "a report from Codex")
    assert r.statuses()[before - 1 :] == ["blocked"] and r.wait() == w
    assert r.cuewrap("answer", "--token", w["token"], "3") == (0, typed(3))
    r.s.wait_status("idle", after=before)
    absence_window(1.0, "the refused command to run")
    assert not (r.s.cwd / "denied.txt").exists()
    assert r.statuses()[before:] == ["working", "idle"]  # interrupted, never done
    assert [(a["option"], a["result"]) for a in r.attempts()] == [
        (2, "refused"), (2, "refused"), (4, "refused"), (3, "answered")]  # fmt: skip
    assert "denied.txt" not in str(r.s.records("answer"))  # labels never in the log


@pytest.mark.pi
def test_dont_ask_again_by_its_exact_label_with_the_pid(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    r = Rig(codex_sessions, tmp_path, [escalated("touch again.txt"), text("Allowed for good.")])
    r.prompt("make a file")
    r.token()
    assert r.cuewrap("answer", str(r.pid), AGAIN.format("again.txt")) == (0, typed(2))
    r.s.wait_text("Allowed for good")
    assert (r.s.cwd / "again.txt").exists()
    r.s.wait_text("always run commands that start with")  # Codex took the widening option


@pytest.mark.pi
def test_the_users_key_first_kills_the_token_and_nothing_is_typed(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    r = Rig(codex_sessions, tmp_path, [escalated("touch keyed.txt"), text("Ran after your key.")])
    r.prompt("make a file")
    r.users_key_first("keyed.txt", "Ran after your key", b"\r")


@pytest.mark.pi
def test_report_to_token_and_answer_to_closed(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    """10 approvals answered by ``cuewrap answer`` at once: the times, printed (the figures of
    docs/benchmarks.md)."""
    n = 10
    steps: list[Any] = []
    for i in range(n):
        steps += [escalated(f"touch made-{i}.txt"), text(f"Made number {i}.")]
    r = Rig(codex_sessions, tmp_path, steps)
    r.answer_each(n)
    print("\n" + r.timings(n))


@pytest.mark.desktop
def test_a_desktop_button_approves_once_and_offers_only_yes_and_no(
    tmp_path: Path, codex_sessions: list[CodexSession], dunst_menu: Any
) -> None:
    """Real dunst on a private bus: the needs-input notification of an approval has the
    one-time Yes and the No, never "don't ask again"; a click on Yes approves (dunst's context
    menu picks the action, as tests/test_answer_desktop.py)."""
    desktop = {k: dunst_menu.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    steps = [escalated("touch clicked.txt"), text("Clicked through.")]
    env = {**desktop, "CUEWRAP_NOTIFY_DESKTOP": "auto", "CUEWRAP_NOTIFY_TERMINAL": "off"}
    r = Rig(codex_sessions, tmp_path, steps, env=env)
    r.prompt("make a file")
    sid = r.desktop_click(dunst_menu, 1)
    r.s.wait_text("Clicked through")
    assert (r.s.cwd / "clicked.txt").exists()
    menu = (dunst_menu.tmp / "dunst-menu").read_text()
    assert f"#Yes (Codex — proj) [{sid},answer-1]" in menu
    assert f"#No (Codex — proj) [{sid},answer-3]" in menu
    assert "answer-2" not in menu and "again" not in menu
    assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
        ("desktop", 1, "answered")
    ]
