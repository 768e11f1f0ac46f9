"""Data for the ``/cue`` page (SPEC section 8): evidence of this session, not a guarantee.

Per integration: "not yet observed", "unrecognized" (events seen, none matched the protocol)
or "trusted protocol observed"; rejection counts and reasons; capacity use; presence; on/off.
"""

from __future__ import annotations

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
    """The strongest live source: the one whose facts make cues (SPEC section 2)."""
    if state.bridge_live:
        return "bridge"
    if "osc7501" in state.trusted:
        return "osc7501"
    return "screen"


def status(state: EngineState) -> dict[str, object]:
    s = state
    rejections: dict[str, dict[str, int]] = {}
    for name, reason, count in s.rejections:
        rejections.setdefault(name, {})[reason] = count
    integrations: dict[str, dict[str, object]] = {}
    for name in INTEGRATIONS:
        entry: dict[str, object] = {
            "status": integration_status(s, name),
            "rejected": sum(rejections.get(name, {}).values()),
            "reasons": rejections.get(name, {}),
        }
        integrations[name] = entry
    integrations["bridge"]["live"] = s.bridge_live
    cap = s.config.capacity
    return {
        "enabled": s.enabled,
        "cues_active": s.cues_active,
        "guard": s.guard,
        "exited": s.exited,
        "presence": {
            "state": s.presence,
            "counts_as": "present" if s.looking else "away",
            "via": "focus reports" if s.focus_seen else "keystrokes and idle time",
            "idle_after": s.config.idle_after,
        },
        "integrations": integrations,
        "source": driving_source(s),
        "capacity": {
            "ask_ids": {"used": len(s.ask_history), "limit": cap},
            "background": {"used": len(s.bg), "limit": cap},
        },
        "run_active": s.run is not None,
        "waits": len(s.waits),
        "background_active": s.bg_active,
        "generation": s.generation,
        "keep_awake_held": s.awake_held,
        "mark": s.mark_shown,
    }
