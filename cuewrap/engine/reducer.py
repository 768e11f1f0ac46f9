"""The pure cue engine: ``step(state, event, now) -> (state, effects)`` (SPEC section 5).

No clock, no I/O. Each fact goes to one handler (``_HANDLERS``, a table by fact type); the
handler updates the state and decides cues; ``_reconcile`` then derives what the shell must be
told (mark, keep-awake, wake-up time) from the new state and emits only the changes.

Every fact, presence change, decision and non-decision produces a ``Record``: the decision log
answers "why did (or didn't) I get a cue?".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from cuewrap.engine import wording
from cuewrap.engine.effects import (
    MARK_CANCELLED,
    MARK_COMPLETED,
    MARK_FAILED,
    MARK_WAITING,
    CueKind,
    Diagnostic,
    Effect,
    Eligibility,
    KeepAwake,
    Notify,
    Outcome,
    Record,
    SetMark,
    Wake,
)
from cuewrap.engine.state import BgRecord, EngineState, Run, RunSource, Tick
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

Event = Fact | Tick

ASK_TOOL = "ask_user_question"
OSC_STATES = frozenset({"working", "done", "error", "idle", "blocked", "clear"})

MARKS: dict[str, str] = {
    "completed": MARK_COMPLETED,
    "failed": MARK_FAILED,
    "uncertain": MARK_FAILED,
    "cancelled": MARK_CANCELLED,
}
_BEFORE_SETTLE: dict[str, Outcome] = {
    "completed": "completed",
    "error": "failed",
    "aborted": "cancelled",
}
_STOP_REASON: dict[str, Outcome] = {"stop": "completed", "error": "failed", "aborted": "cancelled"}
_OSC_SETTLE: dict[str, Outcome] = {"done": "completed", "error": "failed", "idle": "cancelled"}


_FIELD_NAMES = frozenset(f.name for f in fields(EngineState))


def _evolve(s: EngineState, changes: dict[str, Any]) -> EngineState:
    """``dataclasses.replace`` without re-running ``__init__`` (10-20x cheaper at 40 fields).

    The result is an ordinary frozen ``EngineState``; only this module builds one this way.
    """
    assert changes.keys() <= _FIELD_NAMES, changes.keys() - _FIELD_NAMES
    new = object.__new__(EngineState)
    d = new.__dict__
    d.update(s.__dict__)
    d.update(changes)
    return new


def _fact_fields(fact: Fact) -> dict[str, object]:
    """The decision-log fields of a fact (facts hold only scalars: a shallow copy suffices).

    A fact's own ``kind`` (prompt kind, OSC 7501 kind) becomes ``fact_kind``: in a log line,
    ``kind`` is the record kind.
    """
    out: dict[str, object] = {"type": type(fact).__name__, **vars(fact)}
    if "kind" in out:
        out["fact_kind"] = out.pop("kind")
    return out


class _Step:
    """One step in progress: the state so far and the effects so far (local, never shared)."""

    __slots__ = ("fx", "now", "s")

    def __init__(self, state: EngineState, now: float) -> None:
        self.s = state
        self.now = now
        self.fx: list[Effect] = []

    def set(self, **changes: Any) -> None:
        self.s = _evolve(self.s, changes)

    def rec(self, kind: str, **fields: object) -> None:
        self.fx.append(Record(kind, fields))


# --- public API ----------------------------------------------------------------------------


def step(state: EngineState, event: Event, now: float) -> tuple[EngineState, list[Effect]]:
    """Apply one fact (or a tick) at monotonic time ``now``; return the new state and effects."""
    st = _Step(state, now)
    if state.last_activity is None:
        st.set(last_activity=now)  # the session starts with the user present
    if not isinstance(event, Tick):
        st.rec("fact", **_fact_fields(event))
        if state.exited:
            return st.s, st.fx
    if not isinstance(event, Presence | Keystroke):
        _advance_idle(st)
    handler = _HANDLERS.get(type(event))
    if handler is not None:
        handler(st, event)
    _withdraw_stale(st)
    _reconcile(st)
    return st.s, st.fx


def is_eligible(state: EngineState, eligibility: Eligibility) -> bool:
    """Rule 8: may the cue still be delivered? The shell asks right before each async call."""
    return (
        eligibility.generation == state.generation
        and eligibility.epoch == state.epoch
        and eligibility.cue_id in state.live_cues
    )


# --- presence (SPEC 4) ---------------------------------------------------------------------


def _advance_idle(st: _Step) -> None:
    s = st.s
    if s.focus_seen or s.idle_away or s.last_activity is None:
        return
    if st.now >= s.last_activity + s.config.idle_after:
        st.set(idle_away=True)
        st.rec("presence", presence="away", via="idle", idle_after=s.config.idle_after)
        _on_leave(st)


def _presence(st: _Step, f: Presence) -> None:
    s = st.s
    before = s.looking
    if f.state in ("focused", "away"):
        st.set(focus_seen=True, focus_state=f.state, trusted=s.trusted | {"focus"})
    else:  # the focus source says it no longer knows: back to keystrokes and idle time
        st.set(focus_seen=False, idle_away=False, last_activity=st.now)
    st.set(seen=st.s.seen | {"focus"})
    if st.s.looking != before or f.state == "unknown":
        st.rec("presence", presence=f.state, via="focus")
    _presence_changed(st, before)


def _keystroke(st: _Step, f: Keystroke) -> None:
    s = st.s
    if s.focus_seen:
        return  # focus reports rule: keys say nothing more
    before = s.looking
    st.set(last_activity=st.now, idle_away=False)
    if not before:
        st.rec("presence", presence="present", via="keys")
    _presence_changed(st, before)


def _presence_changed(st: _Step, before: bool) -> None:
    after = st.s.looking
    if before and not after:
        _on_leave(st)
    elif after and not before:
        _invalidate(st, "user returned")  # rule 3 (marks) and rule 7


def _on_leave(st: _Step) -> None:
    s = st.s
    if not s.waits:
        return
    block = _block_reason(s)
    if block is not None:
        st.rec("no_cue", cue="needs-input", reason=block)
    elif s.uncovered:
        _notify_wait(st)  # rule 2: left while a wait is pending
    else:
        st.rec("no_cue", cue="needs-input", reason="already notified for this wait (rule 4)")


# --- cue bookkeeping -----------------------------------------------------------------------


def _block_reason(s: EngineState) -> str | None:
    """Why no new cue may be given now (None: one may)."""
    if s.exited:
        return "child exited"
    if not s.enabled:
        return "cues are off"
    if s.guard is not None:
        return s.guard
    if s.looking:
        return "focused" if s.focus_seen else "present (recent keystroke)"
    return None


def _invalidate(st: _Step, reason: str) -> None:
    """Rule 7: pending cues can no longer fire; the finished/background mark goes."""
    s = st.s
    st.set(epoch=s.epoch + 1, live_cues=frozenset(), cue_mark=None, wait_cue=None)
    st.rec("invalidated", reason=reason, epoch=s.epoch + 1)


def _label(s: EngineState) -> str:
    return s.session_name or s.config.label


def _new_cue(
    st: _Step, kind: CueKind, outcome: Outcome | None, body: str, run: int | None, **why: object
) -> Notify:
    s = st.s
    cue_id = s.cue_seq + 1
    elig = Eligibility(generation=s.generation, run=run, cue_id=cue_id, epoch=s.epoch)
    note = Notify(cue_id, kind, outcome, wording.title(_label(s)), body, elig)
    st.set(cue_seq=cue_id, live_cues=s.live_cues | {cue_id})
    st.rec("cue", cue_id=cue_id, cue=kind, outcome=outcome, body=body, run=run, **why)
    st.fx.append(note)
    return note


def _reject(st: _Step, integration: str, reason: str, **fields: object) -> None:
    s = st.s
    counts = list(s.rejections)
    for i, (name, why, n) in enumerate(counts):
        if name == integration and why == reason:
            counts[i] = (name, why, n + 1)
            break
    else:
        counts.append((integration, reason, 1))
    st.set(rejections=tuple(counts))
    st.rec("rejected", integration=integration, reason=reason, **fields)


def _observe(st: _Step, integration: str, trusted: bool = False) -> None:
    s = st.s
    if integration not in s.seen or (trusted and integration not in s.trusted):
        st.set(
            seen=s.seen | {integration},
            trusted=s.trusted | {integration} if trusted else s.trusted,
        )


def _capacity(st: _Step, integration: str, what: str) -> None:
    s = st.s
    cap = s.config.capacity
    _reject(st, integration, f"capacity reached ({cap} {what})")
    if integration not in s.cap_warned:
        st.set(cap_warned=s.cap_warned | {integration})
        st.fx.append(
            Diagnostic(
                f"cuewrap: {cap} {what} tracked; new ones are not tracked until cuewrap restarts"
            )
        )


# --- waits (needs-input) -------------------------------------------------------------------


def _add_wait(st: _Step, key: str) -> None:
    s = st.s
    if key in s.wait_keys:
        st.rec("wait", key=key, state="already pending")
        return
    wid = s.wait_seq + 1
    merged = bool(s.waits)
    st.set(waits=(*s.waits, (key, wid)), wait_seq=wid)
    st.rec("wait", key=key, wait=wid, state="pending")
    block = _block_reason(s)
    if block is None:
        if merged and not s.uncovered:
            st.rec("no_cue", cue="needs-input", wait=wid, reason="merged with a pending wait")
        else:
            st.set(uncovered=st.s.uncovered | {wid})
            _notify_wait(st)
    else:
        if s.cues_active:  # only because the user is looking: notify if they leave
            st.set(uncovered=s.uncovered | {wid})
        st.rec("no_cue", cue="needs-input", wait=wid, reason=block)


def _notify_wait(st: _Step) -> None:
    s = st.s
    run = s.run.id if s.run is not None else None
    note = _new_cue(st, "needs-input", None, wording.needs_input(), run, waits=sorted(s.uncovered))
    st.set(uncovered=frozenset(), wait_cue=note.cue_id)


def _end_wait(st: _Step, key: str, reason: str) -> None:
    s = st.s
    ended = [w for k, w in s.waits if k == key]
    if not ended:
        return
    waits = tuple((k, w) for k, w in s.waits if k != key)
    changes: dict[str, Any] = {"waits": waits, "uncovered": s.uncovered - set(ended)}
    if not waits and s.wait_cue is not None:
        changes.update(live_cues=s.live_cues - {s.wait_cue}, wait_cue=None)
    st.set(**changes)
    st.rec("wait", key=key, wait=ended[0], state="ended", reason=reason)


def _drop_waits(st: _Step, reason: str) -> None:
    for key in st.s.wait_keys:
        _end_wait(st, key, reason)


# --- runs ----------------------------------------------------------------------------------


def _has_run(s: EngineState) -> bool:
    return s.run is not None and s.run.generation == s.generation


def _start_run(st: _Step, source: RunSource) -> None:
    s = st.s
    if s.run is not None:
        st.rec("run", run=s.run.id, state="dropped", reason="started before a gap")
    _invalidate(st, "new run")
    rid = st.s.run_seq + 1
    st.set(run=Run(rid, source, st.s.generation), run_seq=rid, last_run=rid)
    st.rec("run", run=rid, state="started", source=source)


def _settle(st: _Step, outcome: Outcome, why: str, seems: bool = False) -> None:
    s = st.s
    run = s.run
    if run is None:
        st.rec("no_cue", cue="finished", reason="no run observed")
        return
    _drop_waits(st, "run settled")
    st.set(run=None, ask_calls=())
    st.rec("run", run=run.id, state="settled", outcome=outcome, why=why, attempts=run.attempts)
    s = st.s
    block = _block_reason(s)
    if run.generation != s.generation:
        block = "run started before a gap"
    if block is not None:
        st.rec("no_cue", cue="finished", run=run.id, reason=block)
        return
    body = wording.finished(outcome, seems=seems, background_running=s.bg_active)
    _new_cue(st, "finished", outcome, body, run.id, why=why, background_running=s.bg_active)
    st.set(cue_mark=MARKS[outcome])


# --- bridge: session lifecycle (rule 10) ---------------------------------------------------


def _gap(st: _Step, reason: str) -> None:
    s = st.s
    _drop_waits(st, "gap")
    st.set(
        generation=s.generation + 1,
        in_gap=True,
        ask_calls=(),
        bg_active=0,
        live_cues=frozenset(),
        cue_mark=None,
        wait_cue=None,
        uncovered=frozenset(),
    )
    st.rec("gap", reason=reason, generation=s.generation + 1, background_now_gap=s.bg_active)


def _close_gap(st: _Step) -> None:
    s = st.s
    st.set(in_gap=False)
    if s.run is not None and s.run.generation != s.generation:
        st.set(run=None)
        st.rec("run", run=s.run.id, state="dropped", reason="started before a gap")


def _new_runtime(st: _Step, session_id: str, session_file: str | None, why: str) -> None:
    s = st.s
    if s.in_gap:
        _close_gap(st)
    elif s.session_id is not None and session_id != s.session_id:
        _gap(st, f"{why}: new session without shutdown")
        _close_gap(st)
    elif s.session_id is not None:
        st.rec("session", state="duplicate or same runtime (harmless)")
    st.set(session_id=session_id, parent=session_file or session_id)


def _bridge_hello(st: _Step, f: BridgeHello) -> None:
    _observe(st, "bridge", trusted=True)
    _new_runtime(st, f.session_id, f.session_file, "hello")
    st.set(bridge_live=True, session_name=f.session_name)
    s = st.s
    if f.mode != "tui":
        if s.guard is None:
            st.set(guard=f"Pi mode is {f.mode!r}, not 'tui' (cues off for this runtime)")
            _invalidate(st, "guard")
            st.set(uncovered=frozenset())
            st.rec("guard", enabled=False, mode=f.mode)
    elif s.guard is not None:
        st.set(guard=None)
        st.rec("guard", enabled=True, mode=f.mode)


def _session_start(st: _Step, f: SessionStart) -> None:
    _new_runtime(st, f.session_id, f.session_file, f"session_start {f.reason}")


def _session_shutdown(st: _Step, f: SessionShutdown) -> None:
    if not st.s.in_gap:
        _gap(st, f"session_shutdown {f.reason}")


def _bridge_gone(st: _Step, f: BridgeGone) -> None:
    st.set(bridge_live=False)
    if not st.s.in_gap:
        _gap(st, "bridge gone")


# --- bridge: runs and native prompts -------------------------------------------------------


def _user_input(st: _Step, f: UserInput) -> None:
    _invalidate(st, "new task")


def _agent_start(st: _Step, f: AgentStart) -> None:
    s = st.s
    if _has_run(s):
        assert s.run is not None
        st.set(run=replace(s.run, attempts=s.run.attempts + 1))
        st.rec("run", run=s.run.id, state="retry", attempt=s.run.attempts + 1)
    else:
        _start_run(st, "bridge")


def _agent_end(st: _Step, f: AgentEnd) -> None:
    s = st.s
    if s.run is not None:
        st.set(run=replace(s.run, stop_reason=f.stop_reason))


def _agent_before_settle(st: _Step, f: AgentBeforeSettle) -> None:
    s = st.s
    if s.run is not None:
        st.set(run=replace(s.run, before_settle=f.outcome))


def _agent_settled(st: _Step, f: AgentSettled) -> None:
    run = st.s.run
    if run is None:
        st.rec("no_cue", cue="finished", reason="no run observed")
    elif run.before_settle in _BEFORE_SETTLE:
        _settle(st, _BEFORE_SETTLE[run.before_settle], "agent_before_settle.outcome")
    elif f.aborted:
        _settle(st, "cancelled", "agent_settled.aborted")
    elif run.stop_reason in _STOP_REASON:
        _settle(st, _STOP_REASON[run.stop_reason], "agent_end.stopReason")
    else:
        _settle(st, "uncertain", "no outcome fact")


def _ui_prompt_start(st: _Step, f: UiPromptStart) -> None:
    if not _has_run(st.s):
        _reject(st, "bridge", "ui_prompt_start outside a run")
        return
    _add_wait(st, "ui")


def _ui_prompt_end(st: _Step, f: UiPromptEnd) -> None:
    _end_wait(st, "ui", "ui_prompt_end")


# --- Ask (rpiv-ask-user-question) ----------------------------------------------------------


def _tool_start(st: _Step, f: ToolStart) -> None:
    if f.tool_name != ASK_TOOL:
        return
    s = st.s
    if f.tool_call_id in s.ask_history:
        _reject(st, "ask", "tool call id seen before (repeat or reused across sessions)")
        return
    if len(s.ask_history) >= s.config.capacity:
        _capacity(st, "ask", "Ask call ids")
        return
    st.set(
        ask_history=s.ask_history.set(f.tool_call_id, s.generation),
        ask_calls=(*s.ask_calls, (f.tool_call_id, "fresh")),
    )
    st.rec("ask", call=f.tool_call_id, state="in flight")


def _set_call(st: _Step, call: str, state: str | None) -> None:
    calls = tuple((c, x) for c, x in st.s.ask_calls if c != call)
    st.set(ask_calls=(*calls, (call, state)) if state is not None else calls)


def _tool_end(st: _Step, f: ToolEnd) -> None:
    if f.tool_call_id in dict(st.s.ask_calls):
        _set_call(st, f.tool_call_id, None)
        _end_wait(st, f"ask:{f.tool_call_id}", "tool_execution_end")


def _ask_target(st: _Step, f: AskBlocked) -> str | None:
    calls = dict(st.s.ask_calls)
    if f.tool_call_id is not None:
        if f.tool_call_id in calls:
            return f.tool_call_id
        _reject(st, "ask", "toolCallId not an ask_user_question call in flight in this session")
        return None
    if not f.active:
        waiting = [c for c, x in calls.items() if x == "waiting"]
        if len(waiting) == 1:
            return waiting[0]
    if len(calls) == 1:
        return next(iter(calls))
    _reject(st, "ask", f"no toolCallId and {len(calls)} ask_user_question calls in flight")
    return None


def _ask_blocked(st: _Step, f: AskBlocked) -> None:
    _observe(st, "ask")
    call = _ask_target(st, f)
    if call is None:
        return
    _observe(st, "ask", trusted=True)
    state = dict(st.s.ask_calls)[call]
    if f.active:
        if state == "fresh":
            _set_call(st, call, "waiting")
            _add_wait(st, f"ask:{call}")
        elif state == "done":
            _reject(st, "ask", "active:true after the wait ended (replay does not reopen)")
    else:
        if state == "waiting":
            _end_wait(st, f"ask:{call}", "active:false")
        _set_call(st, call, "done")


# --- background (pi-subagents) -------------------------------------------------------------


def _start_invalid(f: SubagentStarted) -> str | None:
    if not (f.run_id and f.session_id and f.completion_owner_id):
        return "missing id, sessionId or completionOwnerId"
    if f.artifact_version != 3:
        return "lifecycleArtifactVersion is not 3"
    if not f.parent or f.session_id != f.parent:
        return "sessionId is not the current parent session"
    if not f.owner_now or f.completion_owner_id != f.owner_now:
        return "completionOwnerId is not this process's completion owner"
    return None


def _subagent_started(st: _Step, f: SubagentStarted) -> None:
    _observe(st, "pi-subagents")
    reason = _start_invalid(f)
    if reason is not None:
        _reject(st, "pi-subagents", reason)
        return
    s = st.s
    key = (f.session_id, f.run_id)
    if key in s.bg:
        _reject(st, "pi-subagents", "start already observed for this parent and run id")
        return
    if len(s.bg) >= s.config.capacity:
        _capacity(st, "pi-subagents", "background records")
        return
    _observe(st, "pi-subagents", trusted=True)
    st.set(
        bg=s.bg.set(key, BgRecord(f.completion_owner_id, True, s.generation)),
        bg_active=s.bg_active + 1,
    )
    st.rec("background", run_id=f.run_id, state="started", active=s.bg_active + 1)


def _bg_finish(st: _Step, key: tuple[str, str], rec: BgRecord) -> None:
    s = st.s
    current = rec.generation == s.generation
    st.set(
        bg=s.bg.set(key, replace(rec, active=False)),
        bg_active=s.bg_active - 1 if current else s.bg_active,
    )


def _subagent_complete(st: _Step, f: SubagentComplete) -> None:
    _observe(st, "pi-subagents")
    s = st.s
    key = (f.parent or "", f.run_id)
    rec = s.bg.get(key)
    if rec is None:
        _reject(st, "pi-subagents", "completion without an observed start")
        return
    if f.session_id != f.parent:
        _reject(st, "pi-subagents", "completion for another parent session")
        return
    if f.completion_owner_id != rec.owner or f.owner_now != rec.owner:
        _reject(st, "pi-subagents", "completion owner does not match")
        return
    if not rec.active:
        _reject(st, "pi-subagents", "duplicate completion")
        return
    _bg_finish(st, key, rec)
    st.rec("background", run_id=f.run_id, state="finished", active=st.s.bg_active)
    s = st.s
    if not isinstance(f.success, bool):
        _reject(st, "pi-subagents", "success is not a boolean (state removed, no cue)")
        return
    if rec.generation != s.generation:
        block: str | None = "started before a gap"
    elif f.awaited_by_workflow:
        block = "awaited by a workflow (no cue of its own)"
    elif _has_run(s):
        block = "Pi is busy (the run's own cue covers it)"
    else:
        block = _block_reason(s)
    if block is not None:
        st.rec("no_cue", cue="background", run_id=f.run_id, reason=block)
        return
    body = wording.background(f.success, background_running=s.bg_active)
    _new_cue(st, "background", "completed" if f.success else "failed", body, None)
    st.set(cue_mark=MARK_COMPLETED if f.success else MARK_FAILED)


def _subagent_foreground(st: _Step, f: SubagentForegroundComplete) -> None:
    s = st.s
    key = (s.parent or "", f.run_id)
    rec = s.bg.get(key)
    if rec is not None and rec.active:
        _bg_finish(st, key, rec)
        st.rec("background", run_id=f.run_id, state="removed (foreground)")


# --- /cue, OSC 7501, screen, exit ----------------------------------------------------------


def _cue_toggle(st: _Step, f: CueToggle) -> None:
    if f.enabled == st.s.enabled:
        return
    if not f.enabled:
        _invalidate(st, "/cue off")
    # turning on never replays: waits pending now count as already notified
    st.set(enabled=f.enabled, uncovered=frozenset())
    st.rec("toggle", enabled=f.enabled)


def _program_status(st: _Step, f: ProgramStatus) -> None:
    _observe(st, "osc7501")
    if f.state == "clear" and f.app is None and "osc7501" in st.s.trusted:
        st.rec("status_cleared", source="osc7501")  # Pi's exit report carries no app field
        return
    if f.app != "pi" or f.state not in OSC_STATES:
        _reject(st, "osc7501", "not a Pi program status", app=f.app, state=f.state)
        return
    _observe(st, "osc7501", trusted=True)
    s = st.s
    if s.bridge_live:
        st.rec("no_cue", source="osc7501", reason="bridge is live (cross-check only)")
        return
    if f.state != "blocked":
        _end_wait(st, "osc", f"status {f.state}")
    if f.state == "working":
        if not _has_run(s):
            _start_run(st, "osc7501")
    elif f.state in _OSC_SETTLE:
        if s.run is not None:
            _settle(st, _OSC_SETTLE[f.state], f"osc7501 {f.state}")
    elif f.state == "blocked":
        _add_wait(st, "osc")


def _screen(st: _Step, f: ScreenActivity) -> None:
    s = st.s
    if s.bridge_live or "osc7501" in s.trusted:
        st.rec("no_cue", source="screen", reason="a stronger source is live (cross-check only)")
        return
    if f.working:
        if not _has_run(s):
            _start_run(st, "screen")
    elif s.run is not None and s.run.source == "screen":
        _settle(st, "uncertain", "screen no longer shows Working", seems=True)


def _child_exit(st: _Step, f: ChildExit) -> None:
    s = st.s
    pending = s.run is not None or bool(s.waits)
    block = _block_reason(s)
    _invalidate(st, "exit")
    if not pending:
        st.rec("no_cue", cue="exited", reason="no run or wait pending")
    elif block is not None:
        st.rec("no_cue", cue="exited", reason=block)
    else:
        run = s.run.id if s.run is not None else None
        body = wording.exited(f.code, f.signal)
        _new_cue(st, "exited", None, body, run, code=f.code, signal=f.signal)
    st.set(exited=True, run=None, waits=(), uncovered=frozenset(), ask_calls=(), bg_active=0)


_HANDLERS: dict[type, Callable[[_Step, Any], None]] = {
    Presence: _presence,
    Keystroke: _keystroke,
    BridgeHello: _bridge_hello,
    SessionStart: _session_start,
    SessionShutdown: _session_shutdown,
    BridgeGone: _bridge_gone,
    UserInput: _user_input,
    AgentStart: _agent_start,
    AgentEnd: _agent_end,
    AgentBeforeSettle: _agent_before_settle,
    AgentSettled: _agent_settled,
    ToolStart: _tool_start,
    ToolEnd: _tool_end,
    UiPromptStart: _ui_prompt_start,
    UiPromptEnd: _ui_prompt_end,
    AskBlocked: _ask_blocked,
    SubagentStarted: _subagent_started,
    SubagentComplete: _subagent_complete,
    SubagentForegroundComplete: _subagent_foreground,
    CueToggle: _cue_toggle,
    ProgramStatus: _program_status,
    ScreenActivity: _screen,
    ChildExit: _child_exit,
}


# --- derived outputs -----------------------------------------------------------------------


def _withdraw_stale(st: _Step) -> None:
    """A cue decided and invalidated within one step (idle crossing, then a gap) is not sent."""
    s = st.s
    stale = [e for e in st.fx if isinstance(e, Notify) and not is_eligible(s, e.eligibility)]
    if not stale:
        return
    st.fx = [e for e in st.fx if not (isinstance(e, Notify) and e in stale)]
    for e in stale:
        st.rec("no_cue", cue=e.kind, cue_id=e.cue_id, reason="invalidated in the same step")


def _reconcile(st: _Step) -> None:
    """Tell the shell what changed: the mark, keep-awake, the next wake-up time."""
    s = st.s
    mark: str | None = None
    if s.cues_active and not s.looking:
        mark = MARK_WAITING if s.waits else s.cue_mark
    if mark != s.mark_shown:
        st.fx.append(SetMark(mark))
        st.rec("mark", mark=mark)
        st.set(mark_shown=mark)
    hold = s.config.keep_awake and s.cues_active and (s.run is not None or s.bg_active > 0)
    if hold != s.awake_held:
        st.fx.append(KeepAwake(hold))
        st.rec("keep_awake", hold=hold)
        st.set(awake_held=hold)
    wake: float | None = None
    if s.waits and s.cues_active and not s.focus_seen and not s.idle_away:
        assert s.last_activity is not None
        wake = s.last_activity + s.config.idle_after
    if wake != s.wake_at:
        st.fx.append(Wake(wake))
        st.set(wake_at=wake)
