"""Runs: start, settle with an outcome, the finished cue; /cue; the child's exit
(docs/design.md#cue-rules).

A run is seen by the strongest live source: the bridge (``agent_*`` facts), else OSC 7501
program status, else the screen's "Working" line. ``settle`` decides the finished cue.
"""

from __future__ import annotations

from dataclasses import replace

from cuewrap.engine import presence, wording
from cuewrap.engine import summary as summaries
from cuewrap.engine._step import Step, block_reason, has_run, invalidate, new_cue, observe, reject
from cuewrap.engine.effects import (
    MARK_CANCELLED,
    MARK_COMPLETED,
    MARK_FAILED,
    Certainty,
    Outcome,
)
from cuewrap.engine.state import Run, RunSource
from cuewrap.engine.waits import add_wait, drop_waits, end_wait
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    ChildExit,
    CueToggle,
    Keystroke,
    ProgramStatus,
    ScreenActivity,
    UserInput,
)

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
# An outcome straight after one of these reports (no ``working`` between) still ends a run:
# Claude Code coalesces a quick change into its last state (idle, then error, for an HTTP 400
# about 1 in 20 times under load; docs/generic-mode.md). An outcome after an outcome is not one.
_OUTCOME_AFTER: dict[str, frozenset[str | None]] = {
    "done": frozenset({"idle", "blocked"}),
    "error": frozenset({"idle", "blocked"}),
}


def start_run(st: Step, source: RunSource) -> None:
    s = st.s
    if s.run is not None:
        st.rec("run", run=s.run.id, state="dropped", reason="started before a gap")
    invalidate(st, "new run")
    rid = st.s.run_seq + 1
    key = st.s.last_key
    keyed = key is not None and st.now - key <= KEY_TOLD_WITHIN
    st.set(
        run=Run(rid, source, st.s.generation, keyed=keyed, started=st.now),
        run_seq=rid,
        last_run=rid,
        outcome_seen=True,
    )
    st.rec("run", run=rid, state="started", source=source)


def settle(
    st: Step, outcome: Outcome, why: str, seems: bool = False, summary: str | None = None
) -> None:
    """End the active run with ``outcome`` and decide its finished cue. ``summary``: what says
    why when it is not the run's own (OSC 7501's error message); else ``_run_summary``."""
    s = st.s
    run = s.run
    if run is None:
        st.rec("no_cue", cue="finished", reason="no run observed")
        return
    drop_waits(st, "run settled")
    st.set(run=None, ask_calls=())
    st.set(outcome=outcome, outcome_seq=s.outcome_seq + 1, outcome_seen=False)
    st.rec("run", run=run.id, state="settled", outcome=outcome, why=why, attempts=run.attempts)
    s = st.s
    block = block_reason(s)
    if run.generation != s.generation:
        block = "run started before a gap"
    if block is not None:
        st.rec("no_cue", cue="finished", run=run.id, reason=block)
        return
    body = wording.finished(outcome, seems=seems, background_running=s.bg_active)
    certainty: Certainty = "uncertain" if seems or outcome == "uncertain" else "certain"
    new_cue(
        st,
        "finished",
        outcome,
        body,
        run.id,
        source=run.source,
        certainty=certainty,
        summary=summary if summary is not None else _run_summary(run, outcome),
        why=why,
        background_running=s.bg_active,
    )
    st.set(cue_mark=MARKS[outcome])


def _run_summary(run: Run, outcome: Outcome) -> str | None:
    """What says why a run ended: the last answer's first line when it completed, the error
    when it failed (each only when the last attempt's stop reason agrees); else nothing."""
    if outcome == "completed" and run.stop_reason not in ("error", "aborted"):
        return run.summary
    if outcome == "failed" and run.stop_reason == "error":
        return run.summary
    return None


# --- bridge: runs --------------------------------------------------------------------------


def on_user_input(st: Step, f: UserInput) -> None:
    invalidate(st, "new task")


