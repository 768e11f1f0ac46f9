"""The session's state at a glance, derived from the engine's state (pure; docs/sessions.md).

``session_state(s)`` names what the session is doing for ``cuewrap ls``, the tmux window
option and the events file: ``starting``, ``working``, ``needs-input``, ``finished``,
``failed``, ``cancelled``, ``idle``, ``stopped`` — and ``exited`` once the child is gone (the
events file's last line; the registry entry goes then). It does not depend on the cues being
on or on presence, except that a run's outcome turns into ``idle`` once the user was present
after it.

``changes(before, after)`` is what one engine step published: a run that settled gives its
outcome first, with the outcome named, even when the user is looking and the state is already
``idle`` again after the same step; then the state it ends in, if that differs.
"""

from __future__ import annotations

from typing import NamedTuple

from cuewrap.engine.state import EngineState
from cuewrap.states import EXITED, STATES, URGENCY

__all__ = ["EXITED", "STATES", "URGENCY", "Glance", "changes", "presence", "session_state"]


OUTCOME_STATE = {
    "completed": "finished",
    "failed": "failed",
    "cancelled": "cancelled",
    "uncertain": "finished",  # the run ended (the screen no longer shows it working)
}


class Glance(NamedTuple):
    state: str
    outcome: str | None = None  # the run's outcome, on the line of the run's end


def session_state(s: EngineState) -> str:
    if s.exited:
        return EXITED
    if s.stopped:
        return "stopped"
    if s.waits or s.signalled:
        return "needs-input"
    if s.run is not None or s.busy:
        return "working"
    if s.outcome is not None and not s.outcome_seen:
        return OUTCOME_STATE.get(s.outcome, "finished")
    if not s.started:
        return "starting"
    return "idle"


def presence(s: EngineState) -> str:
    """``present``, ``away`` or ``unknown`` (no focus report yet and not idle)."""
    if s.focus_seen:
        return "present" if s.focus_state == "focused" else "away"
    return "away" if s.idle_away else "unknown"


def changes(before: EngineState, after: EngineState) -> list[Glance]:
    """The states one step went through that a reader must see, in order."""
    out: list[Glance] = []
    if after.outcome_seq != before.outcome_seq and after.outcome is not None:
        out.append(Glance(OUTCOME_STATE.get(after.outcome, "finished"), after.outcome))
    now = session_state(after)
    if out:
        if out[-1].state != now:
            out.append(Glance(now))
    elif now != session_state(before):
        out.append(Glance(now))
    return out
