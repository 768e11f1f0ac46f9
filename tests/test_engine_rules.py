"""The cue engine, rule by rule (docs/design.md#cue-rules, plus #presence, #guard, #fact-sources).

Pure tests: no fds, no clock. ``Eng`` drives ``step`` with an explicit time.
"""

from __future__ import annotations

import pytest

from cuewrap.engine import EngineConfig, Tick, initial_state, is_eligible, status, step, wording
from cuewrap.engine.effects import (
    MARK_CANCELLED,
    MARK_COMPLETED,
    MARK_FAILED,
    MARK_WAITING,
    Diagnostic,
    KeepAwake,
    Notify,
    Record,
    SetMark,
    Wake,
    Withdraw,
)
from cuewrap.engine.status import (
    NOT_YET,
    TRUSTED,
    UNRECOGNIZED,
    Integration,
    PresenceStatus,
    Usage,
)
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    AskBlocked,
    BridgeGone,
    BridgeHello,
    ChildExit,
    CueToggle,
    Fact,
    Keystroke,
    Presence,
    ProgramStatus,
    ScreenActivity,
    SessionShutdown,
    SessionStart,
    SubagentComplete,
    SubagentForegroundComplete,
    SubagentStarted,
    ToolEnd,
    ToolStart,
    UiPromptEnd,
    UiPromptStart,
    UserInput,
)

pytestmark = pytest.mark.unit

SESSION = "/home/u/.pi/sessions/s1.jsonl"
OWNER = "owner-1"
AWAY = Presence("away")
FOCUSED = Presence("focused")


def hello(mode: str = "tui", sid: str = "sid-1", file: str | None = SESSION, name=None):
    return BridgeHello(1, "1.4.0", mode, True, sid, file, 4242, name)


def bg_start(run_id: str = "r1", parent: str | None = SESSION, **kw) -> SubagentStarted:
    args = dict(
        run_id=run_id,
        session_id=parent,
        completion_owner_id=OWNER,
        artifact_version=3,
        parent=parent,
        owner_now=OWNER,
    )
    args.update(kw)
    return SubagentStarted(**args)


def bg_done(run_id: str = "r1", success: bool | None = True, parent: str = SESSION, **kw):
    args = dict(
        run_id=run_id,
        session_id=parent,
        completion_owner_id=OWNER,
        success=success,
        awaited_by_workflow=False,
        parent=parent,
        owner_now=OWNER,
    )
    args.update(kw)
    return SubagentComplete(**args)


RUN = (UserInput("interactive"), AgentStart())


def settle(outcome: str | None = "completed", stop: str | None = "stop", aborted=False):
    out: list[Fact] = [AgentEnd(stop)]
    if outcome is not None:
        out.append(AgentBeforeSettle(outcome))
    out.append(AgentSettled(aborted))
    return tuple(out)


class Eng:
    """A test driver: feeds events at an explicit time and keeps every effect."""

    def __init__(self, *, bridge: bool = True, **cfg: object) -> None:
        self.s = initial_state(EngineConfig(**cfg))  # type: ignore[arg-type]
        self.t = 0.0
        self.all: list[object] = []
        self.last: list[object] = []
        if bridge:
            self(hello(), SessionStart("startup", "sid-1", SESSION))

    def __call__(self, *events: object, at: float | None = None) -> list[object]:
        if at is not None:
            self.t = at
        out: list[object] = []
        for ev in events:
            self.s, fx = step(self.s, ev, self.t)  # type: ignore[arg-type]
            out.extend(fx)
        self.last = out
        self.all.extend(out)
        return out

    def notifies(self, fx: list[object] | None = None) -> list[Notify]:
        return [e for e in (self.all if fx is None else fx) if isinstance(e, Notify)]

    def marks(self, fx: list[object] | None = None) -> list[str | None]:
        return [e.mark for e in (self.all if fx is None else fx) if isinstance(e, SetMark)]

    def records(self, kind: str, fx: list[object] | None = None) -> list[dict]:
        src = self.all if fx is None else fx
        return [e.fields for e in src if isinstance(e, Record) and e.kind == kind]


def only(fx: list[object], kind: type) -> list:
    return [e for e in fx if isinstance(e, kind)]


# --- rule 1: focused → no new cue -----------------------------------------------------------


