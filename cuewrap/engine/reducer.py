"""The pure cue engine: ``step(state, event, now) -> (state, effects)`` (docs/design.md#cue-rules).

No clock, no I/O. Each fact goes to one handler (``_HANDLERS``, a table by fact type); the
handler updates the state and decides cues; ``_reconcile`` then derives what the shell must be
told (mark, keep-awake, wake-up time) from the new state and emits only the changes.

The rules live by concern: ``presence`` (focus, keys, idle), ``waits`` (needs-input: native
prompts, OSC blocked, Ask), ``runs`` (runs, outcomes, /cue, exit), ``sessions`` (lifecycle,
gaps), ``background`` (pi-subagents); ``_step`` holds the step in progress and the shared cue
bookkeeping.

Every fact, presence change, decision and non-decision produces a ``Record``: the decision log
answers "why did (or didn't) I get a cue?".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cuewrap.engine import (
    attention,
    background,
    followup,
    generic,
    guard,
    presence,
    runs,
    sessions,
    waits,
)
from cuewrap.engine._step import Step
from cuewrap.engine.effects import (
    MARK_WAITING,
    Effect,
    Eligibility,
    KeepAwake,
    Notify,
    SetMark,
    Wake,
)
from cuewrap.engine.runs import MARKS, OSC_STATES
from cuewrap.engine.state import EngineState, Tick
from cuewrap.engine.waits import ASK_TOOL
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    AskBlocked,
    BridgeGone,
    BridgeHello,
    ChildBell,
    ChildExit,
    ChildNotice,
    ChildProgress,
    CueToggle,
    Fact,
    GuardDecided,
    JobState,
    Keystroke,
    Mute,
    OutputActive,
    OutputQuiet,
    Presence,
    ProgramStatus,
    Quiet,
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

__all__ = ["ASK_TOOL", "MARKS", "OSC_STATES", "Event", "is_eligible", "step"]

Event = Fact | Tick


def _fact_fields(fact: Fact) -> dict[str, object]:
    """The decision-log fields of a fact (facts hold only scalars: a shallow copy suffices).

    A fact's own ``kind`` (prompt kind, OSC 7501 kind) becomes ``fact_kind``: in a log line,
    ``kind`` is the record kind.
    """
    out: dict[str, object] = {"type": type(fact).__name__, **vars(fact)}
    if isinstance(fact, ChildNotice):  # the child's own text: its length only
        out["title"] = len(fact.title)
        out["body"] = len(fact.body)
    if "summary" in out:  # Pi's text (privacy.body = "summary"): its length only, when there
        said = out.pop("summary")
        if said is not None:
            out["summary_chars"] = len(str(said))
    if "dialog" in out:  # a dialog's title (kept for the answer check): its length only
        title = out.pop("dialog")
        if title is not None:
            out["dialog_chars"] = len(str(title))
    if "kind" in out:
        out["fact_kind"] = out.pop("kind")
    return out


# --- public API ----------------------------------------------------------------------------


def step(state: EngineState, event: Event, now: float) -> tuple[EngineState, list[Effect]]:
    """Apply one fact (or a tick) at monotonic time ``now``; return the new state and effects."""
    st = Step(state, now)
    if isinstance(event, GuardDecided):  # records itself; no cue follows from it
        guard.on_guard_decided(st, event)
        return st.s, st.fx
    if state.last_activity is None:
        st.set(last_activity=now)  # the session starts with the user present
    if not isinstance(event, Tick):
        st.rec("fact", **_fact_fields(event))
        if state.exited:
            return st.s, st.fx
        if not state.started and not isinstance(event, _NOT_THE_PROGRAM):
            st.set(started=True)
    if not isinstance(event, Presence | Keystroke):
        presence.advance_idle(st)
    handler = _HANDLERS.get(type(event))
    if handler is not None:
        handler(st, event)
    _withdraw_stale(st)
    attention.hold(st)
    followup.follow_up(st)
    _reconcile(st)
    if not st.s.outcome_seen and st.s.looking:
        st.set(outcome_seen=True)  # the overview's finished/failed/cancelled becomes idle
    return st.s, st.fx


def is_eligible(state: EngineState, eligibility: Eligibility) -> bool:
    """Rule 8: may the cue still be delivered? The shell asks right before each async call."""
    return (
        eligibility.generation == state.generation
        and eligibility.epoch == state.epoch
        and eligibility.cue_id in state.live_cues
    )


# --- dispatch: one handler per fact type ---------------------------------------------------

# facts that say nothing about the program itself: it is still "starting" after them
_NOT_THE_PROGRAM = (Presence, Keystroke, CueToggle, JobState, Quiet, Mute)


def _on_job(st: Step, f: JobState) -> None:
    st.set(stopped=f.stopped)


_HANDLERS: dict[type, Callable[[Step, Any], None]] = {
    Presence: presence.on_presence,
    Keystroke: runs.on_keystroke,
    BridgeHello: sessions.on_bridge_hello,
    SessionStart: sessions.on_session_start,
    SessionShutdown: sessions.on_session_shutdown,
    BridgeGone: sessions.on_bridge_gone,
    UserInput: runs.on_user_input,
    AgentStart: runs.on_agent_start,
    AgentEnd: runs.on_agent_end,
    AgentBeforeSettle: runs.on_agent_before_settle,
    AgentSettled: runs.on_agent_settled,
    ToolStart: waits.on_tool_start,
    ToolEnd: waits.on_tool_end,
    UiPromptStart: waits.on_ui_prompt_start,
    UiPromptEnd: waits.on_ui_prompt_end,
    AskBlocked: waits.on_ask_blocked,
    SubagentStarted: background.on_subagent_started,
    SubagentComplete: background.on_subagent_complete,
    SubagentForegroundComplete: background.on_subagent_foreground,
    CueToggle: runs.on_cue_toggle,
    ProgramStatus: runs.on_program_status,
    ScreenActivity: runs.on_screen,
    ChildExit: runs.on_child_exit,
    ChildBell: generic.on_child_bell,
    ChildNotice: generic.on_child_notice,
    OutputActive: generic.on_output_active,
    OutputQuiet: generic.on_output_quiet,
    ChildProgress: followup.on_child_progress,
    JobState: _on_job,
    Quiet: attention.on_quiet,
    Mute: attention.on_mute,
}


# --- derived outputs -----------------------------------------------------------------------


def _withdraw_stale(st: Step) -> None:
    """A cue decided and invalidated within one step (idle crossing, then a gap) is not sent."""
    s = st.s
    stale = [e for e in st.fx if isinstance(e, Notify) and not is_eligible(s, e.eligibility)]
    if not stale:
        return
    st.fx = [e for e in st.fx if not (isinstance(e, Notify) and e in stale)]
    for e in stale:
        st.rec("no_cue", cue=e.kind, cue_id=e.cue_id, reason="invalidated in the same step")


def _reconcile(st: Step) -> None:
    """Tell the shell what changed: the mark, keep-awake, the next wake-up time."""
    s = st.s
    mark: str | None = None
    if s.cues_active and not s.looking:
        mark = MARK_WAITING if s.waits else s.cue_mark
    if mark != s.mark_shown:
        st.fx.append(SetMark(mark))
        if s.config.title_marks:  # the log records a mark only where one is written
            st.rec("mark", mark=mark)
        st.set(mark_shown=mark)
    hold = s.config.keep_awake and s.cues_active and (s.run is not None or s.bg_active > 0)
    if hold != s.awake_held:
        st.fx.append(KeepAwake(hold))
        st.rec("keep_awake", hold=hold)
        st.set(awake_held=hold)
    wake: float | None = None
    # idle time turns the user away: a step is due then while a wait is pending, and always
    # for a program told the user's presence (its words read: engine/words.py)
    if (s.waits or s.config.words) and s.cues_active and not s.focus_seen and not s.idle_away:
        assert s.last_activity is not None
        wake = s.last_activity + s.config.idle_after
    due = followup.next_due(s)
    urgent = attention.next_due(s)
    if urgent is not None:
        due = urgent if due is None else min(due, urgent)
    if due is not None:
        wake = due if wake is None else min(wake, due)
    if wake != s.wake_at:
        st.fx.append(Wake(wake))
        st.set(wake_at=wake)
