"""Real Gemini CLI under ``cuewrap -- gemini``: what it says, and only that (docs/generic-mode.md).

Gemini CLI 0.61.0 reports no state (no OSC 7501, no query). It notifies (OSC 777 where it does
not know the terminal) only with ``general.enableNotifications``: cuewrap gives it a
system-defaults file of its own for the session that turns it on (the user's own ``false``
wins; the file goes at exit). Then it notifies while unfocused: "Gemini CLI session complete"
when a turn ends — after an API error too — and "Gemini CLI needs your attention" at an
approval. cuewrap reads those words as facts: the end of a turn is a Finished whose outcome
is unknown (``[?]``: the same words follow an error), an approval a Needs your input. Its
notification is taken out: cuewrap's cue is the one popup, and nothing while the user looks.
The test plays the host terminal (a bare PTY).
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import agentscenes as scene
import pexpect
import pytest
from agentrig import AWAY, BACK, private_runtime, started
from fakegemini import function_call, http_error, text
from geminirig import GeminiSession
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

TITLE = "Gemini CLI — proj".encode()
ENDED = b"Finished (outcome unknown)"
OSC9 = re.compile(rb"\x1b\]9;([^\x07\x1b]*)(?:\x07|\x1b\\)")


def start(
    sessions: list[GeminiSession], tmp_path: Path, steps: list, **kw: object
) -> GeminiSession:
    return started(sessions, GeminiSession(tmp_path, steps, **kw))  # type: ignore[arg-type]


def notices(s: GeminiSession) -> list[dict[str, object]]:
    return [r for r in s.records("fact") if r.get("type") == "ChildNotice"]


def test_a_prompt_while_away_one_finished_from_its_notification(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    s = start(gemini_sessions, tmp_path, [text("The first answer from the fake API.")])
    notes = s.notified_away(
        "say hello",
        "the Finished cue",
        "a second notification for the same turn (its own, passed)",
        shown="The first answer from the fake API",
    )
    # its own notification taken out, read: cuewrap's cue the one popup
    assert notes == [(TITLE, ENDED)]
    (n,) = notices(s)
    assert (n["protocol"], n["consumed"]) == ("osc777", True)
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["outcome"], cue["source"]) == ("finished", "uncertain", "notice")
    assert b"\x1b]2;[!]" in s.out()  # the mark of an outcome not known (not the check mark)
    assert b"session complete" not in s.out()
    # it reports nothing of its own: no OSC 7501, no query answered; the file was supplied
    assert s.statuses() == [] and s.records("status_query") == []
    (supplied,) = s.records("supply")
    assert (supplied["program"], supplied["supplied"]) == ("gemini", True)


def test_where_the_terminal_shows_osc9_cuewraps_cue_comes_once_as_osc9(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    env = {"CUEWRAP_NOTIFY_TERMINAL": "osc9"}
    s = start(gemini_sessions, tmp_path, [text("An answer for OSC 9.")], env=env)
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("An answer for OSC 9", mark)
    told = wait_until(lambda: OSC9.findall(s.out()), 30, "the OSC 9 cue")
    absence_window(2.0, "a second notification for the same turn")
    assert OSC9.findall(s.out()) == told and len(told) == 1
    assert b"Finished (outcome unknown)" in told[0]
    assert s.notifications() == []  # its OSC 777 was taken out
    (n,) = notices(s)
    assert n["consumed"] is True


def test_an_approval_while_away_gives_one_needs_input(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    steps = [
        function_call(
            "run_shell_command", {"command": "touch made-by-the-tool", "description": "Make it"}
        ),
        text("The tool ran."),
    ]
    s = start(gemini_sessions, tmp_path, steps)
    notes = s.notified_away(
        "make a file",
        "the Needs your input cue",
        "a second notification for the same approval",
    )
    assert notes == [(TITLE, b"Needs your input")]
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"], cue["fact_kind"]) == ("needs-input", "child", "permission")
    assert not (s.cwd / "made-by-the-tool").exists()
    scene.approved_on_return(s, b"\r")  # "Allow once"; its session complete then: nothing


def test_an_api_error_is_a_finished_of_unknown_outcome_never_a_certain_one(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    """What it says cannot be made a certain Finished nor a Failed: the same words as a
    finished turn."""
    s = start(gemini_sessions, tmp_path, [http_error(400, "prompt is too long")])
    notes = scene.failed_call_while_away(s, "the cue after the error")
    assert notes == [(TITLE, ENDED)]
    assert [(c["outcome"], c["source"]) for c in s.records("cue")] == [("uncertain", "notice")]


def test_the_users_own_false_wins(tmp_path: Path, gemini_sessions: list[GeminiSession]) -> None:
    """Their settings say ``enableNotifications: false``: Gemini CLI stays silent; cuewrap has
    only its output going quiet (a guess), never a Finished."""
    s = start(gemini_sessions, tmp_path, [text("A quiet answer.")], notifications=False,
              env={"CUEWRAP_GENERIC_QUIET_AFTER": "3"})  # fmt: skip
    notes = s.notified_away("say hello", "the quiet guess", "more", shown="A quiet answer")
    assert notes == [(TITLE, b"Seems to be waiting")]
    assert notices(s) == [] and s.records("supply")[0]["supplied"] is True


def test_the_file_is_gone_at_exit(tmp_path: Path, gemini_sessions: list[GeminiSession]) -> None:
    s = start(gemini_sessions, tmp_path, [])
    homes = (Path(s.env["HOME"]), Path.home())  # the first one root owns all the way up
    bases = [d for h in homes for d in (h / ".cache", h)]
    made = [m for d in bases for m in d.glob(f"cuewrap-gemini-{s.p.pid}-*")]
    assert len(made) == 1 and (made[0] / "system-defaults.json").is_file()
    assert json.loads((made[0] / "system-defaults.json").read_text()) == {
        "general": {"enableNotifications": True, "notificationMethod": "osc777"}
    }
    os.kill(s.p.pid, signal.SIGTERM)  # cuewrap ends: what it holds is given back
    s.p.expect(pexpect.EOF, timeout=30)
    assert not made[0].exists()


def test_present_nothing(tmp_path: Path, gemini_sessions: list[GeminiSession]) -> None:
    s = start(gemini_sessions, tmp_path, [text("An answer while you look.")])
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("An answer while you look", mark)
    absence_window(3.0, "a notification while the user looks")
    assert s.notifications() == [] and s.records("cue") == []
    assert b"\x1b]2;[" not in s.out()


def test_ls_shows_it_finished_from_its_notification(
    tmp_path: Path, gemini_sessions: list[GeminiSession]
) -> None:
    private = private_runtime(tmp_path)
    s = start(gemini_sessions, tmp_path, [text("An answer for ls.")], env=private)
    s.presence(AWAY, "away")
    s.type("say hello")
    wait_until(s.notifications, 30, "the Finished cue")
    rows = wait_until(
        lambda: (r := s.ls(private))[0]["state"] == "finished" and r,
        20,
        "ls: finished",
        detail=lambda: s.ls(private),
    )
    assert rows[0]["source"] == "child" and rows[0]["program"] == "gemini"
    assert rows[0]["outcome"] == "uncertain"