def test_rule1_focused_no_new_cue_of_any_kind() -> None:
    e = Eng()
    e(FOCUSED, *RUN, UiPromptStart("confirm"), UiPromptEnd("confirm"), *settle())
    e(bg_start(), bg_done(), ToolStart("c1", "ask_user_question"), AskBlocked(True))
    e(*RUN, ChildExit(0, None))
    assert e.notifies() == []
    assert all(m is None for m in e.marks())
    assert e.records("fact")  # facts are still recorded
    assert any(r["reason"] == "focused" for r in e.records("no_cue"))


# --- rule 2: a wait while away: [?] and at most one notification ----------------------------


def test_rule2_wait_starts_while_away_marks_and_notifies_once() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY)
    fx = e(UiPromptStart("confirm"))
    assert e.marks(fx) == [MARK_WAITING]
    [n] = e.notifies(fx)
    assert n.kind == "needs-input" and n.body == "Needs your input"
    assert is_eligible(e.s, n.eligibility)
    e(UiPromptStart("confirm"), Tick())
    assert len(e.notifies()) == 1


def test_rule2_user_leaves_while_a_wait_is_pending() -> None:
    e = Eng()
    e(FOCUSED, *RUN, UiPromptStart("select"))
    assert e.notifies() == []
    fx = e(AWAY)
    assert e.marks(fx) == [MARK_WAITING]
    assert len(e.notifies(fx)) == 1


# --- rule 3: focus returns → marks hidden, the wait stays pending ---------------------------


def test_rule3_focus_return_hides_every_mark_wait_stays_pending() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("input"))
    [n] = e.notifies()
    fx = e(FOCUSED)
    assert e.marks(fx) == [None]
    assert e.s.wait_keys == ("ui",)
    assert not is_eligible(e.s, n.eligibility)


# --- rule 4: leave again while the same wait is pending → [?], no new notification ----------


def test_rule4_leave_again_same_wait_mark_without_new_notification() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("editor"))
    for _ in range(3):
        e(FOCUSED)
        fx = e(AWAY)
        assert e.marks(fx) == [MARK_WAITING]
        assert e.notifies(fx) == []
    assert len(e.notifies()) == 1


# --- rule 5: several waits merge into one [?] and at most one notification ------------------


def test_rule5_several_waits_merge() -> None:
    e = Eng()
    e(FOCUSED, *RUN, ToolStart("a", "ask_user_question"), ToolStart("b", "ask_user_question"))
    e(AWAY)
    e(UiPromptStart("confirm"))
    e(AskBlocked(True, "a"), AskBlocked(True, "b"))
    assert len(e.notifies()) == 1
    assert [m for m in e.marks() if m] == [MARK_WAITING]
    e(AskBlocked(False, "a"), UiPromptEnd("confirm"))
    assert e.marks() == [MARK_WAITING]  # b still waits
    fx = e(AskBlocked(False, "b"))
    assert e.marks(fx) == [None]


def test_rule5_waits_started_while_focused_merge_on_leave() -> None:
    e = Eng()
    e(FOCUSED, *RUN, ToolStart("a", "ask_user_question"), UiPromptStart("confirm"))
    e(AskBlocked(True, "a"))
    fx = e(AWAY)
    assert len(e.notifies(fx)) == 1 and e.marks(fx) == [MARK_WAITING]


# --- rule 6: the run settles while away → one cue naming the outcome ------------------------


@pytest.mark.parametrize(
    ("facts", "outcome", "mark", "body"),
    [
        (settle("completed"), "completed", MARK_COMPLETED, "Finished"),
        (settle("error", "error"), "failed", MARK_FAILED, "Failed"),
        (settle("aborted", "aborted"), "cancelled", MARK_CANCELLED, "Cancelled"),
        (settle(None, "aborted", aborted=True), "cancelled", MARK_CANCELLED, "Cancelled"),
        (settle(None, "stop"), "completed", MARK_COMPLETED, "Finished"),
        (settle(None, "error"), "failed", MARK_FAILED, "Failed"),
        (settle(None, None), "uncertain", MARK_FAILED, "Finished (outcome unknown)"),
    ],
)
def test_rule6_settle_while_away_one_cue(facts, outcome, mark, body) -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY)
    fx = e(*facts)
    [n] = e.notifies(fx)
    assert (n.kind, n.outcome, n.body, n.title) == ("finished", outcome, body, "Pi")
    assert e.marks(fx) == [mark]
    assert n.eligibility.run == e.s.last_run


def test_rule6_escape_settles_cancelled_without_before_settle() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, AgentEnd("error"), AgentSettled(True))
    [n] = e.notifies()
    assert n.outcome == "cancelled"


