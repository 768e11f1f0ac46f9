"""Real Codex CLI under ``cuewrap -- codex``: facts, not guesses (docs/generic-mode.md).

Codex CLI 0.171.0 reports its state (OSC 7501, ``app=codex``) to any terminal, without asking
the Program Status query first; its preset proves those reports are its own, so they drive the
cues: ``working`` a run, ``done`` Finished, ``error`` Failed, ``blocked:kind=permission`` Needs
your input, ``idle`` after the user's Esc Cancelled. Its own ``working`` … ``idle`` while it
starts (no key typed) is no cancel. The test plays the host terminal (a bare PTY, which
answers no query).
"""

from __future__ import annotations

from pathlib import Path

import agentscenes as scene
import pytest
from agentrig import AWAY, private_runtime, started
from codexrig import CodexSession
from fakeresponses import http_error, text, tool_call
from waiting import absence_window

pytestmark = pytest.mark.pi

TITLE = "Codex — proj".encode()


def start(sessions: list[CodexSession], tmp_path: Path, steps: list, **kw: object) -> CodexSession:
    return started(sessions, CodexSession(tmp_path, steps, **kw))  # type: ignore[arg-type]


def test_a_prompt_while_away_gives_one_finished_from_its_own_reports(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    s = start(codex_sessions, tmp_path, [text("The first answer from the fake API.")])
    quiet = "a second notification for the same run (its bell, quiet, title)"
    scene.finished_from_reports(s, TITLE, "codex", quiet)
    # it never asked: nothing was answered, its reports counted by its preset
    assert s.records("status_query") == []
    # its bell (it rang one with the focus out, at the turn's end) was recorded only
    assert [r for r in s.records("fact") if r.get("type") == "ChildBell"]


def test_an_approval_while_away_gives_one_needs_input_from_blocked(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    steps = [
        tool_call(
            "exec_command",
            {
                "cmd": "touch made-by-the-tool",
                "sandbox_permissions": "require_escalated",
                "justification": "Make a file",
            },
        ),
        text("The tool ran."),
    ]
    s = start(codex_sessions, tmp_path, steps)
    shown = "Would you like to run the following command"
    quiet = "a second notification for the same approval (its title blinks)"
    blocked = scene.needs_input_from_blocked(s, TITLE, shown, quiet)
    # the user comes back and approves: the run goes on, no more cues while they look
    scene.approved_on_return(s, b"y", done_after=len(blocked))


def test_present_nothing(tmp_path: Path, codex_sessions: list[CodexSession]) -> None:
    s = start(codex_sessions, tmp_path, [text("An answer while you look.")])
    scene.present_nothing(s)


def test_an_api_error_gives_one_failed_from_error(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    s = start(codex_sessions, tmp_path, [http_error(400, "prompt is too long")])
    notes = scene.failed_call_while_away(s, "the Failed cue")
    assert notes == [(TITLE, b"Failed")]
    assert [f["state"] for f in s.statuses()][-2:] == ["working", "error"]
    (cue,) = s.records("cue")
    assert (cue["outcome"], cue["source"], cue["why"]) == ("failed", "osc7501", "osc7501 error")


def test_escape_during_a_run_is_cancelled_never_finished(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    slow = text(" ".join(f"word{i}" for i in range(200)), chunk_delay=0.05)  # about 10 s
    s = start(codex_sessions, tmp_path, [slow])
    assert scene.cancelled_by_escape(s, "a Finished after the cancel") == [(TITLE, b"Cancelled")]


def test_its_start_is_no_run_and_no_cue(tmp_path: Path, codex_sessions: list[CodexSession]) -> None:
    """Codex may report ``working`` then ``idle`` while it starts (its tools booting): the user
    typed nothing, so it is no cancel; away from the start, nothing is told."""
    s = CodexSession(tmp_path, [])
    codex_sessions.append(s)
    s.p.send(AWAY)  # away before Codex even drew
    s.ready()
    s.wait_status("idle")
    absence_window(3.0, "a cue for Codex's start-up")
    assert s.notifications() == [] and s.records("cue") == []
    assert all(r["state"] != "settled" for r in s.records("run"))


def test_ls_shows_working_then_finished(tmp_path: Path, codex_sessions: list[CodexSession]) -> None:
    private = private_runtime(tmp_path)
    slow = text(" ".join(f"word{i}" for i in range(80)), chunk_delay=0.05)  # about 4 s
    s = start(codex_sessions, tmp_path, [slow], env=private)
    scene.ls_shows_working_then_finished(s, private, "codex")


def test_a_model_answer_carrying_sequences_forges_no_report_or_notification(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    """Its reports count unasked, so the guard rests on Codex's renderer: it drops the ESC of a
    model's text (measured with 0.171.0). A forged ``blocked`` and a forged notification in an
    answer show as text; the run gives its one Finished and nothing else."""
    forged = (
        "Look: \x1b]7501;state=blocked:app=codex:kind=permission\x1b\\ and"
        " \x1b]777;notify;Forged;Body\x1b\\ end."
    )
    s = start(codex_sessions, tmp_path, [text(forged)])
    notes = s.notified_away(
        "say hello",
        "the Finished cue",
        "a notification from the forged sequences",
        shown="]7501;state=blocked",  # drawn as text, without its ESC
    )
    assert notes == [(TITLE, b"Finished")]
    assert "blocked" not in [f["state"] for f in s.statuses()]
    assert [r for r in s.records("fact") if r.get("type") == "ChildNotice"] == []
