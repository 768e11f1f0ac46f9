"""The names of a session's states at a glance, most urgent first (docs/sessions.md).

A ground-floor module of constants only: ``engine/glance.py`` derives the states, and
``cuewrap ls`` sorts by them without importing the engine (the command must start fast).
"""

from __future__ import annotations

# most urgent first: the order of `cuewrap ls` and of a tmux window with several sessions
STATES = (
    "needs-input",
    "failed",
    "finished",
    "cancelled",
    "working",
    "starting",
    "stopped",
    "idle",
)
URGENCY = {name: i for i, name in enumerate(STATES)}
EXITED = "exited"  # the events file's last line; never in the registry
# the events file: the cue side failed, the program runs on without cues (no state follows
# until ``exited``); never in the registry (the session has no entry then)
DEGRADED = "degraded"
