"""Data for the ``/cue`` page (docs/design.md#what-the-user-sees): evidence of this session, not a
guarantee.

Per integration: "not yet observed", "unrecognized" (events seen, none matched the protocol)
or "trusted protocol observed"; rejection counts and reasons; capacity use; presence; on/off.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuewrap.engine import pi_support
from cuewrap.engine.state import EngineState

NOT_YET = "not yet observed"
UNRECOGNIZED = "unrecognized"
TRUSTED = "trusted protocol observed"

INTEGRATIONS = ("bridge", "osc7501", "focus", "ask", "pi-subagents")


def integration_status(state: EngineState, name: str) -> str:
    if name in state.trusted:
        return TRUSTED
    if name in state.seen:
        return UNRECOGNIZED
    return NOT_YET


def driving_source(state: EngineState) -> str:
    """The strongest live source: the one whose facts make cues (docs/design.md#fact-sources)."""
    if state.bridge_live:
        return "bridge"
    if "osc7501" in state.trusted:
        return "osc7501"
    return "child" if state.config.generic else "screen"


@dataclass(frozen=True)
class Integration:
    name: str  # one of INTEGRATIONS
    status: str  # NOT_YET, UNRECOGNIZED or TRUSTED
    rejected: int  # events rejected, all reasons together
    reasons: tuple[tuple[str, int], ...]  # (reason, count), in the order first seen


@dataclass(frozen=True)
class PresenceStatus:
    state: str  # "focused", "away" or "unknown"
    counts_as: str  # "present" or "away"
    via: str  # what presence is judged by
    idle_after: float


@dataclass(frozen=True)
class Usage:
    used: int
    limit: int


@dataclass(frozen=True)
class Capacity:
    ask_ids: Usage
    background: Usage


@dataclass(frozen=True)
class Status:
    enabled: bool
    cues_active: bool
    guard: str | None
    exited: bool
    presence: PresenceStatus
    integrations: tuple[Integration, ...]  # in INTEGRATIONS order
    bridge_live: bool
    source: str  # the driving source: "bridge", "osc7501" or "screen"
    capacity: Capacity
    run_active: bool
    waits: int
    background_active: int
    generation: int
    keep_awake_held: bool
    mark: str | None
    pi_version: str | None = None  # from the bridge's hello
    pi_support: str | None = None  # what this Pi lacks and what cuewrap does instead (None: full)
    summaries: str | None = None  # privacy.body = "summary": what this Pi lets them say (None: off)
    hush: str | None = None  # quiet now: "quiet hours", "desktop do-not-disturb" (None: not)
    muted: bool = False  # cuewrap mute / /cue mute

    def integration(self, name: str) -> Integration:
        for entry in self.integrations:
            if entry.name == name:
                return entry
        raise KeyError(name)


def status(state: EngineState) -> Status:
    s = state
    rejections: dict[str, dict[str, int]] = {}
    for name, reason, count in s.rejections:
        rejections.setdefault(name, {})[reason] = count
    integrations = tuple(
        Integration(
            name=name,
            status=integration_status(s, name),
            rejected=sum(rejections.get(name, {}).values()),
            reasons=tuple(rejections.get(name, {}).items()),
        )
        for name in INTEGRATIONS
    )
    cap = s.config.capacity
    return Status(
        hush=s.hush,
        muted=s.muted,
        enabled=s.enabled,
        cues_active=s.cues_active,
        guard=s.guard,
        exited=s.exited,
        presence=PresenceStatus(
            state=s.presence,
            counts_as="present" if s.looking else "away",
            via=(
                ("tmux" if s.presence_via == "tmux" else "focus reports")
                if s.focus_seen
                else "keystrokes and idle time"
            ),
            idle_after=s.config.idle_after,
        ),
        integrations=integrations,
        bridge_live=s.bridge_live,
        source=driving_source(s),
        capacity=Capacity(
            ask_ids=Usage(used=len(s.ask_history), limit=cap),
            background=Usage(used=len(s.bg), limit=cap),
        ),
        run_active=s.run is not None,
        waits=len(s.waits),
        background_active=s.bg_active,
        generation=s.generation,
        keep_awake_held=s.awake_held,
        mark=s.mark_shown,
        pi_version=s.pi_version,
        pi_support=pi_support.describe(s.pi_version, s.pi_caps),
        summaries=pi_support.summaries(s.pi_caps) if s.config.privacy_summary else None,
    )
