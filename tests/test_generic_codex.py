"""Real Codex CLI under ``cuewrap -- codex``: facts, not guesses (docs/generic-mode.md).

Codex CLI 0.171.0 reports its state (OSC 7501, ``app=codex``) to any terminal, without asking
the Program Status query first; its preset proves those reports are its own, so they drive the
cues: ``working`` a run, ``done`` Finished, ``error`` Failed, ``blocked:kind=permission`` Needs
your input, ``idle`` after the user's Esc Cancelled. Its own ``working`` … ``idle`` while it
starts (no key typed) is no cancel. The test plays the host terminal (a bare PTY, which
answers no query).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from agentrig import AWAY, BACK, PY
from codexrig import CodexSession
from fakeresponses import http_error, text, tool_call
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

TITLE = "Codex — proj".encode()


def start(sessions: list[CodexSession], tmp_path: Path, steps: list, **kw: object) -> CodexSession:
    s = CodexSession(tmp_path, steps, **kw)  # type: ignore[arg-type]
    sessions.append(s)
    s.ready()
    return s


def test_a_prompt_while_away_gives_one_finished_from_its_own_reports(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    s = start(codex_sessions, tmp_path, [text("The first answer from the fake API.")])
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("The first answer from the fake API", mark)
    notes = wait_until(s.notifications, 30, "the Finished cue", detail=lambda: s.records("cue"))
    absence_window(2.0, "a second notification for the same run (its bell, quiet, title)")
    assert s.notifications() == notes == [(TITLE, b"Finished")]
    states = [(f["state"], f["app"]) for f in s.statuses()]
    assert ("working", "codex") in states and ("done", "codex") in states
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["outcome"], cue["source"], cue["why"]) == (
        "finished",
        "completed",
        "osc7501",
        "osc7501 done",
    )
    # it never asked: nothing was answered, its reports counted by its preset
    assert s.records("status_query") == []
    # the reports were taken out: a bare PTY does not speak the protocol
    assert b"\x1b]7501;state=" not in s.out()
    # its bell (it rang one with the focus out, at the turn's end) was recorded only
    assert [r for r in s.records("fact") if r.get("type") == "ChildBell"]
    events = [json.loads(line) for line in s.events.read_text().splitlines()]
    told = [(e["state"], e.get("source")) for e in events]
    assert ("working", "osc7501") in told and ("finished", "osc7501") in told


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
    s.presence(AWAY, "away")
    mark = s.type("make a file")
    s.wait_text("Would you like to run the following command", mark)
    notes = wait_until(s.notifications, 30, "the Needs your input cue")
    absence_window(2.0, "a second notification for the same approval (its title blinks)")
    assert s.notifications() == notes == [(TITLE, b"Needs your input")]
    blocked = [f for f in s.statuses() if f["state"] == "blocked"]
    assert blocked and blocked[0]["fact_kind"] == "permission"
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"], cue["fact_kind"]) == ("needs-input", "osc7501", "permission")
    # the user comes back and approves: the run goes on, no more cues while they look
    s.presence(BACK, "focused")
    mark = len(s.out())
    s.p.send(b"y")
    s.wait_text("The tool ran", mark)
    assert (s.cwd / "made-by-the-tool").exists()
    s.wait_status("done", after=len(blocked))
    absence_window(1.0, "a cue while the user looks")
    assert len(s.notifications()) == 1


def test_present_nothing(tmp_path: Path, codex_sessions: list[CodexSession]) -> None:
    s = start(codex_sessions, tmp_path, [text("An answer while you look.")])
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("An answer while you look", mark)
    s.wait_status("done")
    absence_window(2.0, "a cue while the user looks")
    assert s.notifications() == [] and b"\x1b]2;[" not in s.out()
    assert s.records("cue") == []
    assert any(
        r.get("cue") == "finished" and r.get("reason") == "focused" for r in s.records("no_cue")
    )


def test_an_api_error_gives_one_failed_from_error(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    s = start(codex_sessions, tmp_path, [http_error(400, "prompt is too long")])
    s.presence(AWAY, "away")
    s.type("fail please")
    notes = wait_until(s.notifications, 60, "the Failed cue")
    absence_window(1.0, "a second notification for the same error")
    assert s.notifications() == notes == [(TITLE, b"Failed")]
    assert [f["state"] for f in s.statuses()][-2:] == ["working", "error"]
    (cue,) = s.records("cue")
    assert (cue["outcome"], cue["source"], cue["why"]) == ("failed", "osc7501", "osc7501 error")


def test_escape_during_a_run_is_cancelled_never_finished(
    tmp_path: Path, codex_sessions: list[CodexSession]
) -> None:
    slow = text(" ".join(f"word{i}" for i in range(200)), chunk_delay=0.05)  # about 10 s
    s = start(codex_sessions, tmp_path, [slow])
    s.presence(AWAY, "away")
    mark = s.type("write slowly")
    s.wait_text("word3", mark)
    s.p.send(b"\x1b")  # Escape: Codex interrupts the turn
    notes = wait_until(s.notifications, 30, "the Cancelled cue")
    absence_window(1.0, "a Finished after the cancel")
    assert s.notifications() == notes == [(TITLE, b"Cancelled")]
    states = [f["state"] for f in s.statuses()]
    assert states[-2:] == ["working", "idle"] and "done" not in states


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
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    private = {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp_path)}
    slow = text(" ".join(f"word{i}" for i in range(80)), chunk_delay=0.05)  # about 4 s
    s = start(codex_sessions, tmp_path, [slow], env=private)
    s.presence(AWAY, "away")
    s.type("write slowly")
    working = wait_until(
        lambda: (rows := s.ls(private))[0]["state"] == "working" and rows, 20, "ls: working"
    )
    assert working[0]["source"] == "osc7501" and working[0]["program"] == "codex"
    finished = wait_until(
        lambda: (rows := s.ls(private))[0]["state"] == "finished" and rows, 30, "ls: finished"
    )
    assert finished[0]["outcome"] == "completed" and finished[0]["source"] == "osc7501"
    table = subprocess.run(
        [PY, "-m", "cuewrap", "ls"],
        env={**os.environ, **private},
        capture_output=True,
        text=True,
        timeout=20,
    ).stdout.splitlines()
    assert table[0].split()[:5] == ["PID", "STATE", "SINCE", "PROGRAM", "SOURCE"]
    assert table[1].split()[1] == "finished" and "osc7501" in table[1].split()


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
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("]7501;state=blocked", mark)  # drawn as text, without its ESC
    notes = wait_until(s.notifications, 30, "the Finished cue")
    absence_window(2.0, "a notification from the forged sequences")
    assert s.notifications() == notes == [(TITLE, b"Finished")]
    assert "blocked" not in [f["state"] for f in s.statuses()]
    assert [r for r in s.records("fact") if r.get("type") == "ChildNotice"] == []
