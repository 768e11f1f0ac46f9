"""The /cue page as a pure function of the engine's status and the channels
(docs/design.md#what-the-user-sees), without a session. (tests/test_cue_page_pi.py shows it in real
Pi.)"""

from __future__ import annotations

import pytest

from cuewrap.engine import EngineConfig, EngineState, initial_state, status, step
from cuewrap.engine.page import (
    CUES_OFF,
    CUES_ON,
    BridgeCounts,
    Channels,
    GuardCounts,
    cue_page,
    toggle_reply,
)
from cuewrap.facts import BridgeHello, CueToggle, Fact, Presence, SubagentStarted

pytestmark = pytest.mark.unit

CHANNELS = Channels(
    terminal="osc777",
    terminal_reason="TERM_PROGRAM=WezTerm",
    desktop=False,
    desktop_why="over SSH (SSH_TTY is set)",
    bell=False,
    title_marks=True,
    keep_awake=False,
)


def state_after(*facts: Fact) -> EngineState:
    s = initial_state(EngineConfig())
    for t, fact in enumerate(facts):
        s, _ = step(s, fact, float(t))
    return s


def test_fresh_session_page_line_by_line() -> None:
    page = cue_page(status(state_after()), CHANNELS)
    assert page.splitlines() == [
        "cuewrap: cues on · cues come from: screen",
        "presence: unknown (counts as present; via keystrokes and idle time)",
        "  Pi bridge: not yet observed",
        "  OSC 7501: not yet observed",
        "  focus reports: not yet observed",
        "  Ask: not yet observed",
        "  pi-subagents: not yet observed",
        "capacity: Ask ids 0/8192, background 0/8192",
        "channels: terminal osc777 (TERM_PROGRAM=WezTerm);"
        " desktop off (over SSH (SSH_TTY is set)); bell off; title marks on; keep-awake off",
    ]


def test_bridge_presence_and_rejections_shown() -> None:
    hello = BridgeHello(1, "1.4.0", "tui", True, "sid-1", "/s.jsonl", 4242)
    unowned = SubagentStarted(
        run_id="r1",
        session_id="/s.jsonl",
        completion_owner_id="owner-1",
        artifact_version=3,
        parent="/s.jsonl",
        owner_now=None,
    )
    s = state_after(hello, Presence("away"), unowned, unowned)
    bridge = BridgeCounts(live=1, facts=5, hellos=1, dropped=(("flood", 3), ("too_long", 1)))
    lines = cue_page(status(s), CHANNELS, bridge).splitlines()
    assert lines[0] == "cuewrap: cues on · cues come from: bridge"
    assert lines[1] == "presence: away (counts as away; via focus reports)"
    assert "  Pi bridge: trusted protocol observed" in lines
    assert "  focus reports: trusted protocol observed" in lines
    (subagents,) = [line for line in lines if line.startswith("  pi-subagents:")]
    assert " · rejected 2 (" in subagents
    assert "bridge channel: 1 live, 5 facts, 1 hellos · dropped: flood 3, too_long 1" in lines


def test_the_bridge_line_counts_pis_own_writes() -> None:
    """Provenance (docs/terminal-guard.md): Pi's own writes that came through the bridge."""
    stats = {"live_connections": 1, "facts": 4, "hellos": 1, "own_writes": 3, "rejected": {}}
    lines = cue_page(status(state_after()), CHANNELS, BridgeCounts.from_stats(stats))
    assert "bridge channel: 1 live, 4 facts, 1 hellos, 3 of Pi's own writes" in lines.splitlines()


def test_cues_off_and_every_channel_on() -> None:
    s = state_after(CueToggle(False))
    on = Channels("osc9", "tmux passthrough", True, "", True, True, True)
    lines = cue_page(status(s), on, BridgeCounts(0, 0, 0, ())).splitlines()
    assert lines[0].startswith("cuewrap: cues off · ")
    assert "bridge channel: 0 live, 0 facts, 0 hellos" in lines  # nothing dropped: no tail
    assert lines[-1] == (
        "channels: terminal osc9 (tmux passthrough); desktop on; bell on;"
        " title marks on; keep-awake on"
    )


def test_bridge_counts_from_the_servers_stats() -> None:
    stats: dict[str, object] = {
        "live_connections": 2,
        "facts": 7,
        "hellos": 3,
        "rejected": {"wrong_pid": 1, "bad_field": 4},
        "listening": True,
    }
    assert BridgeCounts.from_stats(stats) == BridgeCounts(
        live=2, facts=7, hellos=3, dropped=(("bad_field", 4), ("wrong_pid", 1))
    )
    assert BridgeCounts.from_stats({}) == BridgeCounts(0, 0, 0, ())


def test_toggle_replies() -> None:
    assert toggle_reply(True) == CUES_ON and "cues on" in CUES_ON
    assert toggle_reply(False) == CUES_OFF and "cues off" in CUES_OFF


def test_privacy_summary_says_what_this_pi_can_say() -> None:
    def page(*facts: Fact, summary: bool = True) -> list[str]:
        s = initial_state(EngineConfig(privacy_summary=summary))
        for t, fact in enumerate(facts):
            s, _ = step(s, fact, float(t))
        return cue_page(status(s), CHANNELS).splitlines()

    new = BridgeHello(1, "1.4.0", "tui", True, "sid-1", "/s.jsonl", 4242,
                      capabilities=frozenset({"agent_settled", "ui_prompt"}))  # fmt: skip
    old = BridgeHello(1, "0.74.2", None, True, "sid-1", "/s.jsonl", 4242,
                      capabilities=frozenset())  # fmt: skip
    said = "privacy.body summary: notifications say "
    assert said + "dialog titles, Ask's first question, the answer's first line, the error" in (
        page(new)
    )
    assert said + (
        "Ask's first question, the answer's first line, the error;"
        " no dialog titles (they need ui_prompt, Pi ≥ 0.84.4)"
    ) in page(old)
    assert not any(line.startswith("privacy.body") for line in page(new, summary=False))


def test_clipboard_guard_line() -> None:
    page = cue_page(status(state_after()), CHANNELS, None, GuardCounts("user"))
    assert page.splitlines()[-1] == (
        "clipboard guard: user (the program's clipboard writes pass only right after your own"
        " action) · nothing removed"
    )
    page = cue_page(status(state_after()), CHANNELS, None, GuardCounts("block", 3, "12:03:04", 57))
    assert page.splitlines()[-1].endswith("· removed 3 sequences, last at 12:03:04 (57 bytes)")


def test_the_page_names_the_desktop_popup_path_and_why() -> None:
    import dataclasses

    why = "the terminal's own (a click raises its window): kitty shows its own notifications"
    channels = dataclasses.replace(CHANNELS, path="terminal", path_why=why)
    page = cue_page(status(state_after()), channels)
    assert f"desktop popup: {why}" in page.splitlines()
    assert "desktop popup" not in cue_page(status(state_after()), CHANNELS)


def test_quiet_and_muted_are_said() -> None:
    from cuewrap.facts import Mute, Quiet

    assert "quiet:" not in cue_page(status(state_after()), CHANNELS)
    page = cue_page(status(state_after(Quiet("quiet hours"))), CHANNELS)
    assert "quiet: quiet hours: reminders are held; marks and the state stay" in page
    page = cue_page(status(state_after(Quiet("quiet hours"), Mute(True, "t"))), CHANNELS)
    assert "quiet: muted (/cue unmute): reminders are held" in page
