"""What the byte path decides on its own: the rules for the child's notifications and its
clipboard sequences, as a value (docs/architecture.md, "One way through the seam").

The output tracker meets a child's notification or clipboard sequence in the middle of a scan
and must decide at once whether it reaches the terminal. It never calls up into the cue side
for that: the cue side hands the byte path an :class:`OutputRules` value after every engine
step that changes it (``output_rules``), and the byte path decides from it with the time and
the user's last keystroke, which it sees itself. The rules are those of
:func:`cuewrap.engine.generic.consume_notice` and :func:`cuewrap.engine.guard.clipboard_passes`
restated for a later ``now`` (``tests/test_output_rules.py`` holds them equal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cuewrap.engine import notices
from cuewrap.engine.generic import CHILD, OSC, stronger_live
from cuewrap.engine.guard import clipboard_passes
from cuewrap.engine.state import EngineState

NOTICES = frozenset({"osc9", "osc777", "osc99"})  # the child's notification protocols


@dataclass(frozen=True, slots=True)
class OutputRules:
    """``consume``: the notification protocols taken out of the output once the user counts
    as away, which they do from ``away_from`` on (``-inf``: already; ``inf``: not until a
    step says so). ``clipboard``: the ``guard.clipboard`` setting; ``pi`` (the program is Pi:
    its runs and frames count) and ``running`` (a run streams) what its ``user`` rule reads."""

    consume: frozenset[str] = frozenset()
    away_from: float = math.inf
    clipboard: str = "user"
    pi: bool = False
    running: bool = False

    def takes_out(self, protocol: str, now: float) -> bool:
        """Is this notification of the child taken out of the output at ``now``?"""
        return protocol in self.consume and now >= self.away_from

    def clipboard_passes(self, read: bool, framed: bool, since_key: float) -> tuple[bool, str]:
        """Does a clipboard sequence reach the terminal, ``since_key`` seconds after the
        user's last keystroke (``inf``: none), and why."""
        return clipboard_passes(self.clipboard, read, since_key, self.pi, self.running, framed)


def output_rules(s: EngineState, clipboard: str, pi: bool) -> OutputRules:
    """The rules as the engine's state ``s`` makes them (the same for every ``now`` until
    the next step: the idle time is counted by ``away_from``)."""
    away_from = -math.inf if _read_as_facts(s) else _away_from(s)
    return OutputRules(_consumed(s), away_from, clipboard, pi, running=s.run is not None)


def _read_as_facts(s: EngineState) -> bool:
    """A known program's notifications, read as facts: taken out whoever looks (its one popup
    is cuewrap's cue)."""
    return (
        s.config.generic
        and s.cues_active
        and notices.read_for(s.config.notices)
        and not stronger_live(s)
    )


def _consumed(s: EngineState) -> frozenset[str]:
    """consume_notice without the user's presence: generic mode with cues on, and either a
    known program's notifications (read as facts), a wait of the child's already told or —
    no stronger source live — a channel to re-emit it and a host terminal that would not
    show it as it is."""
    if not (s.config.generic and s.cues_active):
        return frozenset()
    if _read_as_facts(s):
        return NOTICES
    if s.hush is not None or s.muted:  # quiet: it is the reminder, held (docs/attention.md)
        return NOTICES
    if stronger_live(s):
        return NOTICES if OSC in s.wait_keys and s.wait_cue is not None else frozenset()
    if CHILD in s.wait_keys:
        return NOTICES
    if not s.config.reemit:
        return frozenset()
    return NOTICES - s.config.host_native


def _away_from(s: EngineState) -> float:
    """From when the user counts as away (``generic._looking_at`` as a boundary)."""
    if s.focus_seen or s.idle_away or s.last_activity is None:
        return math.inf if s.looking else -math.inf
    return s.last_activity + s.config.idle_after


def unseen(s: EngineState) -> bool:
    """Nobody looks at the output (docs/design.md#unseen-output): the terminal reported its
    focus lost, or tmux shows another window; the relay gathers the output longer then."""
    return s.focus_seen and s.focus_state != "focused"
