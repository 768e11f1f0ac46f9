"""The cue engine in generic mode (docs/design.md#generic-mode with the rules of
docs/design.md#cue-rules), rule by rule.

Pure: ``Eng`` (from test_engine_rules) drives ``step`` with an explicit time, no bridge.
"""

from __future__ import annotations

import pytest
from test_engine_rules import AWAY, FOCUSED, Eng

from cuewrap.engine import consume_notice
from cuewrap.engine.effects import MARK_COMPLETED, MARK_WAITING
from cuewrap.facts import (
    ChildBell,
    ChildExit,
    ChildNotice,
    CueToggle,
    Keystroke,
    OutputActive,
    OutputQuiet,
    ProgramStatus,
)

pytestmark = pytest.mark.unit

GEN = dict(
    generic=True,
    app="aider",
    label="proj",
    signal="Waiting for your input",
    host_native=frozenset({"osc777"}),
    reemit=True,
)


def eng(**over: object) -> Eng:
    return Eng(bridge=False, **{**GEN, **over})


def notice(proto: str = "osc9", consumed: bool = True, title: str = "", body: str = "Done"):
    return ChildNotice(proto, title, body, consumed)


# --- facts from any child ---------------------------------------------------------------------


def test_rule2_bell_while_away_one_cue_with_mark_and_preset_wording() -> None:
    e = eng()
    e(AWAY, ChildBell())
    (n,) = e.notifies()
    assert n.kind == "needs-input" and n.body == "Waiting for your input"
    assert n.title == "aider — proj"
    assert e.marks() == [MARK_WAITING]


def test_rule1_bell_while_present_passes_through_and_nothing_later() -> None:
    e = eng()
    e(FOCUSED, ChildBell())
    e(AWAY)
    assert e.notifies() == [] and e.marks() == []
    assert any("passed through" in r["reason"] for r in e.records("no_cue"))


def test_rule1_bell_with_unknown_presence_and_recent_key_is_present() -> None:
    e = eng(idle_after=60.0)
    e(Keystroke(), ChildBell(), at=5.0)
    assert e.notifies() == []


def test_one_cue_per_event_a_second_bell_in_the_same_wait_adds_nothing() -> None:
    e = eng()
    e(AWAY, ChildBell(), ChildBell())
    assert len(e.notifies()) == 1


def test_rule3_return_hides_the_mark_rule4_leave_again_mark_without_notification() -> None:
    e = eng()
    e(AWAY, ChildBell())
    e(FOCUSED)
    assert e.marks()[-1] is None
    e(AWAY)
    assert e.marks()[-1] == MARK_WAITING
    assert len(e.notifies()) == 1


def test_output_resuming_ends_the_wait_and_clears_the_mark() -> None:
    e = eng()
    e(AWAY, ChildBell())
    e(OutputActive())
    assert e.s.waits == () and e.marks()[-1] is None
    e(ChildBell())
    assert len(e.notifies()) == 2  # a new wait after the output resumed


def test_echo_after_input_ends_the_wait_but_starts_no_work() -> None:
    e = eng()
    e(AWAY, ChildBell(), OutputActive(echo=True), OutputQuiet())
    assert e.s.waits == ()
    assert len(e.notifies()) == 1  # no "seems to be waiting" for an echo


# --- quiet after activity ---------------------------------------------------------------------


def test_quiet_after_activity_while_away_one_seems_waiting_cue() -> None:
    e = eng()
    e(AWAY, OutputActive(), OutputQuiet())
    (n,) = e.notifies()
    assert n.body == "Seems to be waiting"
    assert e.marks() == [MARK_WAITING]
    e(OutputQuiet())  # a second quiet without activity says nothing
    assert len(e.notifies()) == 1


def test_quiet_while_present_gives_nothing_then_or_later() -> None:
    e = eng()
    e(FOCUSED, OutputActive(), OutputQuiet())
    e(AWAY)
    assert e.notifies() == [] and e.marks() == []


