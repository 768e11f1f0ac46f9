"""The engine's follow-ups (docs/design.md#follow-ups): withdrawing stale notifications, escalating
an unanswered wait, the progress indicator. Pure: explicit times, no clock."""

from __future__ import annotations

import pytest
from test_engine_rules import AWAY, FOCUSED, RUN, Eng, only, settle

from cuewrap.engine import Tick
from cuewrap.engine.effects import Escalate, Notify, Progress, Wake, Withdraw
from cuewrap.facts import ChildExit, ChildProgress, CueToggle, UiPromptEnd, UiPromptStart

pytestmark = pytest.mark.unit


def withdrawn(e: Eng) -> list[tuple[int, str]]:
    return [(w.cue_id, w.reason) for w in only(e.all, Withdraw)]


# --- withdrawal ----------------------------------------------------------------------------
def test_return_withdraws_the_finished_cue() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, *settle())
    [n] = e.notifies()
    assert withdrawn(e) == []
    e(FOCUSED)
    assert withdrawn(e) == [(n.cue_id, "user returned")]
    e(AWAY, FOCUSED)
    assert len(withdrawn(e)) == 1  # once


def test_answered_wait_withdraws_its_cue_while_away() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"))
    [n] = e.notifies()
    assert n.kind == "needs-input"
    fx = e(UiPromptEnd("confirm"))
    assert [(w.cue_id, w.reason) for w in only(fx, Withdraw)] == [
        (n.cue_id, "wait ended (ui_prompt_end)")
    ]


def test_new_run_cue_off_and_exit_withdraw() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, *settle())
    first = e.notifies()[-1].cue_id
    e(*RUN)
    assert withdrawn(e) == [(first, "new task")]
    e(*settle())
    second = e.notifies()[-1].cue_id
    e(CueToggle(False))
    assert withdrawn(e)[-1] == (second, "/cue off")
    e(CueToggle(True), *RUN, UiPromptStart("confirm"))
    third = e.notifies()[-1].cue_id
    e(ChildExit(0, None))
    exited = e.notifies()[-1]
    assert exited.kind == "exited"
    assert withdrawn(e)[-1] == (third, "exit")
    assert exited.cue_id not in [c for c, _ in withdrawn(e)]


def test_never_withdraws_what_was_not_notified() -> None:
    e = Eng()
    e(FOCUSED, *RUN, UiPromptStart("confirm"), UiPromptEnd("confirm"), *settle())
    e(AWAY, FOCUSED, *RUN, CueToggle(False), ChildExit(0, None))
    assert e.notifies() == []
    assert withdrawn(e) == []


def test_every_notified_cue_is_withdrawn_at_most_once() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), UiPromptEnd("confirm"), *settle())
    e(*RUN, AWAY, *settle(), FOCUSED, AWAY, *RUN, ChildExit(0, None))
    ids = [c for c, _ in withdrawn(e)]
    assert len(ids) == len(set(ids))
    notified = {n.cue_id for n in e.notifies()}
    assert set(ids) <= notified


# --- escalation ----------------------------------------------------------------------------
def escalations(e: Eng) -> list[Notify]:
    return [x.note for x in only(e.all, Escalate)]


def test_escalates_once_after_the_delay_while_away() -> None:
    e = Eng(escalate_after=2.0)
    e(FOCUSED, *RUN, AWAY, at=10.0)
    fx = e(UiPromptStart("confirm"), at=10.0)
    [n] = e.notifies(fx)
    assert [w.at for w in only(fx, Wake)] == [12.0]  # a one-shot wake-up, no periodic tick
    e(Tick(), at=11.9)
    assert escalations(e) == []
    e(Tick(), at=12.0)
    assert escalations(e) == [n]
    e(Tick(), at=20.0)
    e(FOCUSED, AWAY, at=21.0)
    e(Tick(), at=30.0)
    assert escalations(e) == [n]  # never twice per wait


def test_return_cancels_the_escalation() -> None:
    e = Eng(escalate_after=2.0)
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=10.0)
    e(FOCUSED, at=11.0)
    e(AWAY, at=11.5)
    e(Tick(), at=12.0)
    e(Tick(), at=15.0)
    assert escalations(e) == []


def test_answered_or_finished_never_escalates() -> None:
    e = Eng(escalate_after=2.0)
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=10.0)
    e(UiPromptEnd("confirm"), at=11.0)
    e(Tick(), at=13.0)
    e(*settle(), at=14.0)
    e(Tick(), at=17.0)
    assert escalations(e) == []
    assert e.notifies()[-1].kind == "finished"


def test_off_by_default() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=10.0)
    e(Tick(), at=1000.0)
    assert escalations(e) == []


# --- progress ------------------------------------------------------------------------------
def progress(e: Eng) -> list[bool]:
    return [p.on for p in only(e.all, Progress)]


def test_progress_follows_the_run() -> None:
    e = Eng(progress=True)
    fx = e(FOCUSED, *RUN, at=10.0)
    assert progress(e) == []  # not at once: Pi may show its own (it starts at once)
    assert [w.at for w in only(fx, Wake)] == [11.5]
    e(Tick(), at=11.5)
    assert progress(e) == [True]
    e(UiPromptStart("confirm"), UiPromptEnd("confirm"), at=12.0)
    assert progress(e) == [True]
    e(*settle(), at=13.0)
    assert progress(e) == [True, False]
    e(*RUN, at=14.0)
    e(Tick(), at=15.5)
    e(ChildExit(1, None), at=16.0)
    assert progress(e) == [True, False, True, False]


def test_a_short_run_shows_no_progress() -> None:
    e = Eng(progress=True)
    e(FOCUSED, *RUN, at=10.0)
    e(*settle(), at=11.0)
    e(Tick(), at=11.5)
    assert progress(e) == []
    assert e.s.wake_at is None


def test_progress_off_by_default_and_when_pi_shows_its_own() -> None:
    e = Eng()
    e(FOCUSED, *RUN, at=1.0)
    e(Tick(), *settle(), at=5.0)
    assert progress(e) == []
    e = Eng(progress=True)
    e(FOCUSED, *RUN, at=1.0)
    e(ChildProgress(3), at=1.2)
    e(Tick(), *settle(), at=5.0)
    assert progress(e) == []
    e = Eng(progress=True)
    e(FOCUSED, *RUN, at=1.0)
    e(Tick(), at=3.0)
    e(ChildProgress(3), at=3.5)
    assert progress(e) == [True, False]
