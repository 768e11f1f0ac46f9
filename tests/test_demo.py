"""The README's first command, `scripts/demo`, run as a newcomer would (in a terminal)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pirig import PiSession
from waiting import wait_until

pytestmark = pytest.mark.pi
REPO = Path(__file__).resolve().parent.parent
_TITLE = re.compile(rb"\x1b\][02];([^\x07\x1b]*)(?:\x07|\x1b\\)")


def last_title(raw: bytes) -> bytes | None:
    titles = _TITLE.findall(raw)
    return titles[-1] if titles else None


def test_demo_runs_pi_under_cuewrap_and_cues_when_away() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "PI_", "TMUX"))}
    env.pop("DISPLAY", None)
    env["TERM"] = "xterm-256color"
    s = PiSession(["bash", str(REPO / "scripts" / "demo")], env=env, cwd=REPO)
    try:
        s.wait_for_screen("Press Enter to start", 120)
        s.enter()
        s.wait_ready(timeout=60)  # Pi's footer names the scripted model; the editor is idle
        s.focus_out()  # the user switches away
        s.submit("hello")
        m = s.wait_for_output(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)", 30)
        assert m.group(1).decode() == "Pi — work" and m.group(2) == b"Finished"
        wait_until(lambda: last_title(s.raw_output) == "[✓] π - work".encode(), 5,
                   "the done mark in the title", detail=s.dump)  # fmt: skip
        s.focus_in()
        # back: the mark goes (Pi's own title is sent again)
        wait_until(lambda: last_title(s.raw_output) == "π - work".encode(), 5, "the mark gone",
                   detail=s.dump)  # fmt: skip
        s.quit()
        m = s.wait_for_output(rb"cuewrap exited with status (\d+)", 30)
        assert m.group(1) == b"0"
        s.wait_for_output(rb'"cue": "finished", "outcome": "completed"', 30)
        assert s.wait_exit(30) == 0
    finally:
        s.close()
