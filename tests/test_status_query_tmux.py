"""Inside tmux, cuewrap answers its child's Program Status query (docs/generic-mode.md): tmux
itself neither answers nor forwards it, but answers the child's DA1 at once, for itself. A real
tmux server on a private socket runs ``cuewrap -- <a child that asks as Claude Code does>`` in a
pane; nobody needs to be attached for tmux to answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until

pytestmark = pytest.mark.tmux

CHILD = str(Path(__file__).parent / "children" / "status_query.py")
PY = sys.executable


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/install-test-deps)")
    base = ["tmux", "-L", f"cuewrap-test-{uuid.uuid4().hex[:10]}", "-f", "/dev/null"]
    yield base
    subprocess.run([*base, "kill-server"], capture_output=True, timeout=10)


def test_answered_inside_tmux_before_tmuxs_own_da1_answer(tmux: list[str], tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "CUEWRAP_"))}
    env.update(TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off")
    command = [PY, "-m", "cuewrap", "--log", str(log), "--", PY, CHILD, "rounds:2"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", *command],
        env=env,
        check=True,
        timeout=10,
    )

    def screen() -> str:
        done = subprocess.run(
            [*tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    wait_until(lambda: "REPORTED" in screen(), 15, "the child's two rounds", detail=screen)
    assert "ROUND 1 ORDER=status-first" in screen()
    assert "ROUND 2 ORDER=status-first" in screen()

    def facts() -> list[tuple[str, str]]:
        if not log.exists():
            return []
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        return [
            (r["state"], r["app"])
            for r in rows
            if r.get("kind") == "fact" and r.get("type") == "ProgramStatus"
        ]

    wait_until(lambda: len(facts()) >= 2, 10, "the child's reports as facts", detail=facts)
    assert facts()[:2] == [("working", "fakeagent"), ("done", "fakeagent")]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert not any(r.get("kind") == "terminal_query" for r in rows)  # tmux answers for itself
    subprocess.run([*tmux, "send-keys", "-t", "t", "q"], check=True, timeout=10)