def test_wait_told_by_a_stronger_fact_gets_nothing_more_when_output_goes_quiet() -> None:
    for told in (ChildBell(), notice(), ProgramStatus("blocked", "build")):
        e = eng()
        e(AWAY, OutputActive(), told, OutputQuiet())
        assert len(e.notifies()) == 1, told
        assert e.notifies()[0].body != "Seems to be waiting"


def test_bell_while_present_also_counts_as_told_for_the_quiet() -> None:
    e = eng()
    e(FOCUSED, OutputActive(), ChildBell(), AWAY, OutputQuiet())
    assert e.notifies() == []


def test_output_resuming_ends_the_quiet_wait() -> None:
    e = eng()
    e(AWAY, OutputActive(), OutputQuiet(), OutputActive())
    assert e.s.waits == () and e.marks()[-1] is None


# --- the child's own notifications: translate, never duplicate -------------------------------


def test_consumed_notification_is_delivered_once_with_the_childs_text() -> None:
    e = eng()
    e(AWAY, notice("osc9", True, body="Build \x1b[31mdone\x07\n now"))
    (n,) = e.notifies()
    assert n.body == "Build done now"  # escape sequences and controls gone, one line
    assert n.title == "aider — proj"  # OSC 9 has no title: the app's
    assert e.marks() == [MARK_WAITING]
    (cue,) = e.records("cue")
    assert cue["translated_from"] == "osc9" and "Build" not in str(cue["body"])


def test_consumed_notification_title_and_body_are_capped() -> None:
    e = eng()
    e(AWAY, notice("osc777", True, title="T" * 500, body="B" * 500))
    (n,) = e.notifies()
    assert len(n.title) == 80 and len(n.body) == 200


def test_rule2_bell_then_consumed_notification_in_one_wait_is_one_notification() -> None:
    e = eng()
    e(AWAY, ChildBell(), notice("osc9", True, body="Build done"))
    (n,) = e.notifies()
    assert n.body == "Waiting for your input"  # the BEL's cue, already given
    assert e.marks() == [MARK_WAITING]
    (merged,) = [r for r in e.records("no_cue") if str(r["reason"]).startswith("merged")]
    assert merged["signal"] == "osc9" and merged["merged_chars"] == len("Build done")
    assert "Build" not in str(merged)  # the log keeps only the length of the child's text


def test_rule5_two_consumed_notifications_in_one_wait_merge() -> None:
    e = eng()
    e(AWAY, notice("osc9", True, body="first"), notice("osc99", True, body="second"))
    (n,) = e.notifies()
    assert n.body == "first"


def test_rule2_a_new_wait_after_output_resumed_gets_its_translation() -> None:
    e = eng()
    e(AWAY, ChildBell(), OutputActive(), notice("osc9", True, body="Build done"))
    assert [n.body for n in e.notifies()] == ["Waiting for your input", "Build done"]


def test_rule5_merged_notification_still_tells_the_wait_for_the_quiet() -> None:
    e = eng()
    e(AWAY, OutputActive(), ChildBell(), notice("osc9", True), OutputQuiet())
    assert len(e.notifies()) == 1


def test_notification_passed_to_a_host_that_shows_it_adds_only_the_mark() -> None:
    e = eng()
    e(AWAY, notice("osc777", False))
    assert e.notifies() == []
    assert e.marks() == [MARK_WAITING]
    assert "host terminal shows it" in e.records("cue")[0]["delivery"]


def test_notification_while_present_passes_through_and_nothing_more() -> None:
    e = eng()
    e(FOCUSED, notice("osc9", False), AWAY)
    assert e.notifies() == [] and e.marks() == []


