"""What a step would do under another presence (pure, no clock, no I/O).

Inside tmux cuewrap learns presence by asking tmux, not from a stream of its events
(docs/tmux-and-ssh.md#presence): a fact whose cue depends on whether the user is looking waits
for a fresh answer (``wiring/freshview.py``). These two functions say when that is:

- ``depends_on_presence(state, event, now)``: stepping ``event`` gives other cues (a
  notification or a mark) with the user looking than with the user away;
- ``waits_on_presence(state)``: something stands that a change of presence alone would act on
  (a needs-input wait: leaving gives its cue; a mark or a notification: the return takes it
  away).
"""

from __future__ import annotations

import dataclasses

from cuewrap.engine.effects import Effect, Notify, SetMark
from cuewrap.engine.reducer import Event, step
from cuewrap.engine.state import EngineState


def _cues(effects: list[Effect]) -> tuple[tuple[str, str | None], ...]:
    out: list[tuple[str, str | None]] = []
    for e in effects:
        if isinstance(e, Notify):
            out.append(("notify", e.kind))
        elif isinstance(e, SetMark):
            out.append(("mark", e.mark))
    return tuple(out)


def depends_on_presence(state: EngineState, event: Event, now: float) -> bool:
    """Whether ``event``'s cues differ between a user in front of Pi and one away."""
    looking = dataclasses.replace(state, focus_seen=True, focus_state="focused")
    away = dataclasses.replace(state, focus_seen=True, focus_state="away")
    return _cues(step(looking, event, now)[1]) != _cues(step(away, event, now)[1])


def waits_on_presence(state: EngineState) -> bool:
    """A change of presence alone would give or take away a cue now."""
    return bool(state.waits) or state.mark_shown is not None or bool(state.notified)
