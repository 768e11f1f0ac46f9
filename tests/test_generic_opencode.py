"""Real opencode under ``cuewrap -- opencode``: it reports nothing, so cuewrap guesses, and says
so (docs/generic-mode.md, "Programs, measured").

opencode 1.18.33 writes no OSC 7501 and asks no Program Status query. Its own notifications
("Session done", the error, "Permission needs input") come only while its window is blurred,
which it learns from focus reports it turns on only where the terminal answers its mode query
(DECRQM 1004): a bare PTY answers none, so it sends none. What is left is its output going
quiet: one uncertain "Seems to be waiting" while the user is away, nothing while they look.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentrig import AWAY, BACK
from fakemodel import Step, text
from opencoderig import OpencodeSession
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

QUIET = {"CUEWRAP_GENERIC_QUIET_AFTER": "4"}


def answer(step: Step) -> Any:
    """A queue entry: ``step`` for the agent's turn (a request that offers tools), a title for
    opencode's title request (which may come first)."""
    return lambda body: step if body.get("tools") else text("A title")


def start(
    sessions: list[OpencodeSession], tmp_path: Path, reply: Step, **kw: Any
) -> OpencodeSession:
    s = OpencodeSession(tmp_path, [answer(reply), answer(reply)], **kw)
    sessions.append(s)
    s.ready()
    return s


def test_a_prompt_while_away_gives_one_guess_from_quiet(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    s = start(opencode_sessions, tmp_path, text("Apricot"), env=QUIET)
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("Apricot", mark, timeout=60)  # one word: its spinner redraws between words
    notes = wait_until(s.notifications, 40, "the quiet guess", detail=lambda: s.records("cue"))
    absence_window(3.0, "a second notification for the same wait")
    assert s.notifications() == notes == [(b"opencode \xe2\x80\x94 proj", b"Seems to be waiting")]
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"]) == ("needs-input", "child")
    assert cue.get("certainty", "uncertain") == "uncertain"
    # no report, no query, no notification of its own in a terminal that answers no query
    assert s.statuses() == [] and s.records("status_query") == []
    assert [r for r in s.records("fact") if r.get("type") == "ChildNotice"] == []


def test_present_nothing(tmp_path: Path, opencode_sessions: list[OpencodeSession]) -> None:
    s = start(opencode_sessions, tmp_path, text("Blueberry"), env=QUIET)
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("Blueberry", mark, timeout=60)
    absence_window(8.0, "a cue while the user looks (quiet after 4 s)")
    assert s.notifications() == [] and s.records("cue") == []