def test_policy_consumes_only_when_away_and_host_does_not_show_it() -> None:
    e = eng()
    assert not consume_notice(e.s, "osc9", 0.0)  # present at the start
    e(AWAY)
    assert consume_notice(e.s, "osc9", 0.0)
    assert consume_notice(e.s, "osc99", 0.0)
    assert not consume_notice(e.s, "osc777", 0.0)  # the host shows it as it is
    e(FOCUSED)
    assert not consume_notice(e.s, "osc9", 0.0)


def test_rule2_policy_consumes_even_a_host_shown_notification_in_a_told_wait() -> None:
    e = eng()
    e(AWAY, ChildBell())
    assert consume_notice(e.s, "osc777", 0.0)  # the host would show it: a second one
    e(ChildNotice("osc777", "T", "B", True))
    assert len(e.notifies()) == 1
    e(OutputActive())  # a new wait: the host shows it again, nothing taken out
    assert not consume_notice(e.s, "osc777", 0.0)


def test_policy_counts_idle_time_without_a_step() -> None:
    e = eng(idle_after=10.0)
    e(Keystroke(), at=1.0)
    assert not consume_notice(e.s, "osc9", 10.9)
    assert consume_notice(e.s, "osc9", 11.0)


def test_policy_never_consumes_without_a_channel_cues_off_or_in_pi_mode() -> None:
    for cfg in ({"reemit": False}, {"enabled": False}, {"generic": False}):
        e = eng(**cfg)
        e(AWAY)
        assert not consume_notice(e.s, "osc9", 0.0), cfg


def test_policy_consumes_nothing_outside_a_blocked_wait_once_osc7501_is_trusted() -> None:
    e = eng()
    e(AWAY, ProgramStatus("working", "build"))
    assert not consume_notice(e.s, "osc9", 0.0)
    e(notice("osc9", False), ChildBell())
    assert e.notifies() == []  # weaker source: recorded only


def test_policy_merges_a_notification_into_the_blocked_wait_it_already_told() -> None:
    """One popup per wait: the program's own notification during an OSC 7501 ``blocked``
    wait cuewrap already told is taken out (merged), whatever the host shows; outside such a
    wait it passes (the stronger source's cue covers the rest)."""
    e = eng()
    e(AWAY, ProgramStatus("working", "claude-code"))
    assert not consume_notice(e.s, "osc777", 0.0)
    e(ProgramStatus("blocked", "claude-code", "permission"))
    (told,) = e.notifies()
    assert consume_notice(e.s, "osc777", 0.0) and consume_notice(e.s, "osc9", 0.0)
    e(notice("osc777", True, "Claude Code", "Claude needs your permission to use Bash"))
    assert e.notifies() == [told]
    (merged,) = [r for r in e.records("no_cue") if r.get("signal") == "osc777"]
    assert merged["reason"] == "merged: this wait was already told"
    e(FOCUSED)
    assert not consume_notice(e.s, "osc777", 0.0)  # looking: it passes
    e(AWAY, ProgramStatus("working", "claude-code"))
    assert not consume_notice(e.s, "osc777", 0.0)  # the wait ended with the report


# --- OSC 7501 from any program -----------------------------------------------------------------


def test_osc7501_from_any_program_names_it_never_pi() -> None:
    e = eng()
    e(AWAY, ProgramStatus("working", "build"), ProgramStatus("done", "build"))
    (n,) = e.notifies()
    assert n.title == "build — proj" and "Pi" not in n.title + n.body
    assert n.kind == "finished" and e.marks()[-1] == MARK_COMPLETED