def test_rule6_retries_are_one_run_and_agent_end_is_not_the_end() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY)
    for _ in range(3):
        e(AgentEnd("error"), AgentStart())
    assert e.notifies() == []
    e(AgentEnd("stop"), AgentBeforeSettle("completed"), AgentSettled(False))
    [n] = e.notifies()
    assert n.outcome == "completed"
    e(AgentSettled(False))  # a duplicate settle makes no second cue
    assert len(e.notifies()) == 1


def test_rule6_run_settled_while_focused_gives_nothing_later() -> None:
    e = Eng()
    e(FOCUSED, *RUN, *settle())
    fx = e(AWAY, Tick())
    assert e.notifies(fx) == [] and e.marks(fx) == []


# --- rule 7: invalidation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "invalidator",
    [FOCUSED, UserInput("interactive"), AgentStart(), CueToggle(False), ChildExit(0, None)],
)
def test_rule7_invalidation_makes_pending_cues_ineligible(invalidator) -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, *settle())
    [n] = e.notifies()
    assert is_eligible(e.s, n.eligibility)
    e(invalidator)
    assert not is_eligible(e.s, n.eligibility)
    assert e.records("invalidated")


def test_rule7_new_task_clears_the_finished_mark() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, *settle())
    fx = e(UserInput("rpc"))
    assert e.marks(fx) == [None]


def test_rule7_turning_cues_back_on_never_replays() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, *settle())
    [n] = e.notifies()
    e(CueToggle(False))
    assert e.marks()[-1] is None
    e(CueToggle(True))
    assert not is_eligible(e.s, n.eligibility)
    assert e.marks()[-1] is None and len(e.notifies()) == 1
    # a wait pending while cues were off is not notified after /cue on
    e(FOCUSED, *RUN, CueToggle(False), UiPromptStart("confirm"), CueToggle(True), AWAY)
    assert len(e.notifies()) == 1


def test_rule7_keystroke_return_invalidates_with_unknown_presence() -> None:
    e = Eng(idle_after=10)
    e(*RUN, at=1)
    e(*settle(), at=20)
    [n] = e.notifies()
    e(Keystroke(), at=21)
    assert not is_eligible(e.s, n.eligibility)
    assert e.marks()[-1] is None


# --- rule 8: eligibility carries generation, run, epoch -------------------------------------


def test_rule8_eligibility_rechecked_against_generation_and_cue() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"))
    [wait] = e.notifies()
    assert wait.eligibility.run == e.s.run.id
    e(UiPromptEnd("confirm"))  # the wait ended: its notification is moot
    assert not is_eligible(e.s, wait.eligibility)
    e(*settle())
    fin = e.notifies()[-1]
    assert is_eligible(e.s, fin.eligibility)
    e(SessionShutdown("reload"))
    assert not is_eligible(e.s, fin.eligibility)


# --- rule 9: parent idle is not children done -----------------------------------------------


def test_rule9_background_still_running_when_main_run_settles() -> None:
    e = Eng()
    e(FOCUSED, *RUN, bg_start("r1"), bg_start("r2"), AWAY, *settle())
    [n] = e.notifies()
    assert n.body == "Finished; 2 background tasks still running"
    assert wording.sentence(n.body) == "Pi finished; 2 background tasks still running"
    assert "all done" not in n.body.lower()


def test_rule9_background_completion_while_idle_and_away_cues() -> None:
    e = Eng()
    e(FOCUSED, *RUN, bg_start("r1"), bg_start("r2"), *settle(), AWAY)
    fx = e(bg_done("r1", success=False))
    [n] = e.notifies(fx)
    assert (
        n.kind == "background"
        and n.body == "Background task failed; 1 background task still running"
    )
    assert e.marks(fx) == [MARK_FAILED]
    e(bg_done("r2"))
    assert e.notifies()[-1].body == "Background task finished"


def test_rule9_background_completion_while_pi_busy_no_cue() -> None:
    e = Eng()
    e(FOCUSED, *RUN, bg_start("r1"), AWAY, bg_done("r1"))
    assert e.notifies() == []
    assert any("busy" in r["reason"] for r in e.records("no_cue"))


# --- rule 10: gaps --------------------------------------------------------------------------


