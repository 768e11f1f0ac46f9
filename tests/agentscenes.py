"""The scenarios the tests of third-party agents share (tests/agentrig.py's sessions): each
plays the user, and asserts what cuewrap must do, whatever the program.

- ``finished_from_reports(S, TITLE, APP, QUIET)``  a prompt while away: one Finished, from
  the program's own reports (a program that reports its state: Claude Code, Codex)
- ``needs_input_from_blocked(S, TITLE, SHOWN, QUIET)``  a tool call that needs approval while
  away: one Needs your input, from the program's ``blocked:kind=permission`` report;
  ``approved_on_return(S, KEY)`` the user comes back and approves it: nothing more told
- ``failed_call_while_away(S, WAITING_FOR, QUIET)``  the model call fails while away
- ``cancelled_by_escape(S, QUIET)``  the user, away, interrupts a slow answer with Escape
- ``present_nothing(S)``  a prompt while the user looks: nothing told
- ``ls_shows_working_then_finished(S, ENV, PROGRAM)``  ``cuewrap ls`` during and after a run
"""

from __future__ import annotations

import json
from typing import Any

from agentrig import AWAY, BACK, AgentSession
from waiting import absence_window, wait_until


def ls_shows_working_then_finished(s: AgentSession, private: dict[str, str], program: str) -> None:
    """The user goes away and types a prompt whose answer comes slowly (the session started
    with ``private``, ``private_runtime``'s): ``cuewrap ls`` shows it working, then finished,
    both from the program's OSC 7501 reports, as JSON and as the table."""
    s.presence(AWAY, "away")
    s.type("write slowly")
    working = wait_until(
        lambda: (rows := s.ls(private))[0]["state"] == "working" and rows, 20, "ls: working"
    )
    assert working[0]["source"] == "osc7501" and working[0]["program"] == program
    finished = wait_until(
        lambda: (rows := s.ls(private))[0]["state"] == "finished" and rows, 30, "ls: finished"
    )
    assert finished[0]["outcome"] == "completed" and finished[0]["source"] == "osc7501"
    table = s.ls_table(private)
    assert table[0][:5] == ["PID", "STATE", "SINCE", "PROGRAM", "SOURCE"]
    assert table[1][1] == "finished" and "osc7501" in table[1]


def finished_from_reports(
    s: AgentSession, title: bytes, app: str, quiet: str
) -> list[tuple[str, str]]:
    """The user goes away and types a prompt the fake API answers with "The first answer from
    the fake API." (the session's first step): one Finished, from the program's own OSC 7501
    reports (``working``, ``done`` of ``app``; taken out: a bare PTY does not speak the
    protocol), and the events file says where the state came from. Returns the reports'
    (state, app), in order."""
    notes = s.notified_away(
        "say hello",
        "the Finished cue",
        quiet,
        shown="The first answer from the fake API",
        detail=lambda: s.records("cue"),
    )
    assert notes == [(title, b"Finished")], notes
    states = [(f["state"], f["app"]) for f in s.statuses()]
    assert ("working", app) in states and ("done", app) in states, states
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["outcome"], cue["source"], cue["why"]) == (
        "finished",
        "completed",
        "osc7501",
        "osc7501 done",
    )
    assert b"\x1b]7501;state=" not in s.out()
    events = [json.loads(line) for line in s.events.read_text().splitlines()]
    told = [(e["state"], e.get("source")) for e in events]
    assert ("working", "osc7501") in told and ("finished", "osc7501") in told, told
    return states


def present_nothing(s: AgentSession, done_within: float = 30) -> None:
    """The user looks and types a prompt the fake API answers with "An answer while you
    look.": the program reports ``done`` (within ``done_within`` s), and nothing is told, no
    title mark drawn; the decision log says the Finished was not told for the focus."""
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("An answer while you look", mark)
    s.wait_status("done", timeout=done_within)
    absence_window(2.0, "a cue while the user looks")
    assert s.notifications() == [] and b"\x1b]2;[" not in s.out()
    assert s.records("cue") == []
    assert any(
        r.get("cue") == "finished" and r.get("reason") == "focused" for r in s.records("no_cue")
    )


def needs_input_from_blocked(
    s: AgentSession, title: bytes, shown: str, quiet: str
) -> list[dict[str, Any]]:
    """The user goes away and types a prompt the fake API answers with a tool call that needs
    approval (the program shows ``shown``): one Needs your input, from the program's own
    ``blocked`` report of kind ``permission``. Returns the ``blocked`` reports."""
    notes = s.notified_away("make a file", "the Needs your input cue", quiet, shown=shown)
    assert notes == [(title, b"Needs your input")], notes
    blocked = [f for f in s.statuses() if f["state"] == "blocked"]
    assert blocked and blocked[0]["fact_kind"] == "permission", s.statuses()
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"], cue["fact_kind"]) == ("needs-input", "osc7501", "permission")
    return blocked


def approved_on_return(
    s: AgentSession, key: bytes, *, done_after: int | None = None, done_within: float = 30
) -> None:
    """The user comes back and approves (``key``) the tool call: it runs (its file is made),
    the fake API's next answer "The tool ran." is shown, the program reports ``done`` (past
    its first ``done_after`` reports, when given), and nothing more is told while they look."""
    s.presence(BACK, "focused")
    mark = len(s.out())
    s.p.send(key)
    s.wait_text("The tool ran", mark)
    assert (s.cwd / "made-by-the-tool").exists()
    if done_after is not None:
        s.wait_status("done", after=done_after, timeout=done_within)
    absence_window(1.0, "a cue while the user looks")
    assert len(s.notifications()) == 1, s.notifications()


def failed_call_while_away(
    s: AgentSession, waiting_for: str, quiet: str = "a second notification for the same error"
) -> list[Any]:
    """The user goes away and types a prompt the fake API answers with an HTTP error: what is
    told within 60 s (the program may retry first), and no more in the second after."""
    return s.notified_away("fail please", waiting_for, quiet, timeout=60, window=1.0)


def cancelled_by_escape(s: AgentSession, quiet: str = "") -> list[tuple[bytes, bytes]]:
    """The user goes away, types a prompt the fake API answers slowly (the session's first
    step: "word0 word1 …"), and once "word3" shows presses Escape: the program reports
    ``idle`` after ``working`` and never ``done``. Returns the notifications that came (and,
    with ``quiet``, asserts none more in the second after)."""
    s.presence(AWAY, "away")
    mark = s.type("write slowly")
    s.wait_text("word3", mark)
    s.p.send(b"\x1b")  # Escape: the program interrupts the run
    notes: list[tuple[bytes, bytes]] = wait_until(s.notifications, 30, "the Cancelled cue")
    if quiet:
        absence_window(1.0, quiet)
        assert s.notifications() == notes, (notes, s.notifications())
    states = [f["state"] for f in s.statuses()]
    assert states[-2:] == ["working", "idle"] and "done" not in states, states
    return notes