def test_osc7501_as_claude_code_reports_it_and_its_redraws_are_not_work() -> None:
    """Claude Code 2.1.328's reports for a prompt, a permission prompt and an Esc; its output
    (redraws after done, the spinner) is not its activity once it reports (docs/generic-mode.md)."""
    from cuewrap.engine.glance import session_state

    e = eng(app="Claude Code")
    e(AWAY, OutputActive(), ProgramStatus("idle", "claude-code"))
    assert session_state(e.s) == "idle"
    e(ProgramStatus("working", "claude-code"), OutputActive())
    assert session_state(e.s) == "working"
    e(ProgramStatus("done", "claude-code"), OutputActive(), OutputQuiet())
    assert session_state(e.s) == "finished"
    e(
        ProgramStatus("working", "claude-code"),
        ProgramStatus("blocked", "claude-code", "permission"),
    )
    assert session_state(e.s) == "needs-input"
    done, waiting = e.notifies()
    assert (done.kind, done.body, done.source) == ("finished", "Finished", "osc7501")
    assert (waiting.kind, waiting.body, waiting.source) == (
        "needs-input",
        "Needs your input",
        "osc7501",
    )
    assert done.title == "claude-code — proj"  # no preset named it: its own app= name
    assert [r["fact_kind"] for r in e.records("wait") if r.get("state") == "pending"] == [
        "permission"
    ]
    assert e.records("cue")[-1]["fact_kind"] == "permission"
    # Esc during a run: idle with no done is the user's cancel
    e(ProgramStatus("working", "claude-code"), Keystroke())
    e(ProgramStatus("idle", "claude-code"), at=e.t + 1.0)
    assert e.notifies()[-1].body == "Cancelled"
    assert [r for r in e.records("no_cue") if r.get("signal") == "quiet"]  # recorded only


def test_osc7501_idle_after_working_without_a_keystroke_is_no_cancel() -> None:
    """Codex CLI 0.171.0 reports ``working`` then ``idle`` while it starts (before any prompt):
    no key was typed, so it is no user's cancel, and nothing is told; a run that goes idle
    after the user typed (its Esc) is Cancelled, even when the key was told just before the
    run started (keys are told at most once a second: docs/generic-mode.md)."""
    e = eng(app="Codex")
    e(AWAY, ProgramStatus("idle", "codex"), ProgramStatus("working", "codex"), at=1.0)
    e(ProgramStatus("idle", "codex"), at=1.5)
    assert e.notifies() == []
    assert e.records("run")[-1]["state"] == "ended"
    assert e.records("cue") == []
    # typed 0.8 s before working (its Esc told only at the end of that second): cancelled
    e(Keystroke(), at=10.0)
    e(ProgramStatus("working", "codex"), at=10.8)
    e(ProgramStatus("idle", "codex"), at=11.5)
    assert [n.body for n in e.notifies()] == ["Cancelled"]
    # typed long before the run and not during it: the program's own idle, no cue
    e(ProgramStatus("working", "codex"), ProgramStatus("idle", "codex"), at=30.0)
    assert len(e.notifies()) == 1
    # a done is Finished whatever was typed
    e(ProgramStatus("working", "codex"), ProgramStatus("done", "codex"), at=40.0)
    assert [n.body for n in e.notifies()] == ["Cancelled", "Finished"]


def test_osc7501_idle_sooner_than_a_person_could_cancel_is_no_cancel() -> None:
    """Codex CLI 0.171.0, slowed at its start, reported ``working`` then ``idle`` 21-28 ms
    apart as the user's first keys came in (the prompt still being typed): keys were typed, but
    no person sees a run and presses Esc that fast. The run ends with no cue; a real prompt's
    run after it is told as usual, and an Esc a quarter of a second in is Cancelled."""
    e = eng(app="Codex")
    e(AWAY, ProgramStatus("idle", "codex"), at=1.0)
    e(Keystroke(), at=2.0)
    e(ProgramStatus("working", "codex"), at=2.01)
    e(ProgramStatus("idle", "codex"), at=2.038)
    assert e.notifies() == [] and e.records("cue") == []
    assert e.records("run")[-1]["state"] == "ended"
    assert e.records("run")[-1]["reason"] == "idle too soon for a cancel"
    # the prompt, sent: its run finishes and is told
    e(Keystroke(), at=3.0)
    e(ProgramStatus("working", "codex"), at=3.2)
    e(ProgramStatus("done", "codex"), at=6.0)
    assert [n.body for n in e.notifies()] == ["Finished"]
    # a run the user cancels 0.25 s in: Cancelled
    e(Keystroke(), at=20.0)
    e(ProgramStatus("working", "codex"), at=20.1)
    e(ProgramStatus("idle", "codex"), at=20.35)
    assert [n.body for n in e.notifies()] == ["Finished", "Cancelled"]
    # and one 0.249 s in is still too soon
    e(Keystroke(), at=40.0)
    e(ProgramStatus("working", "codex"), at=40.1)
    e(ProgramStatus("idle", "codex"), at=40.349)
    assert [n.body for n in e.notifies()] == ["Finished", "Cancelled"]


