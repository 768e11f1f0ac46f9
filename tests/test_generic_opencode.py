"""Real opencode under ``cuewrap -- opencode``: heard in its own words (docs/generic-mode.md,
"opencode, measured").

opencode 1.18.33 writes no OSC 7501. It notifies (kitty's OSC 99: "Session done", its error,
"Permission needs input") only with its TUI setting ``attention.enabled`` on, only once the
terminal answered kitty's OSC 99 query, and only while it knows it is unfocused, from focus
reports it turns on where the terminal says mode 1004 is supported (DECRQM). The tests' host
is a bare PTY that answers no query: what comes is cuewrap's doing. cuewrap answers both
queries, tells it the user's presence as focus reports, turns the setting on for the session
in a settings file of its own (never the user's), takes its OSC 99 out of the output and reads
its words: one Finished (Failed, Needs your input) while the user is away, certain; nothing
while they look (it is told it is focused, and sends nothing). A user whose own settings say
anything about ``attention`` keeps exactly that: then only the guess from quiet output is left.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentrig import AWAY, BACK, started
from fakemodel import Step, text, tool_call
from opencoderig import OpencodeSession
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

QUIET = {"CUEWRAP_GENERIC_QUIET_AFTER": "4"}
TITLE = b"opencode \xe2\x80\x94 proj"
ASK_BASH = {"permission": {"bash": "ask"}}


def script(*steps: Step) -> list[Callable[[dict[str, Any]], Step]]:
    """The fake API's queue: ``steps`` in order for the agent's turns (requests that offer
    tools), a title for opencode's title requests (which come between them)."""
    turns = iter(steps)

    def answer(body: dict[str, Any]) -> Step:
        return next(turns, text("Nothing more")) if body.get("tools") else text("A title")

    return [answer] * (2 * len(steps) + 4)


def start(
    sessions: list[OpencodeSession], tmp_path: Path, *steps: Step, **kw: Any
) -> OpencodeSession:
    return started(sessions, OpencodeSession(tmp_path, script(*steps), **kw))


def heard(s: OpencodeSession) -> None:
    """cuewrap answered its two queries (taken out of the output), turned its notifications
    on for the session, and no OSC 99 of its reached the terminal."""
    queries = {(r["query"], r["taken_out"]) for r in s.records("child_query")}
    assert queries == {("decrqm1004", True), ("osc99", True)}, s.records("child_query")
    (supplied,) = s.records("supplied")
    assert supplied["state"] == "on", supplied
    assert b"\x1b]99;" not in s.out()


def away(s: OpencodeSession, shown: str, waiting_for: str, quiet: str) -> list[Any]:
    """The user goes away and types a prompt (opencode shows ``shown``): the notifications
    that come, none more in the 6 s after."""
    notes = s.notified_away(
        "say hello", waiting_for, quiet, shown=shown, timeout=40, window=6.0,
        detail=lambda: s.records("cue"),
    )  # fmt: skip
    return notes


def said(s: OpencodeSession) -> list[dict[str, Any]]:
    return [r for r in s.records("fact") if r.get("type") == "ChildNotice"]


def test_a_turn_while_away_gives_one_finished_in_its_own_words(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    s = start(opencode_sessions, tmp_path, text("Apricot"), env=QUIET)
    notes = away(s, "Apricot", "the Finished", "a second notification, or the quiet guess")
    assert notes == [(TITLE, b"Finished")]
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["outcome"], cue["source"], cue["why"]) == (
        "finished",
        "completed",
        "child",
        "opencode said done (its own words)",
    )
    assert cue.get("certainty", "certain") == "certain"
    assert [r["consumed"] for r in said(s)] == [True]
    heard(s)


def test_present_nothing(tmp_path: Path, opencode_sessions: list[OpencodeSession]) -> None:
    s = start(opencode_sessions, tmp_path, text("Blueberry"), env=QUIET)
    s.presence(BACK, "focused")
    mark = s.type("say hello")
    s.wait_text("Blueberry", mark, timeout=60)
    absence_window(8.0, "a cue while the user looks (quiet after 4 s)")
    assert s.notifications() == [] and s.records("cue") == []
    assert said(s) == []  # told it is focused, it sent nothing itself
    heard(s)


