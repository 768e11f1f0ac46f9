"""Property tests of the cue engine: random facts, focus changes and ticks
(docs/design.md#cue-rules).

A ``Checker`` feeds events and checks invariants after every step, against its own simple
model of presence and gaps (not the engine's):

- never a Notify or a SetMark(mark) while the user is looking (focused or recently typing);
- every Notify is eligible when emitted; once ineligible, never eligible again; after a
  return, a new task, /cue off, exit or a gap, no earlier Notify is eligible;
- at most one finished Notify per run, one exited Notify, one needs-input Notify per wait;
- no background Notify for a run started before a gap;
- capacity holds; effects are deterministic; records and the status page are JSON-able.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from cuewrap.engine import EngineConfig, Tick, initial_state, is_eligible, status, step
from cuewrap.engine.effects import KeepAwake, Notify, Record, SetMark, Wake
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

IDLE = 30.0
CAP = 3
SIDS = ("sid-1", "sid-2")
PARENTS = ("sid-1", "sid-2", "/other")
OWNERS = ("own-1", "own-2")
CALLS = ("a", "b", "c")
RUNS = ("r1", "r2", "r3")

# --- strategies -----------------------------------------------------------------------------

presence_events = st.sampled_from([Presence("focused"), Presence("away"), Keystroke()])
bridge_events = st.one_of(
    st.builds(
        BridgeHello,
        protocol=st.just(1),
        pi_version=st.just("1.4.0"),
        mode=st.sampled_from(["tui", "tui", "rpc"]),
        has_ui=st.just(True),
        session_id=st.sampled_from(SIDS),
        session_file=st.none(),
        pid=st.just(7),
    ),
    st.builds(
        SessionStart,
        st.sampled_from(["startup", "reload", "new"]),
        st.sampled_from(SIDS),
        st.none(),
    ),
    st.builds(SessionShutdown, st.sampled_from(["reload", "new", "quit"])),
    st.just(BridgeGone()),
    st.builds(UserInput, st.just("interactive")),
    st.just(AgentStart()),
    st.builds(AgentEnd, st.sampled_from(["stop", "error", "aborted", "toolUse", None])),
    st.builds(AgentBeforeSettle, st.sampled_from(["completed", "error", "aborted", None])),
    st.builds(AgentSettled, st.booleans()),
    st.builds(UiPromptStart, st.just("confirm")),
    st.builds(UiPromptEnd, st.just("confirm")),
    st.builds(CueToggle, st.booleans()),
)
ask_events = st.one_of(
    st.builds(ToolStart, st.sampled_from(CALLS), st.sampled_from(["ask_user_question", "bash"])),
    st.builds(ToolEnd, st.sampled_from(CALLS), st.just("ask_user_question"), st.booleans()),
    st.builds(AskBlocked, st.booleans(), st.one_of(st.none(), st.sampled_from(CALLS))),
)
bg_events = st.one_of(
    st.builds(
        SubagentStarted,
        run_id=st.sampled_from(RUNS),
        session_id=st.sampled_from(PARENTS),
        completion_owner_id=st.sampled_from(OWNERS),
        artifact_version=st.sampled_from([3, 3, 2]),
        parent=st.sampled_from((*PARENTS, None)),
        owner_now=st.sampled_from((*OWNERS, None)),
    ),
    st.builds(
        SubagentComplete,
        run_id=st.sampled_from(RUNS),
        session_id=st.sampled_from(PARENTS),
        completion_owner_id=st.sampled_from(OWNERS),
        success=st.sampled_from([True, False, None]),
        awaited_by_workflow=st.booleans(),
        parent=st.sampled_from(PARENTS),
        owner_now=st.sampled_from(OWNERS),
    ),
    st.builds(SubagentForegroundComplete, st.sampled_from(RUNS)),
)
# well-formed ones, so that the matching paths are exercised often
good_bg_events = st.one_of(
    st.builds(
        lambda r, p, o: SubagentStarted(r, p, o, 3, p, o),
        st.sampled_from(RUNS),
        st.sampled_from(PARENTS),
        st.sampled_from(OWNERS),
    ),
    st.builds(
        lambda r, p, o, ok, w: SubagentComplete(r, p, o, ok, w, p, o),
        st.sampled_from(RUNS),
        st.sampled_from(PARENTS),
        st.sampled_from(OWNERS),
        st.sampled_from([True, True, False]),
        st.sampled_from([False, False, True]),
    ),
)
other_events = st.one_of(
    st.builds(
        ProgramStatus,
        st.sampled_from(["working", "done", "error", "idle", "blocked", "clear", "bogus"]),
        st.sampled_from(["pi", "pi", "other"]),
    ),
    st.builds(ScreenActivity, st.booleans()),
)
exit_events = st.builds(ChildExit, st.sampled_from([0, 1, None]), st.sampled_from([None, 9]))
any_event = st.one_of(
    presence_events,
    bridge_events,
    ask_events,
    bg_events,
    good_bg_events,
    other_events,
    st.just(Tick()),
)
any_event_or_exit = st.one_of(any_event, exit_events)
dts = st.sampled_from([0.0, 0.0, 1.0, 10.0, IDLE, IDLE + 5])


def _bg_start_valid(f: SubagentStarted) -> bool:
    return bool(
        f.run_id
        and f.session_id
        and f.completion_owner_id
        and f.artifact_version == 3
        and f.parent
        and f.session_id == f.parent
        and f.owner_now
        and f.completion_owner_id == f.owner_now
    )


class Checker:
    """Feeds events to the engine and checks every invariant after every step."""

    def __init__(self, *, keep_awake: bool = True, capacity: int = CAP) -> None:
        self.cfg = EngineConfig(idle_after=IDLE, keep_awake=keep_awake, capacity=capacity)
        self.s = initial_state(self.cfg)
        self.t = 0.0
        self.n = 0  # step index
        self.notes: list[tuple[int, Notify]] = []
        self.dead: set[int] = set()  # cue ids seen ineligible
        # independent model
        self.focus: str | None = None
        self.last_act: float | None = None
        self.exited = False
        self.enabled = True
        self.sid: str | None = None
        self.in_gap = False
        self.last_gap = -1
        self.first_valid_start: dict[tuple[str, str], int] = {}
        self.wait_opened = False
        self.awake: bool = False
        self.mark: str | None = None
        self.diagnostics = 0

    # -- model ------------------------------------------------------------------------------
    def looking(self) -> bool:
        if self.focus is not None:
            return self.focus == "focused"
        assert self.last_act is not None
        return self.t - self.last_act < IDLE

    def _model_gap(self) -> None:
        self.last_gap = self.n

    def feed(self, ev: object, dt: float = 0.0) -> list[object]:
        self.t += dt
        self.n += 1
        pre = self.s
        if self.last_act is None:
            self.last_act = self.t
        was_looking = self.looking()
        invalidating = False
        if not self.exited:
            invalidating = self._model_before(ev, pre)
        post, fx = step(pre, ev, self.t)  # type: ignore[arg-type]
        again = step(pre, ev, self.t)  # type: ignore[arg-type]
        assert again == (post, fx), "step is not deterministic"
        self.s = post
        if not self.exited and self.looking() and not was_looking:
            invalidating = True  # the user returned
        if isinstance(ev, ChildExit) and not self.exited:
            self.exited = True
            invalidating = True
        self._check(ev, pre, post, fx, invalidating)
        return fx

    def _model_before(self, ev: object, pre) -> bool:
        """Update the model for ``ev``; return True when ``ev`` must invalidate old cues."""
        if isinstance(ev, Presence):
            if ev.state == "unknown":
                self.focus, self.last_act = None, self.t
            else:
                self.focus = ev.state
        elif isinstance(ev, Keystroke):
            if self.focus is None:
                self.last_act = self.t
        elif isinstance(ev, UserInput):
            return True
        elif isinstance(ev, AgentStart):
            return pre.run is None or pre.run.generation != pre.generation
        elif isinstance(ev, CueToggle):
            was, self.enabled = self.enabled, ev.enabled
            return was and not ev.enabled
        elif isinstance(ev, SessionShutdown | BridgeGone):
            if not self.in_gap:
                self.in_gap = True
                self._model_gap()
                return True
        elif isinstance(ev, BridgeHello | SessionStart):
            gap = not self.in_gap and self.sid is not None and ev.session_id != self.sid
            self.in_gap = False
            self.sid = ev.session_id
            if gap:
                self._model_gap()
                return True
        elif isinstance(ev, SubagentStarted) and _bg_start_valid(ev):
            self.first_valid_start.setdefault((ev.session_id, ev.run_id), self.n)
        if isinstance(ev, UiPromptStart | AskBlocked | ProgramStatus):
            opens = (
                isinstance(ev, UiPromptStart)
                or (isinstance(ev, AskBlocked) and ev.active)
                or (isinstance(ev, ProgramStatus) and ev.state == "blocked")
            )
            self.wait_opened = self.wait_opened or opens
        return False

    # -- invariants -------------------------------------------------------------------------
    def _check(self, ev, pre, post, fx, invalidating: bool) -> None:
        notes = [e for e in fx if isinstance(e, Notify)]
        marks = [e for e in fx if isinstance(e, SetMark)]
        looking = self.looking()
        if not pre.exited:  # after exit the engine only records facts
            assert post.looking == looking, "engine presence differs from the model"
        for e in fx:
            if isinstance(e, Record):
                json.dumps(e.fields)
                assert "kind" not in e.fields  # the log line's kind is the record kind
        json.dumps(dataclasses.asdict(status(post)))
        # never a cue while looking or while cues are off
        if notes or any(m.mark is not None for m in marks):
            assert not looking, (ev, fx)
            assert post.enabled and post.guard is None
        for m in marks:
            assert m.mark != self.mark, "SetMark repeated"
            self.mark = m.mark
        if looking:
            assert self.mark is None
        # eligibility
        for n in notes:
            assert is_eligible(post, n.eligibility)
        for _, n in self.notes:
            cid = n.eligibility.cue_id
            ok = is_eligible(post, n.eligibility)
            if invalidating:
                assert not ok, f"cue {cid} still eligible after {ev!r}"
            if cid in self.dead:
                assert not ok, f"cue {cid} revived by {ev!r}"
            if not ok:
                self.dead.add(cid)
        assert len({n.cue_id for n in notes}) == len(notes)
        self.notes.extend((self.n, n) for n in notes)
        # once per run / per wait / one exit
        for n in notes:
            if n.kind == "finished":
                same = [m for _, m in self.notes if m.kind == "finished"]
                assert sum(m.eligibility.run == n.eligibility.run for m in same) == 1
            elif n.kind == "exited":
                assert sum(m.kind == "exited" for _, m in self.notes) == 1
            elif n.kind == "needs-input":
                assert self.wait_opened, "second needs-input notification for the same wait"
                self.wait_opened = False
            elif n.kind == "background":
                assert isinstance(ev, SubagentComplete)
                first = self.first_valid_start.get((ev.parent, ev.run_id))
                assert first is not None and first > self.last_gap, "background cue across a gap"
                assert post.run is None or post.run.generation != post.generation
        # capacity
        assert len(post.ask_history) <= self.cfg.capacity
        assert len(post.bg) <= self.cfg.capacity
        self.diagnostics += sum(type(e).__name__ == "Diagnostic" for e in fx)
        assert self.diagnostics <= 2
        # keep-awake alternates; only when configured
        for e in fx:
            if isinstance(e, KeepAwake):
                assert self.cfg.keep_awake and e.hold != self.awake
                self.awake = e.hold
        if self.exited or not self.enabled:
            assert not self.awake
        # wake-ups only while a wait is pending and presence is unknown
        for e in fx:
            if isinstance(e, Wake) and e.at is not None:
                assert post.waits and not post.focus_seen and e.at > self.t


# --- stateful machine -----------------------------------------------------------------------


class EngineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.c = Checker()

    @rule(ev=any_event_or_exit, dt=dts)
    def event(self, ev: object, dt: float) -> None:
        self.c.feed(ev, dt)

    @rule(ev=st.one_of(bridge_events, ask_events), dt=dts)
    def bridge_event(self, ev: object, dt: float) -> None:
        self.c.feed(ev, dt)

    @rule(ev=good_bg_events, dt=dts)
    def background(self, ev: object, dt: float) -> None:
        self.c.feed(ev, dt)

    @rule(ev=presence_events, dt=dts)
    def presence(self, ev: object, dt: float) -> None:
        self.c.feed(ev, dt)

    @invariant()
    def sizes(self) -> None:
        assert len(self.c.s.ask_history) <= CAP and len(self.c.s.bg) <= CAP


EngineMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)
TestEngineMachine = EngineMachine.TestCase


# --- random interleavings of presence into realistic sessions -------------------------------

SESSION = "/s/1.jsonl"


def _bg(run: str) -> SubagentStarted:
    return SubagentStarted(run, SESSION, "own-1", 3, SESSION, "own-1")


def _bg_done(run: str, ok: bool = True) -> SubagentComplete:
    return SubagentComplete(run, SESSION, "own-1", ok, False, SESSION, "own-1")


SCRIPT: list[object] = [
    BridgeHello(1, "1.4.0", "tui", True, "sid-1", SESSION, 7),
    SessionStart("startup", "sid-1", SESSION),
    UserInput("interactive"),
    AgentStart(),
    ToolStart("q1", "ask_user_question"),
    AskBlocked(True, "q1"),
    AskBlocked(False, "q1"),
    ToolEnd("q1", "ask_user_question", False),
    ToolStart("q2", "ask_user_question"),
    AskBlocked(True),
    ToolEnd("q2", "ask_user_question", False),
    _bg("r1"),
    _bg("r2"),
    UiPromptStart("confirm"),
    UiPromptEnd("confirm"),
    AgentEnd("error"),
    AgentStart(),
    AgentEnd("stop"),
    AgentBeforeSettle("completed"),
    AgentSettled(False),
    _bg_done("r1", False),
    UserInput("interactive"),
    AgentStart(),
    AgentEnd("aborted"),
    AgentSettled(True),
    SessionShutdown("reload"),
    BridgeGone(),
    BridgeHello(1, "1.4.0", "tui", True, "sid-1", SESSION, 7),
    SessionStart("reload", "sid-1", SESSION),
    _bg_done("r2"),
    UserInput("interactive"),
    AgentStart(),
    ToolStart("q3", "ask_user_question"),
    AskBlocked(True, "q3"),
    CueToggle(False),
    CueToggle(True),
    ChildExit(None, 9),
]

interleaving = st.lists(
    st.tuples(
        st.integers(0, len(SCRIPT)),
        st.sampled_from([Presence("focused"), Presence("away"), Keystroke(), Tick()]),
        dts,
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extra=interleaving, keep_awake=st.booleans())
def test_random_presence_interleavings_keep_the_invariants(extra, keep_awake) -> None:
    c = Checker(keep_awake=keep_awake)
    inserts: dict[int, list[tuple[object, float]]] = {}
    for pos, ev, dt in extra:
        inserts.setdefault(pos, []).append((ev, dt))
    for i in range(len(SCRIPT) + 1):
        for ev, dt in inserts.get(i, []):
            c.feed(ev, dt)
        if i < len(SCRIPT):
            c.feed(SCRIPT[i], 1.0)


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(st.tuples(any_event, dts), max_size=80), end=st.one_of(st.none(), exit_events)
)
def test_random_fact_sequences_keep_the_invariants(events, end) -> None:
    c = Checker()
    for ev, dt in events:
        c.feed(ev, dt)
    if end is not None:
        c.feed(end)


def test_script_while_away_gives_the_expected_cues() -> None:
    c = Checker()
    c.feed(Presence("away"))
    for ev in SCRIPT:
        c.feed(ev, 1.0)
    kinds = [(n.kind, n.outcome) for _, n in c.notes]
    assert kinds == [
        ("needs-input", None),  # q1
        ("needs-input", None),  # q2 (id-less, one call in flight)
        ("needs-input", None),  # the native dialog
        ("finished", "completed"),  # retries are one run; r1, r2 still running
        ("background", "failed"),  # r1 while Pi idle
        ("finished", "cancelled"),  # Escape
        # r2 completes after the reload gap: no cue
        ("needs-input", None),  # q3
        ("exited", None),
    ]
    fin = next(n for _, n in c.notes if n.kind == "finished")
    assert fin.body == "Finished; 2 background tasks still running"
