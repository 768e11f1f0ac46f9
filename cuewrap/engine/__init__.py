"""The pure cue engine: facts and presence in, effects out (docs/design.md#cue-rules). No clock, no
I/O.

state = initial_state(EngineConfig(...))
state, effects = step(state, fact_or_tick, now)
is_eligible(state, notify.eligibility)   # right before each asynchronous delivery
consume_notice(state, protocol, now)     # the tracker's policy for a child's notification
status(state)                            # what the /cue page shows: a frozen Status
"""

from cuewrap.engine.generic import consume_notice
from cuewrap.engine.reducer import Event, is_eligible, step
from cuewrap.engine.state import CAPACITY, EngineConfig, EngineState, Tick, initial_state
from cuewrap.engine.status import Status, status

__all__ = [
    "CAPACITY",
    "EngineConfig",
    "EngineState",
    "Event",
    "Status",
    "Tick",
    "consume_notice",
    "initial_state",
    "is_eligible",
    "status",
    "step",
]
