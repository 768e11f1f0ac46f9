"""The README's first command, `scripts/demo`, run as a newcomer would: in a terminal, with a
fresh HOME (no Node or Pi cached yet). It must say what it installs while it does, offer its
tasks, give a cue, and leave its decision log where the user can read it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest
from waiting import wait_until

pytestmark = pytest.mark.pi
REPO = Path(__file__).resolve().parent.parent


def _node_is_new_enough() -> bool:
    node = shutil.which("node")
    if node is None:
        return False
    out = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    parts = out.stdout.strip().split(".")
    return out.returncode == 0 and (int(parts[0]), int(parts[1])) >= (22, 19)


USER_PAUSE = 0.3  # typing, then Enter a moment later (all in one read, Pi sees a paste)


def wait_log(
    p: pexpect.spawn, log: Path, pred: Callable[[dict[str, Any]], bool], what: str
) -> None:
    """Wait for a record of the demo's decision log, draining the terminal meanwhile (Pi
    blocks on a full PTY)."""

    def found() -> bool:
        if not log.exists():
            return False
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        for line in lines:
            try:
                if pred(json.loads(line)):
                    return True
            except json.JSONDecodeError:
                continue  # a line being written
        return False

    def drain(seconds: float) -> None:
        p.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=seconds)

    wait_until(found, 30, what, sleep=drain)


def test_demo_as_a_newcomer_shows_progress_tasks_a_cue_and_keeps_its_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    drop = ("CUEWRAP_", "PI_", "TMUX", "XDG_", "NPM_CONFIG_CACHE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.pop("DISPLAY", None)
    env.update(HOME=str(home), TERM="xterm-256color")
    p = pexpect.spawn(
        "bash", [str(REPO / "scripts" / "demo")], cwd=str(REPO), env=env, timeout=300,
        dimensions=(40, 120), encoding="utf-8", codec_errors="replace",
    )  # fmt: skip
    cache = home / ".cache" / "cuewrap"
    try:
        # progress while installing: what, where and roughly how long, then how long it took
        p.expect(r"demo: installing Pi 1\.4\.0 \(and Node 22 if your Node is older than 22\.19\)")
        p.expect(r"first time: about 30-90 s")
        p.expect(r"install-pi: installing Pi 1\.4\.0 \(.*usually 15-40 s\) into " + str(cache))
        p.expect(r"install-pi:   Pi 1\.4\.0 installed in \d+ s")
        if not _node_is_new_enough():
            p.expect(
                r"install-pi: system Node is older than 22\.19\.0 \(Pi 1\.4\.0 needs it\):"
                r" installing Node 22 \("
            )
            p.expect(r"install-pi:   Node 22 installed in \d+ s")
        # several tasks, /cue, and where the log is
        p.expect(r"1  quick")
        p.expect(r"2  long")
        p.expect(r"3  ask")
        p.expect(r"4  fail")
        p.expect(r"/cue shows what cuewrap sees")
        p.expect(r"Decision log \(why a reminder came or not\): (\S+)")
        log = Path(p.match.group(1))
        assert log == home / ".local" / "state" / "cuewrap" / "demo-decisions.jsonl"
        p.expect("Press Enter to start")
        p.sendline("")
        p.expect("fake-model", timeout=60)  # Pi's footer: the scripted model is in use
        wait_log(p, log, lambda r: r.get("type") == "BridgeHello", "Pi's bridge connected")
        p.send("\x1b[O")  # the user switches away
        wait_log(p, log, lambda r: r.get("presence") == "away", "presence away")
        p.send("1")
        time.sleep(USER_PAUSE)
        p.send("\r")
        p.expect("\x1b]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)", timeout=30)
        assert p.match.group(1) == "Pi — work" and p.match.group(2) == "Finished"
        p.send("\x1b[I")
        wait_log(p, log, lambda r: r.get("presence") == "focused", "presence focused")
        p.send("/quit")
        time.sleep(USER_PAUSE)
        p.send("\r")
        p.expect(r"cuewrap exited with status (\d+)", timeout=30)
        assert p.match.group(1) == "0"
        p.expect(r'"cue": "finished", "outcome": "completed"', timeout=30)
        p.expect(r"alias pi='cuewrap pi'")
        p.expect(pexpect.EOF, timeout=30)
    finally:
        p.close(force=True)
    assert p.exitstatus == 0
    # the decision log stays for the user to read after exit
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["kind"] == "cue" and r.get("cue") == "finished" for r in records)