def on_agent_start(st: Step, f: AgentStart) -> None:
    s = st.s
    if has_run(s):
        assert s.run is not None
        st.set(run=replace(s.run, attempts=s.run.attempts + 1))
        st.rec("run", run=s.run.id, state="retry", attempt=s.run.attempts + 1)
    else:
        start_run(st, "bridge")


def on_agent_end(st: Step, f: AgentEnd) -> None:
    s = st.s
    if s.run is not None:
        said = f.summary if s.config.privacy_summary else None
        st.set(run=replace(s.run, stop_reason=f.stop_reason, summary=said))
        if s.pi_caps is not None and "agent_settled" not in s.pi_caps:
            # a Pi without agent_settled (before 0.80.4): its agent_end is the end of the run
            outcome = _STOP_REASON.get(f.stop_reason or "", "uncertain")
            settle(st, outcome, "agent_end.stopReason (this Pi has no agent_settled)")


def on_agent_before_settle(st: Step, f: AgentBeforeSettle) -> None:
    s = st.s
    if s.run is not None:
        st.set(run=replace(s.run, before_settle=f.outcome))


def on_agent_settled(st: Step, f: AgentSettled) -> None:
    run = st.s.run
    if run is None:
        st.rec("no_cue", cue="finished", reason="no run observed")
    elif run.before_settle in _BEFORE_SETTLE:
        settle(st, _BEFORE_SETTLE[run.before_settle], "agent_before_settle.outcome")
    elif f.aborted:
        settle(st, "cancelled", "agent_settled.aborted")
    elif run.stop_reason in _STOP_REASON:
        settle(st, _STOP_REASON[run.stop_reason], "agent_end.stopReason")
    else:
        settle(st, "uncertain", "no outcome fact")


# --- /cue, OSC 7501, screen, exit ----------------------------------------------------------


def on_cue_toggle(st: Step, f: CueToggle) -> None:
    if f.enabled == st.s.enabled:
        return
    if not f.enabled:
        invalidate(st, "/cue off")
    # turning on never replays: waits pending now count as already notified
    st.set(enabled=f.enabled, uncovered=frozenset())
    st.rec("toggle", enabled=f.enabled)


# Keystroke facts come at most one a second, the rest told at the end of that second
# (wiring/keystrokes.py): a key typed in a run may be told only after the run's next report,
# but then one was told less than this before it, in the run or just before it started
KEY_TOLD_WITHIN = 1.0
# A run that goes idle sooner than this after its working is no one's cancel: too short for a
# person to see it working and press Esc (a script pressing Esc as soon as the third word of an
# answer shows: 0.48-0.50 s); Codex CLI 0.171.0 starting slowly reports working then idle
# 21-28 ms apart, on the first key typed into it (docs/generic-mode.md)
CANCEL_AFTER = 0.25


def on_keystroke(st: Step, f: Keystroke) -> None:
    """Presence, and the active run notes that the user typed while it ran."""
    presence.on_keystroke(st, f)
    st.set(last_key=st.now)
    run = st.s.run
    if run is not None and not run.keyed:
        st.set(run=replace(run, keyed=True))


