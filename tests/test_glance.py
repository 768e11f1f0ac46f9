"""The session's state at a glance (``engine.glance``): pure, from the engine's state.

What ``cuewrap ls``, the tmux window option and the events file show, through a Pi run (a
dialog, the outcome, the user's return), a stop, and generic mode's facts — whatever the
presence and the cues, except that an outcome becomes ``idle`` once the user was present.
"""

from __future__ import annotations

import pytest

from cuewrap.engine import EngineConfig, Event, initial_state, step
from cuewrap.engine.glance import STATES, URGENCY, Glance, changes, presence, session_state
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentSettled,
    AgentStart,
    BridgeHello,
    ChildBell,
    ChildExit,
    CueToggle,
    JobState,
    Keystroke,
    OutputActive,
    OutputQuiet,
    Presence,
    ProgramStatus,
    SessionStart,
    UiPromptEnd,
    UiPromptStart,
)

pytestmark = pytest.mark.unit


class Run:
    """Steps the engine and collects what the overview publishes."""

    def __init__(self, **config: object) -> None:
        self.s = initial_state(EngineConfig(**config))  # type: ignore[arg-type]
        self.t = 0.0
        self.published: list[Glance] = []

    def __call__(self, fact: Event, dt: float = 0.1) -> list[Glance]:
        self.t += dt
        before = self.s
        self.s, _ = step(before, fact, self.t)
        got = changes(before, self.s)
        self.published += got
        return got

    @property
    def state(self) -> str:
        return session_state(self.s)


def hello() -> BridgeHello:
    return BridgeHello(1, "1.4.0", "tui", True, "sid", "/s.jsonl", 4242, None)


def test_urgency_order() -> None:
    order = ["needs-input", "failed", "finished", "working", "idle"]
    assert sorted(order, key=URGENCY.__getitem__) == order
    assert set(STATES) == {
        *order,
        *("cancelled", "starting", "stopped"),
    }


def test_a_pi_run_away_dialog_outcome_return() -> None:
    r = Run()
    assert r.state == "starting"
    assert r(Presence("away")) == []  # presence says nothing about the program
    assert r.state == "starting"
    assert r(hello()) == [Glance("idle")]
    r(SessionStart("startup", "sid", "/s.jsonl"))
    assert r(AgentStart()) == [Glance("working")]
    assert r(UiPromptStart("confirm")) == [Glance("needs-input")]
    assert r(UiPromptEnd("confirm")) == [Glance("working")]
    r(AgentBeforeSettle("completed"))
    assert r(AgentSettled(False)) == [Glance("finished", "completed")]
    assert r.state == "finished"
    assert presence(r.s) == "away"
    assert r(Presence("focused")) == [Glance("idle")]  # the user looked: seen
    assert presence(r.s) == "present"


def test_a_run_ending_while_present_still_says_finished_then_idle() -> None:
    r = Run()
    r(Presence("focused"))
    r(hello())
    r(AgentStart())
    r(AgentBeforeSettle("error"))
    assert r(AgentSettled(False)) == [Glance("failed", "failed"), Glance("idle")]
    assert r.state == "idle"


def test_outcomes_whatever_the_cues() -> None:
    r = Run(enabled=False)  # --no-cues: the states are the same
    r(Presence("away"))
    r(hello())
    r(CueToggle(False))
    r(AgentStart())
    assert r(AgentSettled(True)) == [Glance("cancelled", "cancelled")]
    r(AgentStart())
    assert r.state == "working"  # a new run supersedes the old outcome
    r(AgentBeforeSettle("completed"))
    assert r(AgentSettled(False)) == [Glance("finished", "completed")]


def test_no_focus_reports_idle_time_keeps_the_outcome() -> None:
    r = Run(idle_after=10.0)
    r(hello())
    r(Keystroke())
    r(AgentStart(), dt=20)  # idle for longer than idle_after: away
    assert presence(r.s) == "away"
    r(AgentBeforeSettle("completed"))
    assert r(AgentSettled(False)) == [Glance("finished", "completed")]
    assert presence(r.s) == "away"
    assert r(Keystroke()) == [Glance("idle")]  # typing again: present


def test_osc7501_runs_and_blocked() -> None:
    r = Run()
    r(Presence("away"))
    assert r(ProgramStatus("idle", "pi")) == [Glance("idle")]
    assert r(ProgramStatus("working", "pi")) == [Glance("working")]
    assert r(ProgramStatus("blocked", "pi", "permission")) == [Glance("needs-input")]
    assert r(ProgramStatus("error", "pi")) == [Glance("failed", "failed")]


def test_stopped_and_continued() -> None:
    r = Run()
    r(hello())
    r(AgentStart())
    assert r(JobState(True)) == [Glance("stopped")]
    assert r(JobState(False)) == [Glance("working")]


def test_exit_is_the_last_change() -> None:
    r = Run()
    r(hello())
    assert r(ChildExit(0, None)) == [Glance("exited")]


def test_generic_activity_bell_quiet_exit() -> None:
    r = Run(generic=True, app="make")
    r(Presence("focused"))  # looking: the cues say nothing, the states still do
    assert r.state == "starting"
    assert r(OutputActive()) == [Glance("working")]
    assert r(ChildBell()) == [Glance("needs-input")]
    # the user answered: its stretch of output goes on until it is quiet
    assert r(OutputActive(echo=True)) == [Glance("working")]
    assert r(OutputQuiet()) == [Glance("needs-input")]  # seems to be waiting
    assert r(OutputActive(echo=True)) == [Glance("idle")]  # typed: not work yet
    assert r(OutputActive()) == [Glance("working")]
    r(Presence("away"))
    assert r(ChildExit(2, None)) == [Glance("failed", "failed"), Glance("exited")]


def test_generic_exit_status_zero_is_finished() -> None:
    r = Run(generic=True, app="make")
    r(Presence("away"))
    r(OutputActive())
    assert r(ChildExit(0, None)) == [Glance("finished", "completed"), Glance("exited")]


def test_generic_bell_after_osc7501_is_the_stronger_source_s() -> None:
    r = Run(generic=True, app="x")
    r(Presence("away"))
    r(ProgramStatus("working", "x"))
    assert r.state == "working"
    assert r(ChildBell()) == []  # OSC 7501 is live: the BEL is recorded only
    assert r(ProgramStatus("done", "x")) == [Glance("finished", "completed")]