def test_osc7501_an_outcome_straight_after_idle_ends_the_run_it_skipped() -> None:
    """Claude Code coalesces a quick change: for an HTTP 400 it sometimes reports ``idle`` then
    ``error`` with no ``working`` between (docs/generic-mode.md). The outcome still ends a run:
    one Failed; an outcome repeated after an outcome is no second run."""
    e = eng(app="Claude Code")
    e(AWAY, ProgramStatus("idle", "claude-code"), ProgramStatus("error", "claude-code"))
    (n,) = e.notifies()
    assert (n.kind, n.body, n.source) == ("finished", "Failed", "osc7501")
    assert e.records("cue")[-1]["why"] == "osc7501 error"
    assert [r["state"] for r in e.records("run")] == ["started", "implied", "settled"]
    e(ProgramStatus("error", "claude-code"), ProgramStatus("done", "claude-code"))
    assert len(e.notifies()) == 1  # after an outcome, an outcome is not a run
    # a permission prompt answered so fast that neither ``working`` was told: still one run
    e(
        ProgramStatus("idle", "claude-code"),
        ProgramStatus("blocked", "claude-code", "permission"),
        ProgramStatus("done", "claude-code"),
    )
    assert [c.body for c in e.notifies()] == ["Failed", "Needs your input", "Finished"]


def test_osc7501_an_outcome_as_the_first_report_is_no_run() -> None:
    e = eng(app="Claude Code")
    e(AWAY, ProgramStatus("done", "claude-code"), ProgramStatus("error", "claude-code"))
    assert e.notifies() == [] and e.records("run") == []


def test_osc7501_without_app_is_rejected_in_generic_mode() -> None:
    e = eng()
    e(AWAY, ProgramStatus("working", None), ProgramStatus("done", None))
    assert e.notifies() == []


# --- exit and invalidation ---------------------------------------------------------------------


def test_exit_while_away_gives_the_exited_cue() -> None:
    e = eng()
    e(AWAY, ChildExit(2, None))
    (n,) = e.notifies()
    assert n.kind == "exited" and n.body == "Exited (status 2)" and n.title == "aider — proj"


def test_exit_while_present_gives_nothing() -> None:
    e = eng()
    e(FOCUSED, ChildExit(0, None))
    assert e.notifies() == []


def test_rule7_return_and_exit_invalidate_pending_cues() -> None:
    from cuewrap.engine import is_eligible

    e = eng()
    e(AWAY, ChildBell())
    (n,) = e.notifies()
    e(FOCUSED)
    assert not is_eligible(e.s, n.eligibility)
    e2 = eng()
    e2(AWAY, OutputActive(), OutputQuiet())
    (q,) = e2.notifies()
    e2(ChildExit(0, None))
    assert not is_eligible(e2.s, q.eligibility)


def test_no_cues_gives_nothing() -> None:
    e = eng(enabled=False)
    e(AWAY, ChildBell(), OutputActive(), OutputQuiet(), ChildExit(1, None))
    assert e.notifies() == [] and e.marks() == []
    e2 = eng()
    e2(CueToggle(False), AWAY, ChildBell())
    assert e2.notifies() == []


