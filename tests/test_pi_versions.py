"""Pi versions cuewrap serves: an older Pi (0.74.2, what npm picks on Node 20) gets the cues
it can give and says what it lacks; the bridge is never called inactive when it is loaded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pirig import PiSession

from cuewrap.engine import pi_support

REPO = Path(__file__).resolve().parent.parent
OLD_PI = "0.74.2"


@pytest.mark.unit
def test_the_bridge_and_pi_support_share_one_feature_table() -> None:
    ts = (REPO / "cuewrap" / "bridge" / "extension" / "cuewrap-bridge.ts").read_text()
    table = ts[ts.index("const SINCE") : ts.index("};", ts.index("const SINCE"))]
    pairs = dict(re.findall(r'(\w+): "([\d.]+)"', table))
    assert pairs == {f.name: f.since for f in pi_support.FEATURES}


@pytest.mark.unit
def test_features_by_version() -> None:
    assert pi_support.features_of("0.74.2") == frozenset()
    assert pi_support.features_of("0.84.4") == {"agent_settled", "ui_prompt"}
    assert pi_support.features_of("1.3.0") == set(pi_support.NAMES)
    assert pi_support.features_of("1.6.0-beta.1") == set(pi_support.NAMES)
    assert pi_support.features_of("unknown") is None
    assert pi_support.FULL_SINCE == "1.3.0"
    assert pi_support.describe("1.4.0", pi_support.features_of("1.4.0")) is None
    assert pi_support.node_requirement(">=22.19.0") == (22, 19, 0)
    assert pi_support.node_requirement("^20 || >=22") is None


def finished_cue_then_quit(s: PiSession) -> None:
    """Away, a prompt: the run's "Finished" notification (OSC 777); back, /quit, exit 0."""
    s.focus_out()
    s.prompt("hello")
    m = s.wait_for_output(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)", timeout=30)
    assert m.group(2) == b"Finished"
    s.focus_in()
    s.quit()
    assert s.wait_exit() == 0


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0", "latest"])
def test_current_pi_under_cuewrap_has_full_cues(pi_session) -> None:  # type: ignore[no-untyped-def]
    s = pi_session(test_ext=False, env={"CUEWRAP_NOTIFY_TERMINAL": "osc777"})
    s.submit("/cue")
    m = s.wait_for_screen(r"Pi (\d+\.\d+\.\d+): full cues")
    assert pi_support.features_of(m.group(1)) == set(pi_support.NAMES)
    finished_cue_then_quit(s)
    [support] = s.log_records("pi_support")
    assert support["full"] is True and support["missing"] == []
    assert s.log_records("diagnostic") == []  # nothing to say about this Pi


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", [OLD_PI])
def test_older_pi_under_cuewrap_states_its_degraded_mode_and_cues(pi_session) -> None:  # type: ignore[no-untyped-def]
    s = pi_session(test_ext=False, env={"CUEWRAP_NOTIFY_TERMINAL": "osc777"})
    # said once at start, in Pi (a notice through the bridge)
    s.wait_for_screen(r"Pi 0\.74\.2 has no agent_settled", timeout=15)
    s.submit("/cue")
    s.wait_for_screen(r"Pi bridge: trusted protocol observed")
    s.wait_for_screen(r"cues come from: bridge")
    assert "bridge inactive" not in s.screen_text
    finished_cue_then_quit(s)
    rejected = s.log_records("rejected")
    assert rejected == [], rejected
    [support] = s.log_records("pi_support")
    assert support["pi"] == OLD_PI and support["full"] is False
    assert support["missing"] == list(pi_support.NAMES)
    runs = [r for r in s.log_records("run") if r.get("state") == "settled"]
    assert runs and runs[-1]["outcome"] == "completed"
    assert "no agent_settled" in runs[-1]["why"]