@pytest.mark.parametrize("gap", [(SessionShutdown("reload"),), (BridgeGone(),)])
def test_rule10_gap_drops_waits_clears_marks_background_becomes_gap(gap) -> None:
    e = Eng()
    e(FOCUSED, bg_start("r1"), *RUN, ToolStart("a", "ask_user_question"), AWAY)
    e(AskBlocked(True, "a"))
    gen = e.s.generation
    fx = e(*gap)
    assert e.s.generation == gen + 1 and e.s.waits == ()
    assert e.marks(fx) == [None]
    e(BridgeGone(), hello(), SessionStart("reload", "sid-1", SESSION))
    e(*settle())  # the run started before the gap: no cue
    e(bg_done("r1"))
    assert len(e.notifies()) == 1  # only the wait notified before the gap
    assert any(r["reason"] == "started before a gap" for r in e.records("no_cue"))
    e(AskBlocked(False, "a"), AskBlocked(True, "a"), ToolStart("a", "ask_user_question"))
    e(AskBlocked(True, "a"))
    assert len(e.notifies()) == 1  # ask id reused across sessions: skipped


def test_rule10_new_session_replacement_and_duplicate_session_start() -> None:
    e = Eng()
    gen = e.s.generation
    e(SessionStart("startup", "sid-1", SESSION))  # duplicate: harmless
    assert e.s.generation == gen
    e(SessionShutdown("new"), BridgeGone(), hello(sid="sid-2", file="/s2.jsonl"))
    e(SessionStart("new", "sid-2", "/s2.jsonl"), SessionStart("new", "sid-2", "/s2.jsonl"))
    assert e.s.generation == gen + 1 and e.s.parent == "/s2.jsonl"
    e(FOCUSED, *RUN, AWAY, *settle())
    assert len(e.notifies()) == 1  # the new session cues normally


# --- rule 11: the engine only composes its own mark -----------------------------------------


def test_rule11_engine_never_touches_child_output() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"), *settle(), bg_start(), ChildExit(0, None))
    kinds = {type(x) for x in e.all}
    assert kinds <= {Record, SetMark, Notify, Withdraw, Wake, KeepAwake, Diagnostic}


# --- rule 12: privacy -----------------------------------------------------------------------


def test_rule12_notification_carries_app_label_and_status_only() -> None:
    e = Eng(label="work")
    e(FOCUSED, *RUN, AWAY, *settle())
    [n] = e.notifies()
    assert (n.title, n.body) == ("Pi — work", "Finished")
    e(hello(name="refactor\x1b]0;evil\x07"), FOCUSED, *RUN, AWAY, *settle())
    n = e.notifies()[-1]
    assert n.title.startswith("Pi — refactor") and "\x1b" not in n.title and "\x07" not in n.title
    assert len(wording.title("x" * 500)) <= len("Pi — ") + wording.LABEL_MAX


# --- rule 13: decisions are recorded --------------------------------------------------------


def test_rule13_every_fact_decision_and_non_decision_is_recorded() -> None:
    e = Eng()
    fx = e(FOCUSED)
    assert e.records("fact", fx)[0]["type"] == "Presence"
    fx = e(*RUN, AWAY)
    assert e.records("presence", fx) and e.records("invalidated", fx)
    fx = e(*settle())
    [cue] = e.records("cue", fx)
    assert cue["cue_id"] == e.notifies(fx)[0].cue_id and cue["outcome"] == "completed"
    fx = e(FOCUSED, *RUN, *settle())
    assert any(r["cue"] == "finished" and r["reason"] == "focused" for r in e.records("no_cue", fx))
    fx = e(UiPromptStart("confirm"))
    assert e.records("fact", fx)[0] == {
        "type": "UiPromptStart",
        "source": "bridge",
        "fact_kind": "confirm",
    }
    fx = e(bg_start(artifact_version=2))
    assert e.records("rejected", fx)[0]["integration"] == "pi-subagents"


# --- needs-input facts ----------------------------------------------------------------------


def test_needs_input_native_prompt_only_while_a_run_is_active() -> None:
    e = Eng()
    e(AWAY, UiPromptStart("confirm"))
    assert e.notifies() == [] and e.s.waits == ()
    e(*RUN, UiPromptStart("confirm"))
    assert len(e.notifies()) == 1


def test_needs_input_ask_with_tool_call_id_must_match_exactly() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY)
    e(AskBlocked(True, "nope"))  # no native start seen
    assert e.notifies() == [] and status(e.s).integration("ask").status == UNRECOGNIZED
    e(ToolStart("c1", "bash"), AskBlocked(True, "c1"))  # not an ask_user_question call
    assert e.notifies() == []
    e(ToolStart("c2", "ask_user_question"), AskBlocked(True, "c2"))
    assert len(e.notifies()) == 1
    assert status(e.s).integration("ask").status == TRUSTED


