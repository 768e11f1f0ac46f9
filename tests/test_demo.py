"""The README's first command, `scripts/demo`, run as a newcomer would (in a terminal)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.pi
REPO = Path(__file__).resolve().parent.parent


def test_demo_runs_pi_under_cuewrap_and_cues_when_away() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "PI_", "TMUX"))}
    env.pop("DISPLAY", None)
    env["TERM"] = "xterm-256color"
    p = pexpect.spawn(
        "bash", [str(REPO / "scripts" / "demo")], cwd=str(REPO), env=env, timeout=120,
        dimensions=(40, 120), encoding="utf-8", codec_errors="replace",
    )  # fmt: skip
    try:
        p.expect("Press Enter to start")
        p.sendline("")
        p.expect("fake-model", timeout=60)  # Pi's footer: the scripted model is in use
        time.sleep(0.5)
        p.send("\x1b[O")  # the user switches away
        p.send("hello")
        time.sleep(0.3)
        p.send("\r")
        p.expect("\x1b]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)", timeout=30)
        assert p.match.group(1) == "Pi — work" and p.match.group(2) == "Finished"
        p.send("\x1b[I")
        time.sleep(0.5)
        p.send("/quit")
        time.sleep(0.3)
        p.send("\r")
        p.expect(r"cuewrap exited with status (\d+)", timeout=30)
        assert p.match.group(1) == "0"
        p.expect(r'"cue": "finished", "outcome": "completed"', timeout=30)
        p.expect(pexpect.EOF, timeout=30)
    finally:
        p.close(force=True)
    assert p.exitstatus == 0