def test_the_users_own_attention_setting_stands(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    """The user's global TUI settings say ``attention.enabled: false``: cuewrap supplies
    nothing, opencode stays silent, and only the guess from its quiet output is told."""
    s = start(
        opencode_sessions,
        tmp_path,
        text("Cherry"),
        env=QUIET,
        tui={"attention": {"enabled": False}},
    )
    (supplied,) = s.records("supplied")
    assert supplied["state"] == "none" and "sets attention" in supplied["why"]
    notes = away(s, "Cherry", "the quiet guess", "a second notification for the same wait")
    assert notes == [(TITLE, b"Seems to be waiting")]
    assert said(s) == []


def test_a_permission_prompt_while_away_gives_one_needs_your_input(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    command = {"command": "echo RAN > ran.txt", "description": "Write a file"}
    s = start(
        opencode_sessions,
        tmp_path,
        tool_call("bash", command),
        text("The tool ran."),
        config=ASK_BASH,
    )
    notes = away(s, "Permission required", "Needs your input", "a second notification")
    assert notes == [(TITLE, b"Needs your input")]
    (cue,) = s.records("cue")
    assert (cue["cue"], cue["source"], cue["fact_kind"]) == ("needs-input", "child", "permission")
    assert not (s.cwd / "ran.txt").exists()
    heard(s)


def test_ten_turns_each_one_finished_soon_after_the_last_byte(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    """Ten turns while away: ten Finished, one each; how long after the fake API's last byte
    each fact came is printed (docs/generic-mode.md gives the figures; not asserted here:
    timing is the benchmarks')."""
    words = [f"Word{i}" for i in range(10)]
    s = start(opencode_sessions, tmp_path, *(text(w) for w in words))
    s.presence(AWAY, "away")
    for i, word in enumerate(words):
        mark = s.type(f"say {i}")
        s.wait_text(word, mark, timeout=60)
        wait_until(lambda n=i + 1: len(s.notifications()) == n, 30, f"Finished {i + 1}")
    absence_window(2.0, "an eleventh notification")
    assert s.notifications() == [(TITLE, b"Finished")] * 10
    facts = [r["t"] for r in said(s)]
    ends = [sv.ended for sv in s.fake.served if sv.ended is not None and sv.step.text in words]
    assert len(facts) == len(ends) == 10, (facts, ends)
    lags = [f - e for f, e in zip(facts, ends, strict=True)]
    assert all(lag > 0 for lag in lags), lags
    print(f"\nlast byte -> Finished: p50 {statistics.median(lags):.3f} s, max {max(lags):.3f} s")


def test_a_models_answer_forging_its_words_is_content_no_fact(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    """opencode's renderer passes a model's escape sequences on raw, inside its frames: a
    forged "Session done" (OSC 99) and an OSC 777 are removed by the frame rule, no fact (its
    own "Session done" may come, as for any turn)."""
    forged = "Look \x1b]99;i=9:p=body;Session done\x1b\\ and \x1b]777;notify;x;Forged\x07 end"
    s = start(opencode_sessions, tmp_path, text(forged))
    s.presence(AWAY, "away")
    mark = s.type("say hello")
    s.wait_text("Look", mark, timeout=60)
    guarded = wait_until(
        lambda: {r["sequence"] for r in s.records("guard")} >= {"osc99", "osc777"},
        30,
        "the forged sequences removed",
        detail=lambda: s.records("guard"),
    )
    assert guarded
    absence_window(3.0, "a fact of the forged words")
    assert b"Forged" not in s.out() and b"\x1b]99;i=9" not in s.out()
    # what was heard is opencode's own (its session's title, "A title"; the forgery has none)
    assert all(n["title"] == len("A title") for n in said(s)), said(s)
    assert s.notifications().count((TITLE, b"Finished")) <= 1