def test_needs_input_ask_without_id_only_with_exactly_one_call_in_flight() -> None:
    e = Eng()
    e(FOCUSED, *RUN, AWAY, ToolStart("a", "ask_user_question"))
    e(ToolStart("b", "ask_user_question"), AskBlocked(True))
    assert e.notifies() == []
    assert any("2 ask_user_question calls" in r["reason"] for r in e.records("rejected"))
    e(ToolEnd("b", "ask_user_question", False), AskBlocked(True))
    assert len(e.notifies()) == 1 and e.s.wait_keys == ("ask:a",)
    e(AskBlocked(False))
    assert e.s.waits == ()


def test_needs_input_ask_end_then_replayed_true_does_not_reopen() -> None:
    for end in (AskBlocked(False, "a"), ToolEnd("a", "ask_user_question", False)):
        e = Eng()
        e(FOCUSED, *RUN, ToolStart("a", "ask_user_question"), AskBlocked(True, "a"), end)
        assert e.s.waits == ()
        e(AskBlocked(True, "a"), AskBlocked(True), AWAY)
        assert e.s.waits == () and e.notifies() == []


def test_needs_input_ask_repeated_native_start_is_skipped() -> None:
    e = Eng()
    e(FOCUSED, *RUN, ToolStart("a", "ask_user_question"), AskBlocked(True, "a"))
    e(AskBlocked(False, "a"), ToolStart("a", "ask_user_question"), AskBlocked(True, "a"), AWAY)
    assert e.notifies() == [] and e.s.waits == ()


def test_needs_input_several_questionnaires_tracked_independently() -> None:
    e = Eng()
    e(FOCUSED, *RUN, ToolStart("a", "ask_user_question"), ToolStart("b", "ask_user_question"))
    e(AskBlocked(True, "a"), AskBlocked(True, "b"), AskBlocked(False, "a"))
    assert e.s.wait_keys == ("ask:b",)
    fx = e(AWAY)
    assert len(e.notifies(fx)) == 1


def test_needs_input_osc7501_blocked_ended_by_next_status() -> None:
    e = Eng(bridge=False)
    e(FOCUSED, ProgramStatus("idle", "pi"), ProgramStatus("working", "pi"), AWAY)
    fx = e(ProgramStatus("blocked", "pi", "permission"))
    assert e.marks(fx) == [MARK_WAITING] and len(e.notifies(fx)) == 1
    fx = e(ProgramStatus("working", "pi"))
    assert e.s.waits == () and e.marks(fx) == [None]


# --- background facts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"artifact_version": 2}, "lifecycleArtifactVersion is not 3"),
        ({"session_id": "/other.jsonl"}, "sessionId is not the current parent session"),
        ({"parent": None, "session_id": SESSION}, "sessionId is not the current parent session"),
        ({"owner_now": None}, "completionOwnerId is not this process's completion owner"),
        ({"owner_now": "owner-2"}, "completionOwnerId is not this process's completion owner"),
        ({"completion_owner_id": ""}, "missing id, sessionId or completionOwnerId"),
        ({"run_id": ""}, "missing id, sessionId or completionOwnerId"),
    ],
)
def test_background_start_recorded_only_with_valid_fields(change, reason) -> None:
    e = Eng()
    fx = e(bg_start(**change))
    assert e.records("rejected", fx)[0]["reason"] == reason
    assert len(e.s.bg) == 0 and status(e.s).integration("pi-subagents").status == UNRECOGNIZED


@pytest.mark.parametrize(
    "bad",
    [
        bg_done("unseen"),
        bg_done(session_id="/other.jsonl"),
        bg_done(completion_owner_id="owner-2"),
        bg_done(owner_now="owner-2"),
        bg_done(success=None),
        bg_done(awaited_by_workflow=True),
    ],
)
def test_background_completion_counts_only_when_it_matches(bad) -> None:
    e = Eng()
    e(FOCUSED, bg_start(), AWAY, bad)
    assert e.notifies() == []


def test_background_completion_deduplicated_by_parent_and_run_id() -> None:
    e = Eng()
    e(FOCUSED, bg_start(), bg_start(), AWAY, bg_done(), bg_done(), bg_done(success=False))
    assert len(e.notifies()) == 1
    assert any(r["reason"] == "duplicate completion" for r in e.records("rejected"))


def test_background_workflow_and_foreground_only_remove_state() -> None:
    e = Eng(keep_awake=True)
    e(FOCUSED, bg_start("r1"), bg_start("r2"), AWAY)
    assert e.s.bg_active == 2 and e.s.awake_held
    e(bg_done("r1", awaited_by_workflow=True), SubagentForegroundComplete("r2"))
    assert e.s.bg_active == 0 and e.notifies() == []
    assert only(e.all, KeepAwake)[-1] == KeepAwake(False)