def test_pi_mode_records_child_signals_only() -> None:
    e = Eng(bridge=False)
    e(AWAY, ChildBell(), OutputActive(), OutputQuiet())
    assert e.notifies() == []


def test_privacy_summary_the_programs_own_text_is_its_summary() -> None:
    """Generic mode with privacy.body = "summary": the body is unchanged (the program's own
    text), and it is also what notify.command gets as ``summary``; the log keeps lengths."""
    e = eng(privacy_summary=True)
    e(AWAY, notice("osc9", True, body="Build \x1b[31mdone\x07 \u202e now"))
    (n,) = e.notifies()
    off = eng()
    off(AWAY, notice("osc9", True, body="Build \x1b[31mdone\x07 \u202e now"))
    (plain,) = off.notifies()
    assert n.body == plain.body and plain.summary is None
    assert n.summary == "Build done now"
    (cue,) = e.records("cue")
    assert cue["summary_chars"] == len("Build done now") and "Build" not in str(cue)
    bell = eng(privacy_summary=True)
    bell(AWAY, ChildBell())  # a BEL: the preset's words, no text of the program's own
    (n,) = bell.notifies()
    assert n.body == "Waiting for your input" and n.summary == ""


def test_a_presets_name_wins_over_the_reports_app_name() -> None:
    """The claude preset names the program "Claude Code"; its reports say app=claude-code."""
    e = eng(app="Claude Code", app_known=True)
    e(AWAY, ProgramStatus("working", "claude-code"), ProgramStatus("done", "claude-code"))
    [done] = e.notifies()
    assert done.title == "Claude Code — proj"


# --- a known program's own words (engine/notices.py: Gemini CLI's) ----------------------------

ENDED = ("Gemini CLI session complete", "Run finished | Gemini CLI finished responding.")
ASKS = ("Gemini CLI needs your attention", "Approval required | Approve tool action: Shell")


def gemini(**over: object) -> Eng:
    return eng(app="Gemini CLI", notices="gemini", **over)


def test_gemini_words_read() -> None:
    from cuewrap.engine.notices import meaning

    assert meaning("gemini", *ENDED) == "ended"
    assert meaning("gemini", *ASKS) == "permission"
    assert meaning("gemini", ASKS[0], "Answer requested by agent | Pick one") == "attention"
    assert meaning("gemini", "Gemini CLI session complete!", "") is None  # not its words
    assert meaning("aider", *ENDED) is None  # another program's notification: not read


def test_gemini_turn_ended_is_one_finished_of_unknown_outcome() -> None:
    e = gemini()
    e(AWAY, notice("osc777", True, *ENDED))
    (n,) = e.notifies()
    assert (n.kind, n.outcome, n.certainty, n.body) == (
        "finished",
        "uncertain",
        "uncertain",
        "Finished (outcome unknown)",
    )
    assert n.title == "Gemini CLI — proj"  # cuewrap's words, never the child's text


def test_gemini_approval_is_a_needs_input_of_kind_permission_once() -> None:
    e = gemini()
    e(AWAY, notice("osc777", True, *ASKS))
    e(notice("osc777", True, *ASKS))  # its repeat after 20 s: the same wait
    (n,) = e.notifies()
    assert n.kind == "needs-input" and n.body == "Needs your input"
    (cue,) = e.records("cue")
    assert cue["fact_kind"] == "permission" and "Approve" not in str(cue)
    assert "child" in e.s.wait_keys


def test_gemini_words_while_present_give_nothing_and_are_taken_out() -> None:
    e = gemini()
    assert consume_notice(e.s, "osc777", 0.0)  # present, the host shows it: still taken out
    e(FOCUSED, notice("osc777", True, *ENDED), notice("osc777", True, *ASKS), AWAY)
    assert e.notifies() == []
    e2 = eng()  # an unknown program: its notification passes while the user looks
    assert not consume_notice(e2.s, "osc777", 0.0)