def on_program_status(st: Step, f: ProgramStatus) -> None:
    observe(st, "osc7501")
    before: str | None = None
    if f.state == "clear" and f.app is None and "osc7501" in st.s.trusted:
        st.rec("status_cleared", source="osc7501")  # Pi's exit report carries no app field
        return
    if st.s.config.generic:  # any program may speak it; app= names it (docs/design.md#generic-mode)
        if f.app is None or f.state not in OSC_STATES:
            reject(st, "osc7501", "no app= or an unknown state", app=f.app, state=f.state)
            return
        # from now on its reports say whether it works, not its output (generic.py)
        before = st.s.status_last
        st.set(status_app=f.app, told=True, busy=False, status_last=f.state)
    elif f.app != "pi" or f.state not in OSC_STATES:
        reject(st, "osc7501", "not a Pi program status", app=f.app, state=f.state)
        return
    observe(st, "osc7501", trusted=True)
    s = st.s
    if s.bridge_live:
        st.rec("no_cue", source="osc7501", reason="bridge is live (cross-check only)")
        return
    if f.state != "blocked":
        end_wait(st, "osc", f"status {f.state}")
    if f.state == "working":
        if not has_run(s):
            start_run(st, "osc7501")
    elif f.state == "idle" and s.config.generic and s.run is not None and not _cancel(st, s.run):
        # idle after working without done, the user having typed nothing while it ran (nor
        # within KEY_TOLD_WITHIN before), or sooner than CANCEL_AFTER: no interrupt of theirs;
        # the program went idle by itself (Codex CLI's start-up: working, idle before any
        # prompt, even as the user's first keys arrive). Neither finished nor cancelled: no cue.
        drop_waits(st, "run ended")
        st.set(run=None)
        why = "idle, no keystroke while it ran" if not s.run.keyed else "idle too soon for a cancel"
        st.rec("run", run=s.run.id, state="ended", reason=why)
    elif f.state in _OSC_SETTLE:
        if s.run is None and f.state in _OUTCOME_AFTER and before in _OUTCOME_AFTER[f.state]:
            implied_run(st, before)
        if st.s.run is not None:
            said = f.summary if f.state == "error" and s.config.privacy_summary else None
            error = summaries.error_text(summaries.clean(said)) if said else None
            settle(st, _OSC_SETTLE[f.state], f"osc7501 {f.state}", summary=error)
    elif f.state == "blocked":  # what is asked, in the program's words (summary only)
        said = summaries.clean(f.summary) if f.summary and s.config.privacy_summary else None
        add_wait(st, "osc", said or None, kind=f.kind)


def _cancel(st: Step, run: Run) -> bool:
    """Whether a generic program's ``idle`` after ``working`` (no ``done``) is the user's
    cancel: they typed in the run, and it ran long enough for them to mean it."""
    return run.keyed and st.now - run.started >= CANCEL_AFTER


def implied_run(st: Step, before: str | None) -> None:
    """The run the program's reports imply without its ``working``: it starts here, and the
    outcome reported settles it at once."""
    start_run(st, "osc7501")
    st.rec("run", run=st.s.run_seq, state="implied", reason=f"{before} then an outcome")


def on_screen(st: Step, f: ScreenActivity) -> None:
    s = st.s
    if s.bridge_live or "osc7501" in s.trusted:
        st.rec("no_cue", source="screen", reason="a stronger source is live (cross-check only)")
        return
    if f.working:
        if not has_run(s):
            start_run(st, "screen")
    elif s.run is not None and s.run.source == "screen":
        settle(st, "uncertain", "screen no longer shows Working", seems=True)


def on_child_exit(st: Step, f: ChildExit) -> None:
    s = st.s
    # any program's exit is news in generic mode (a build, a REPL); in Pi mode, only mid-run
    pending = s.run is not None or bool(s.waits) or s.config.generic
    block = block_reason(s)
    invalidate(st, "exit")
    if not pending:
        st.rec("no_cue", cue="exited", reason="no run or wait pending")
    elif block is not None:
        st.rec("no_cue", cue="exited", reason=block)
    else:
        run = s.run.id if s.run is not None else None
        body = wording.exited(f.code, f.signal)
        new_cue(st, "exited", None, body, run, source="pty", code=f.code, signal=f.signal)
    if s.config.generic:  # the program's life was its run: its exit status is the outcome
        outcome = "completed" if f.code == 0 and f.signal is None else "failed"
        st.set(outcome=outcome, outcome_seq=s.outcome_seq + 1, outcome_seen=False)
    st.set(exited=True, run=None, waits=(), uncovered=frozenset(), ask_calls=(), bg_active=0)