# --- capacity -------------------------------------------------------------------------------


def test_capacity_ask_ids_8192_refuse_new_diagnostic_once_no_eviction() -> None:
    e = Eng()
    e(FOCUSED, *RUN)
    for i in range(8192):
        e(ToolStart(f"c{i}", "ask_user_question"), ToolEnd(f"c{i}", "ask_user_question", False))
    assert len(e.s.ask_history) == 8192
    fx = e(ToolStart("new1", "ask_user_question"), ToolStart("new2", "ask_user_question"))
    assert len(only(fx, Diagnostic)) == 1 and len(e.s.ask_history) == 8192
    e(ToolStart("c0", "ask_user_question"))  # old ids not evicted: still a repeat
    assert any("seen before" in r["reason"] for r in e.records("rejected", e.last))
    assert status(e.s).capacity.ask_ids == Usage(used=8192, limit=8192)


def test_capacity_background_records_8192() -> None:
    e = Eng()
    for i in range(8192):
        e(bg_start(f"r{i}"), bg_done(f"r{i}"))
    fx = e(bg_start("x"), bg_start("y"))
    assert len(only(fx, Diagnostic)) == 1 and len(e.s.bg) == 8192
    e(AWAY, bg_done("r5"))  # old record kept: still a duplicate, no cue
    assert e.notifies() == []


# --- presence (docs/design.md#presence)
# ----------------------------------------------------------------------


def test_presence_unknown_idle_counts_as_away_and_wakes_only_when_pending() -> None:
    e = Eng(idle_after=60)
    e(*RUN, at=1)
    assert only(e.all, Wake) == []  # nothing pending: no wake-up
    fx = e(UiPromptStart("confirm"), at=5)
    assert e.notifies(fx) == [] and only(fx, Wake) == [Wake(60.0)]
    fx = e(Keystroke(), at=30)
    assert only(fx, Wake) == [Wake(90.0)]
    fx = e(Tick(), at=90)
    assert len(e.notifies(fx)) == 1 and e.marks(fx) == [MARK_WAITING]
    assert only(fx, Wake) == [Wake(None)]
    fx = e(Keystroke(), at=95)
    assert e.marks(fx) == [None] and e.s.looking
    fx = e(UiPromptEnd("confirm"), at=96)
    assert only(fx, Wake) == [Wake(None)]


def test_presence_terminal_without_focus_reports_still_cues() -> None:
    e = Eng(idle_after=60)
    e(*RUN, at=0)
    e(*settle(), at=30)
    assert e.notifies() == []  # present: not idle since the start, nothing typed
    assert [r["reason"] for r in e.records("no_cue") if r.get("cue") == "finished"] == [
        "present (no focus reports; not idle yet)"  # not "recent keystroke": none was typed
    ]
    e(*RUN, at=100)
    e(*settle(), at=200)
    assert len(e.notifies()) == 1
    assert status(e.s).presence == PresenceStatus(
        state="unknown",
        counts_as="away",
        via="keystrokes and idle time",
        idle_after=60,
    )


def test_presence_focus_reports_override_keystrokes_and_idle() -> None:
    e = Eng(idle_after=10)
    e(FOCUSED, *RUN, at=0)
    e(*settle(), at=500)
    assert e.notifies() == []
    e(AWAY, Keystroke(), *RUN, *settle(), at=501)
    assert len(e.notifies()) == 1
    assert status(e.s).integration("focus").status == TRUSTED


# --- guard (docs/design.md#guard) and sources (docs/design.md#fact-sources)
# -----------------------------------------------------


def test_guard_non_tui_mode_disables_cues_for_that_runtime() -> None:
    e = Eng(bridge=False, keep_awake=True)
    e(hello(mode="rpc"), AWAY, *RUN, UiPromptStart("confirm"), *settle())
    assert e.notifies() == [] and e.marks() == [] and only(e.all, KeepAwake) == []
    assert "rpc" in (status(e.s).guard or "") and e.records("guard")
    e(SessionShutdown("reload"), BridgeGone(), hello(mode="tui"), *RUN, *settle())
    assert len(e.notifies()) == 1


def test_sources_bridge_live_osc_and_screen_make_no_cue() -> None:
    e = Eng()
    e(FOCUSED, AWAY, ProgramStatus("working", "pi"), ProgramStatus("blocked", "pi"))
    e(ProgramStatus("done", "pi"), ScreenActivity(True), ScreenActivity(False))
    assert e.notifies() == [] and e.s.run is None
    assert status(e.s).integration("osc7501").status == TRUSTED


