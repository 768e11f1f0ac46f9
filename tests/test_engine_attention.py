"""The attention budget in the pure engine (docs/attention.md): quiet hours and the desktop's
do-not-disturb (``Quiet`` facts from the edge), mute (``Mute``). Explicit times, no clock."""

from __future__ import annotations

import pytest
from test_engine_rules import AWAY, FOCUSED, RUN, Eng, only, settle

from cuewrap.engine import Tick, glance
from cuewrap.engine.effects import MARK_COMPLETED, MARK_WAITING, Escalate, Wake, Withdraw
from cuewrap.facts import Mute, Quiet, UiPromptEnd, UiPromptStart

pytestmark = pytest.mark.unit

QUIET = Quiet("quiet hours")
LOUD = Quiet(None)


def urgent(e: Eng) -> list[Escalate]:
    return [x for x in only(e.all, Escalate) if x.note.urgent]


def test_quiet_holds_every_notification_but_keeps_marks_and_state() -> None:
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"))
    assert e.notifies() == []
    assert e.marks()[-1] == MARK_WAITING
    assert glance.session_state(e.s) == "needs-input"
    [held] = e.records("held")
    assert held["reason"] == "quiet hours" and held["cue"] == "needs-input"
    e(UiPromptEnd("confirm"), *settle())
    assert e.notifies() == []
    assert e.marks()[-1] == MARK_COMPLETED
    assert glance.session_state(e.s) == "finished"
    assert [r["cue"] for r in e.records("held")] == ["needs-input", "finished"]
    assert only(e.all, Withdraw) == []  # never withdraws what was never sent


def test_the_end_of_quiet_reminds_once_of_what_still_waits() -> None:
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"))
    fx = e(LOUD)
    [n] = e.notifies(fx)
    assert n.kind == "needs-input"
    assert e.records("released", fx)[0]["reason"] == "quiet ended"
    e(Quiet("quiet hours"), LOUD)
    assert len(e.notifies()) == 1  # one reminder, not one per end


def test_the_end_of_quiet_says_nothing_of_what_was_resolved() -> None:
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), UiPromptEnd("confirm"))
    fx = e(LOUD)
    assert e.notifies(fx) == []
    # a run that finished and was then seen: nothing either
    e(QUIET, *RUN, *settle(), FOCUSED, AWAY, LOUD)
    assert e.notifies() == []


def test_the_end_of_quiet_prefers_the_wait_over_an_older_outcome() -> None:
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, *settle())
    e(FOCUSED)  # seen: that outcome is no longer live
    e(*RUN, AWAY, *settle(outcome="failed", stop="error"))
    fx = e(LOUD)
    [n] = e.notifies(fx)
    assert n.kind == "finished" and n.outcome == "failed"


def test_urgent_after_runs_notify_command_once_while_quiet() -> None:
    e = Eng(urgent_after=60.0)
    e(QUIET, FOCUSED, *RUN, AWAY, at=100.0)
    fx = e(UiPromptStart("confirm"), at=100.0)
    assert [w.at for w in only(fx, Wake)] == [160.0]
    e(Tick(), at=159.0)
    assert urgent(e) == []
    e(Tick(), at=160.0)
    [u] = urgent(e)
    assert u.note.kind == "needs-input" and u.note.urgent
    e(Tick(), at=500.0)
    e(FOCUSED, AWAY, Tick(), at=600.0)
    assert len(urgent(e)) == 1  # once per wait
    assert e.notifies() == []


def test_urgent_is_cancelled_by_an_answer_a_return_or_the_end_of_quiet() -> None:
    for end in (UiPromptEnd("confirm"), FOCUSED, LOUD, Mute(True, "test")):
        e = Eng(urgent_after=60.0)
        e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=100.0)
        e(end, at=120.0)
        e(Tick(), at=200.0)
        assert urgent(e) == [], end


def test_urgent_never_for_a_finished_run_and_off_at_zero() -> None:
    e = Eng(urgent_after=60.0)
    e(QUIET, FOCUSED, *RUN, AWAY, *settle(), at=100.0)
    e(Tick(), at=1000.0)
    assert urgent(e) == []
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=100.0)
    e(Tick(), at=100000.0)
    assert urgent(e) == []


def test_quiet_turns_an_armed_escalation_into_the_urgent_rule() -> None:
    e = Eng(escalate_after=30.0, urgent_after=60.0)
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=100.0)
    [n] = e.notifies()
    e(QUIET, at=110.0)
    e(Tick(), at=130.0)
    assert only(e.all, Escalate) == []  # notify.command does not run during quiet
    e(Tick(), at=160.0)
    [u] = urgent(e)
    assert u.note.cue_id == n.cue_id


def test_mute_holds_and_never_replays() -> None:
    e = Eng(urgent_after=10.0, escalate_after=10.0)
    e(Mute(True, "test"), FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), at=1.0)
    assert e.notifies() == []
    assert e.marks()[-1] == MARK_WAITING
    assert e.records("held")[0]["reason"] == "muted"
    e(Tick(), at=100.0)
    assert only(e.all, Escalate) == []
    e(Mute(False, "test"), Tick(), at=200.0)
    assert e.notifies() == []  # unmuting replays nothing (rule 7)
    e(UiPromptEnd("confirm"), UiPromptStart("select"), at=201.0)
    assert [n.kind for n in e.notifies()] == ["needs-input"]  # a new wait cues again


def test_mute_wins_over_the_end_of_quiet() -> None:
    e = Eng()
    e(QUIET, FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), Mute(True, "t"), LOUD)
    assert e.notifies() == []


def test_a_cue_during_a_desktop_do_not_disturb_is_held_with_its_reason() -> None:
    e = Eng()
    e(Quiet("desktop do-not-disturb"), FOCUSED, *RUN, AWAY, *settle())
    assert e.notifies() == []
    assert e.records("held")[0]["reason"] == "desktop do-not-disturb"
    e(LOUD)
    assert [n.kind for n in e.notifies()] == ["finished"]


def test_generic_mode_takes_the_programs_notification_out_while_quiet() -> None:
    from cuewrap.engine import consume_notice

    e = Eng(bridge=False, generic=True, host_native=frozenset({"osc9"}), reemit=True)
    e(FOCUSED, AWAY, at=1.0)
    assert consume_notice(e.s, "osc9", 2.0) is False  # the host shows it as it is
    e(QUIET, at=2.0)
    assert consume_notice(e.s, "osc9", 2.0) is True  # quiet: nothing pops up
    e(LOUD, Mute(True, "t"), at=3.0)
    assert consume_notice(e.s, "osc9", 3.0) is True
    e(FOCUSED, at=4.0)
    assert consume_notice(e.s, "osc9", 4.0) is False  # the user looks: it passes
