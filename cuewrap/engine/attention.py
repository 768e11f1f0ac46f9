"""The attention budget (docs/attention.md): quiet hours, the desktop's do-not-disturb, mute.

Pure like the rest of the engine. The time of day and the desktop's state enter as ``Quiet``
facts from the edge (``cuewrap.attention``), a mute as a ``Mute`` fact. ``hold`` runs after
the fact's handler and before the follow-ups: every notification decided in the step is taken
out of the effects while quiet or muted and logged as ``held`` with the reason. The cue itself
stays decided and live, so its mark, the overview's state and ``--events`` are what they would
be; a held cue was never sent, so it is never withdrawn and never escalated.

- Quiet: the held cues are remembered while they stay live. A held needs-input cue arms
  ``quiet.urgent_after``: still the open wait, the user still away, quiet still on at its due
  time, ``notify.command`` alone runs once with ``"urgent": true`` (an ``Escalate`` whose note
  is ``urgent``). When quiet ends, ONE reminder: the held cue that is still live (the open
  wait first, else the newest), re-sent as it was decided; what was answered, superseded or
  seen meanwhile is no longer live and is not reminded of.
- Mute: held and forgotten; unmuting replays nothing (docs/design.md#cue-rules rule 7).
- Either way a ``notify.escalate_after`` escalation still armed is cancelled (it would run
  ``notify.command``); during quiet it becomes the urgent rule's.
"""

from __future__ import annotations

import dataclasses

from cuewrap.engine._step import Step
from cuewrap.engine.effects import Escalate, Notify
from cuewrap.engine.state import EngineState
from cuewrap.facts import Mute, Quiet

MAX_HELD = 8  # held cues remembered for the end of quiet (only live ones count)


def on_quiet(st: Step, f: Quiet) -> None:
    s = st.s
    if f.why == s.hush:
        return
    st.set(hush=f.why)
    st.rec("quiet", state="on" if f.why else "off", why=f.why or s.hush)
    if f.why is None:
        _release(st)


def on_mute(st: Step, f: Mute) -> None:
    s = st.s
    if f.muted == s.muted:
        st.rec("mute", muted=f.muted, via=f.via, note="unchanged")
        return
    # unmuted: nothing held is replayed (rule 7); muted: nothing held waits for quiet's end
    st.set(muted=f.muted, held=())
    st.rec("mute", muted=f.muted, via=f.via)


def hold(st: Step) -> None:
    """Take this step's notifications out while quiet or muted; the urgent rule."""
    s = st.s
    why = "muted" if s.muted else s.hush
    if why is not None:
        notes = [e for e in st.fx if isinstance(e, Notify)]
        if notes:
            st.fx = [e for e in st.fx if not isinstance(e, Notify)]
            held = tuple(n for n in s.held if n.cue_id in s.live_cues)
            for n in notes:
                st.rec("held", cue_id=n.cue_id, cue=n.kind, reason=why)
                if s.muted:
                    continue
                held = (*held, n)[-MAX_HELD:]
                if n.kind == "needs-input" and n.cue_id == s.wait_cue:
                    _arm(st, n, st.now)
            st.set(held=held)
        if s.escalation is not None:  # it would run notify.command
            due, note = s.escalation
            st.set(escalation=None)
            st.rec("escalation", cue_id=note.cue_id, state="cancelled", reason=why)
            if not s.muted:
                _arm(st, note, due - s.config.escalate_after)
    _urgent(st)


def next_due(s: EngineState) -> float | None:
    """When the urgent rule needs a tick, or None."""
    return s.urgent[0] if s.urgent is not None else None


def _arm(st: Step, note: Notify, since: float) -> None:
    after = st.s.config.urgent_after
    if after <= 0 or st.s.urgent is not None:
        return
    due = max(st.now, since + after)
    st.set(urgent=(due, note))
    st.rec("urgent", cue_id=note.cue_id, state="armed", due_in=round(due - st.now, 3))


def _urgent(st: Step) -> None:
    s = st.s
    if s.urgent is None:
        return
    due, note = s.urgent
    stale = note.cue_id != s.wait_cue or note.cue_id not in s.live_cues or not s.cues_active
    if stale or s.muted or s.hush is None:
        why = "muted" if s.muted else "quiet ended" if s.hush is None else st.stale_why
        st.rec("urgent", cue_id=note.cue_id, state="cancelled", reason=why)
        st.set(urgent=None)
    elif st.now >= due and not s.looking:
        st.fx.append(Escalate(dataclasses.replace(note, urgent=True)))
        st.rec("urgent", cue_id=note.cue_id, state="sent", after=s.config.urgent_after)
        st.set(urgent=None)


def _release(st: Step) -> None:
    """Quiet ended: one reminder of what still waits (nothing when the user looks now)."""
    s = st.s
    live = [n for n in s.held if n.cue_id in s.live_cues]
    st.set(held=())
    if not live:
        return
    if not s.cues_active or s.looking:
        st.rec("no_cue", cue="reminder", reason="present" if s.looking else "cues are off")
        return
    waiting = [n for n in live if n.kind == "needs-input" and n.cue_id == s.wait_cue]
    note = waiting[-1] if waiting else live[-1]
    st.rec("released", cue_id=note.cue_id, cue=note.kind, held=len(live), reason="quiet ended")
    st.fx.append(note)