@pytest.mark.parametrize(
    ("end", "outcome"), [("done", "completed"), ("error", "failed"), ("idle", "cancelled")]
)
def test_sources_osc7501_drives_runs_without_bridge(end, outcome) -> None:
    e = Eng(bridge=False)
    e(FOCUSED, ProgramStatus("idle", "pi"), ProgramStatus("working", "pi"), AWAY)
    e(ScreenActivity(False))  # weaker: ignored
    assert e.notifies() == []
    fx = e(ProgramStatus(end, "pi"))
    [n] = e.notifies(fx)
    assert n.outcome == outcome
    assert status(e.s).source == "osc7501"


def test_sources_screen_only_says_seems() -> None:
    e = Eng(bridge=False)
    e(FOCUSED, ScreenActivity(True), AWAY, ScreenActivity(False))
    [n] = e.notifies()
    assert n.body == "Seems to have finished" and n.outcome == "uncertain"
    assert e.marks() == [MARK_FAILED]
    e(ProgramStatus("working", "other-app"))  # not Pi's: unrecognized, screen still drives
    assert status(e.s).integration("osc7501").status == UNRECOGNIZED


def test_sources_bridge_gone_hands_over_to_osc7501() -> None:
    e = Eng()
    e(FOCUSED, ProgramStatus("idle", "pi"), SessionShutdown("quit"), BridgeGone(), AWAY)
    e(ProgramStatus("working", "pi"), ProgramStatus("done", "pi"))
    assert len(e.notifies()) == 1


# --- exited ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "sig", "body"),
    [(0, None, "Exited"), (1, None, "Exited (status 1)"), (None, 9, "Was killed (signal 9)")],
)
def test_exited_cue_when_run_active_and_away(code, sig, body) -> None:
    e = Eng(keep_awake=True)
    e(FOCUSED, *RUN, AWAY, UiPromptStart("confirm"))
    fx = e(BridgeGone(), ChildExit(code, sig))
    [n] = e.notifies(fx)
    assert n.kind == "exited" and n.body == body and is_eligible(e.s, n.eligibility)
    assert e.marks(fx) == [None] and KeepAwake(False) in fx
    fx = e(*RUN, AWAY, *settle(), ChildExit(0, None))
    assert e.notifies(fx) == []


def test_exited_no_cue_when_focused_or_idle() -> None:
    e = Eng()
    e(FOCUSED, *RUN, ChildExit(None, 15))
    f = Eng()
    f(AWAY, ChildExit(0, None))
    assert e.notifies() == [] and f.notifies() == []


# --- keep-awake -----------------------------------------------------------------------------


def test_keep_awake_held_while_runs_need_the_machine() -> None:
    e = Eng(keep_awake=True)
    e(FOCUSED)
    assert KeepAwake(True) in e(*RUN)
    assert only(e(bg_start()), KeepAwake) == []
    assert only(e(*settle()), KeepAwake) == []  # background still running
    assert KeepAwake(False) in e(bg_done())
    assert KeepAwake(True) in e(*RUN)
    assert KeepAwake(False) in e(CueToggle(False))
    assert only(Eng()(*RUN), KeepAwake) == []  # off unless configured


# --- status page ----------------------------------------------------------------------------


def test_status_page_reports_integrations_capacity_presence() -> None:
    e = Eng(bridge=False)
    st = status(e.s)
    assert {i.name: i.status for i in st.integrations} == {
        "bridge": NOT_YET,
        "osc7501": NOT_YET,
        "focus": NOT_YET,
        "ask": NOT_YET,
        "pi-subagents": NOT_YET,
    }
    assert st.enabled is True and st.presence.state == "unknown"
    e(hello(), FOCUSED, bg_start(), bg_start(), bg_start(owner_now=None))
    st = status(e.s)
    assert st.integration("bridge") == Integration("bridge", TRUSTED, rejected=0, reasons=())
    assert st.bridge_live is True
    assert st.integration("pi-subagents").rejected == 2
    assert st.capacity.background == Usage(used=1, limit=8192)
    assert st.presence.state == "focused"
    e(CueToggle(False))
    assert status(e.s).enabled is False


# --- an older Pi (its hello says which features it has; pi_support) -------------------------


