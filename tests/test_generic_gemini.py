"""Real Gemini CLI under ``cuewrap -- gemini``: what it says, and only that (docs/generic-mode.md).

Gemini CLI 0.61.0 reports no state (no OSC 7501, no query). With its own setting
``general.enableNotifications`` on, it notifies while unfocused (OSC 777 where it does not know
the terminal): "Gemini CLI session complete" when a turn ends — after an API error too — and
"Gemini CLI needs your attention" at an approval. cuewrap passes such a notification to a
terminal that shows OSC 777 and adds only its mark, or takes it out and re-emits it once where
the terminal shows another protocol; the cue is uncertain (``[?]``): the notification does not
say whether the turn finished or failed. The test plays the host terminal (a bare PTY).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from agentrig import AWAY, BACK, PY
from fakegemini import function_call, http_error, text
from geminirig import GeminiSession
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

DONE = (b"Gemini CLI session complete", b"Run finished | Gemini CLI finished responding.")
OSC9 = re.compile(rb"\x1b\]9;([^\x07\x1b]*)(?:\x07|\x1b\\)")


def start(
    sessions: list[GeminiSession], tmp_path: Path, steps: list, **kw: object
) -> GeminiSession:
    s = GeminiSession(tmp_path, steps, **kw)  # type: ignore[arg-type]
    sessions.append(s)
    s.ready()
    return s


def notices(s: GeminiSession) -> list[dict[str, object]]:
    return [r for r in s.records("fact") if r.get("type") == "ChildNotice"]


def test_a_prompt_while_away_its_own_notification_once_and_the_mark(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    s = start(gemini_sessions, tmp_path, [text("The first answer from the fake API.")])
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("The first answer from the fake API", mark)
    notes = wait_until(s.notifications, 30, "Gemini CLI's own notification")
    absence_window(2.0, "a second notification for the same turn (cuewrap's, quiet)")
    # the terminal shows OSC 777: Gemini CLI's own passes, and cuewrap adds none of its own
    assert s.notifications() == notes == [DONE]
    (n,) = notices(s)
    assert (n["protocol"], n["consumed"]) == ("osc777", False)
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"], cue["signal"]) == ("needs-input", "child", "osc777")
    assert "passed through" in cue["delivery"]
    assert b"\x1b]2;[?]" in s.out()  # the mark: uncertain, it does not say which outcome
    # it reports nothing of its own: no OSC 7501, no query answered
    assert s.statuses() == [] and s.records("status_query") == []


def test_where_the_terminal_shows_osc9_its_notification_is_re_emitted_once(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    env = {"CUEWRAP_NOTIFY_TERMINAL": "osc9"}
    s = start(gemini_sessions, tmp_path, [text("An answer for OSC 9.")], env=env)
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("An answer for OSC 9", mark)
    told = wait_until(lambda: OSC9.findall(s.out()), 30, "the re-emitted OSC 9")
    absence_window(2.0, "a second notification for the same turn")
    assert OSC9.findall(s.out()) == told and len(told) == 1
    assert b"session complete" in told[0]
    assert s.notifications() == []  # its OSC 777 was taken out
    (n,) = notices(s)
    assert n["consumed"] is True


def test_an_approval_while_away_gives_one_notification_that_it_needs_you(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    steps = [
        function_call(
            "run_shell_command", {"command": "touch made-by-the-tool", "description": "Make it"}
        ),
        text("The tool ran."),
    ]
    s = start(gemini_sessions, tmp_path, steps)
    s.presence(AWAY, "away")
    s.type("make a file")
    notes = wait_until(s.notifications, 30, "Gemini CLI's approval notification")
    absence_window(2.0, "a second notification for the same approval")
    assert s.notifications() == notes and len(notes) == 1
    assert notes[0][0] == b"Gemini CLI needs your attention"
    assert notes[0][1].startswith(b"Approval required")
    assert not (s.cwd / "made-by-the-tool").exists()
    s.presence(BACK, "focused")
    mark = len(s.out())
    s.p.send(b"\r")  # "Allow once"
    s.wait_text("The tool ran", mark)
    assert (s.cwd / "made-by-the-tool").exists()
    absence_window(1.0, "a notification while the user looks")
    assert len(s.notifications()) == 1


def test_an_api_error_is_told_as_its_session_complete_not_as_failed(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    """What it says cannot be made a certain Failed: the same words as a finished turn."""
    s = start(gemini_sessions, tmp_path, [http_error(400, "prompt is too long")])
    s.presence(AWAY, "away")
    s.type("fail please")
    notes = wait_until(s.notifications, 60, "Gemini CLI's notification after the error")
    absence_window(1.0, "a second notification")
    assert s.notifications() == notes == [DONE]
    assert all(r.get("outcome") != "failed" for r in s.records("cue"))


def test_present_nothing(tmp_path: Path, gemini_sessions: list[GeminiSession]) -> None:
    s = start(gemini_sessions, tmp_path, [text("An answer while you look.")])
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("An answer while you look", mark)
    absence_window(3.0, "a notification while the user looks")
    assert s.notifications() == [] and s.records("cue") == []
    assert b"\x1b]2;[" not in s.out()


def test_ls_shows_it_waits_from_its_notification(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    private = {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp_path)}
    s = start(gemini_sessions, tmp_path, [text("An answer for ls.")], env=private)
    s.presence(AWAY, "away")
    s.type("say hello")
    wait_until(s.notifications, 30, "Gemini CLI's own notification")
    rows = wait_until(
        lambda: (r := s.ls(private))[0]["state"] == "needs-input" and r, 20, "ls: needs-input"
    )
    assert rows[0]["source"] == "child" and rows[0]["program"] == "gemini"
    table = subprocess.run(
        [PY, "-m", "cuewrap", "ls"],
        env={**os.environ, **private},
        capture_output=True,
        text=True,
        timeout=20,
    ).stdout.splitlines()
    assert table[1].split()[1] == "needs-input" and "child" in table[1].split()