def test_gemini_output_after_its_words_is_no_work_and_no_quiet_guess() -> None:
    e = gemini()
    e(AWAY, notice("osc777", True, *ENDED), OutputActive(), OutputQuiet())
    assert [n.kind for n in e.notifies()] == ["finished"]


# --- a program's own words (opencode: engine/said.py, engine/words.py) -----------------------


def opencode(**over: object) -> Eng:
    return eng(app="opencode", words="opencode", **over)


def test_its_words_session_done_while_away_is_one_certain_finished() -> None:
    e = opencode()
    e(AWAY, notice("osc99", True, title="A title the model wrote", body="Session done"))
    (n,) = e.notifies()
    assert (n.kind, n.outcome, n.body) == ("finished", "completed", "Finished")
    assert "model" not in n.title  # its title (the session's) is never shown or read
    assert e.marks() == [MARK_COMPLETED]
    (cue,) = e.records("cue")
    assert (cue["source"], cue["why"]) == ("child", "opencode said done (its own words)")
    assert cue.get("certainty", "certain") == "certain"
    e(OutputQuiet())  # its output going quiet afterwards adds no guess
    assert len(e.notifies()) == 1


@pytest.mark.parametrize(
    ("body", "outcome", "says"),
    [
        ("Session error", "failed", "Failed"),
        ("Model stopped responding", "failed", "Failed"),
        ("Session aborted", "cancelled", "Cancelled"),
    ],
)
def test_its_error_and_abort_words_are_their_outcomes(body: str, outcome: str, says: str) -> None:
    e = opencode()
    e(AWAY, notice("osc99", True, body=body))
    (n,) = e.notifies()
    assert (n.kind, n.outcome) == ("finished", outcome) and n.body.startswith(says)


def test_its_permission_words_open_one_needs_input_wait_of_that_kind() -> None:
    e = opencode()
    e(AWAY, notice("osc99", True, body="Permission needs input"))
    (n,) = e.notifies()
    assert (n.kind, n.body) == ("needs-input", "Needs your input")
    assert "said" in e.s.wait_keys
    (cue,) = e.records("cue")
    assert (cue["source"], cue["fact_kind"]) == ("child", "permission")
    e(notice("osc99", True, body="Session done"))  # the turn ends: the wait with it
    assert "said" not in e.s.wait_keys
    assert [x.kind for x in e.notifies()] == ["needs-input", "finished"]


def test_its_words_while_present_give_nothing_then_or_later() -> None:
    e = opencode()
    e(FOCUSED, notice("osc99", True, body="Session done"))
    e(AWAY)
    assert e.notifies() == []


def test_words_are_read_only_for_the_program_the_preset_names() -> None:
    e = eng()  # aider's preset: no words of its own
    e(AWAY, notice("osc99", True, body="Session done"))
    (n,) = e.notifies()
    assert (n.kind, n.body) == ("needs-input", "Session done")  # a notification, its text
    e = opencode()
    e(AWAY, notice("osc99", True, body="Session done soon"))  # not one of its words
    (n,) = e.notifies()
    assert (n.kind, n.body) == ("needs-input", "Session done soon")


def test_a_program_told_the_users_presence_gets_a_step_when_idle_time_turns_them_away() -> None:
    """No focus reports: the user counts as away after ``idle_after`` s without a key. For a
    program told the user's presence (its words read) a step is due then, wait or none, so
    that it learns the user left before its turn ends (the controller tells it)."""
    from cuewrap.engine.effects import Wake
    from cuewrap.engine.state import Tick

    e = opencode(idle_after=60.0)
    e(Keystroke(), at=10.0)
    assert [w.at for w in e.all if isinstance(w, Wake)] == [70.0]
    e(Tick(), at=70.0)
    assert e.s.looking is False
    e = eng(idle_after=60.0)  # any other program: no wait, no step due
    e(Keystroke(), at=10.0)
    assert [w for w in e.all if isinstance(w, Wake)] == []