def old_hello(caps: frozenset[str] = frozenset(), mode: str | None = None, has_ui: bool = True):
    """Pi 0.74.2: no ctx.mode, none of agent_settled, ui_prompt, agent_before_settle, 7501."""
    return BridgeHello(1, "0.74.2", mode, has_ui, "sid-1", SESSION, 4242, None, caps)


def test_older_pi_is_said_once_and_its_agent_end_ends_the_run() -> None:
    e = Eng(bridge=False)
    fx = e(old_hello(), SessionStart("startup", "sid-1", SESSION))
    [d] = only(fx, Diagnostic)
    assert d.text.startswith("Pi 0.74.2 has no agent_settled, ui_prompt, agent_before_settle")
    assert "full cues need Pi ≥ 1.3.0" in d.text and "runs end at agent_end" in d.text
    [r] = e.records("pi_support", fx)
    assert r["pi"] == "0.74.2" and r["full"] is False and r["capabilities"] == []
    assert e.s.guard is None  # no mode, but a UI: the interactive TUI
    assert status(e.s).pi_support == d.text
    e(FOCUSED, *RUN, AWAY)
    fx = e(AgentEnd("stop"))
    [n] = e.notifies(fx)
    assert (n.kind, n.outcome, n.body) == ("finished", "completed", "Finished")
    e(FOCUSED, *RUN, AWAY)
    [n] = e.notifies(e(AgentEnd("error")))
    assert n.outcome == "failed"
    # /reload: a new hello of the same Pi is not said again
    fx = e(old_hello(), SessionStart("reload", "sid-1", SESSION))
    assert only(fx, Diagnostic) == []


def test_a_pi_with_agent_settled_waits_for_it_even_without_the_newer_features() -> None:
    e = Eng(bridge=False)
    fx = e(old_hello(frozenset({"agent_settled", "ui_prompt"}), mode="tui"))
    [d] = only(fx, Diagnostic)
    assert "agent_before_settle, osc7501" in d.text and "agent_settled" not in d.text
    e(FOCUSED, *RUN, AWAY, AgentEnd("error"), AgentStart())
    assert e.notifies() == []
    [n] = e.notifies(e(AgentEnd("stop"), AgentSettled(False)))
    assert n.outcome == "completed"


def test_full_or_unstated_capabilities_say_nothing() -> None:
    for caps in (None, frozenset({"agent_settled", "ui_prompt", "agent_before_settle", "osc7501"})):
        e = Eng(bridge=False)
        fx = e(BridgeHello(1, "1.4.0", "tui", True, "sid-1", SESSION, 4242, None, caps))
        assert only(fx, Diagnostic) == []
        assert status(e.s).pi_support is None and status(e.s).pi_version == "1.4.0"


def test_older_pi_without_mode_and_without_ui_is_guarded() -> None:
    e = Eng(bridge=False)
    e(old_hello(has_ui=False))
    assert e.s.guard is not None and "without UI" in e.s.guard


def test_no_mark_record_when_title_marks_are_off() -> None:
    """The log records a mark only where one is written (notify.title_marks)."""
    on = Eng()
    on(FOCUSED, *RUN, AWAY, *settle())
    assert [r["mark"] for r in on.records("mark")] == [MARK_COMPLETED]
    off = Eng(title_marks=False)
    off(FOCUSED, *RUN, AWAY, *settle())
    assert off.records("mark") == []
    assert len(off.notifies()) == 1  # the cue itself is unchanged


@pytest.mark.parametrize(
    ("sequence", "read", "what"),
    [
        ("osc52", False, "clipboard write (OSC 52, 7 bytes)"),
        ("osc52", True, "clipboard read (OSC 52, 7 bytes)"),
        ("osc1337 Copy", False, "clipboard write (iTerm2 OSC 1337 Copy=, 7 bytes)"),
        ("osc1337 File", True, "file download (iTerm2 OSC 1337 File=, 7 bytes)"),
        ("osc5522", True, "clipboard read (kitty OSC 5522, 7 bytes)"),
        ("osc5522", False, "clipboard write (kitty OSC 5522, 7 bytes)"),
        ("osc-new", False, "clipboard sequence (osc-new, 7 bytes)"),
    ],
)
def test_the_clipboard_guards_line_in_pi_says_what_and_why_never_the_content(
    sequence: str, read: bool, what: str
) -> None:
    text = wording.clipboard_removed(sequence, read, 7, "no keystroke in the last 2 s")
    assert text.startswith(f"removed a {what} from Pi's output: no keystroke in the last 2 s.")
    assert text.endswith("guard.clipboard = allow lets them through.")
    assert wording.in_pi(text) == f"cuewrap: {text}"
