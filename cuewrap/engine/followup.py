"""After the rules: stale notifications withdrawn, an unanswered wait escalated, the progress
indicator (docs/design.md#follow-ups). ``reducer.step`` calls ``follow_up`` after the fact's
handler; pure like the rest of the engine (the escalation's due time is returned through the wake-up
time).
"""

from __future__ import annotations

from cuewrap.engine._step import Step
from cuewrap.engine.effects import Escalate, Notify, Progress, Withdraw
from cuewrap.engine.state import EngineState
from cuewrap.facts import ChildProgress

PROGRESS_AFTER = 1.5  # seconds into a run before the progress indicator is shown


def follow_up(st: Step) -> None:
    _withdraw(st)
    _escalate(st)
    _progress(st)


def next_due(s: EngineState) -> float | None:
    """The earliest time a follow-up needs a tick (escalation, progress), or None."""
    times = [t for t in (s.progress_due, s.escalation and s.escalation[0]) if t is not None]
    return min(times) if times else None


def on_child_progress(st: Step, f: ChildProgress) -> None:
    """Pi shows its own progress (``terminal.showTerminalProgress``): ours never competes."""
    if not st.s.child_progress:
        st.set(child_progress=True)
        st.rec("progress", source="child", note="Pi shows its own progress: cuewrap's is off")


def _withdraw(st: Step) -> None:
    """Every notified cue that is no longer live is withdrawn, once; never one not notified."""
    s = st.s
    sent = [e.cue_id for e in st.fx if isinstance(e, Notify)]
    notified = s.notified.union(sent) if sent else s.notified
    stale = notified - s.live_cues
    for cue_id in sorted(stale):
        st.fx.append(Withdraw(cue_id, st.stale_why))
        st.rec("withdraw", cue_id=cue_id, reason=st.stale_why)
    if notified - stale != s.notified:
        st.set(notified=notified - stale)


def _escalate(st: Step) -> None:
    """Armed by a needs-input notification; fires once at its due time if the wait is still
    pending and the user still away; cancelled when the wait's cue goes stale (answered,
    return, new run, /cue off, exit)."""
    s = st.s
    after = s.config.escalate_after
    if after <= 0:
        return
    esc = s.escalation
    for e in st.fx:
        if isinstance(e, Notify) and e.kind == "needs-input" and e.cue_id == s.wait_cue:
            esc = (st.now + after, e)
            st.rec("escalation", cue_id=e.cue_id, state="armed", due_in=after)
    if esc is not None:
        due, note = esc
        if note.cue_id != s.wait_cue or note.cue_id not in s.live_cues or not s.cues_active:
            st.rec("escalation", cue_id=note.cue_id, state="cancelled", reason=st.stale_why)
            esc = None
        elif st.now >= due and not s.looking:
            st.fx.append(Escalate(note))
            st.rec("escalation", cue_id=note.cue_id, state="escalated", after=after)
            esc = None
    if esc != s.escalation:
        st.set(escalation=esc)


def _progress(st: Step) -> None:
    """On once a run has lasted PROGRESS_AFTER seconds (by then Pi has written its own OSC 9;4
    if its setting is on: it starts at once and repeats every second), off when it ends."""
    s = st.s
    active = s.config.progress and not s.child_progress and s.run is not None and not s.exited
    due = s.progress_due
    if not active:
        due = None
    elif due is None and not s.progress_shown:
        due = st.now + PROGRESS_AFTER
    want = s.progress_shown or (due is not None and st.now >= due)
    want = want and active
    if want:
        due = None
    if due != s.progress_due:
        st.set(progress_due=due)
    if want != s.progress_shown:
        st.fx.append(Progress(want))
        st.rec("progress", on=want)
        st.set(progress_shown=want)
