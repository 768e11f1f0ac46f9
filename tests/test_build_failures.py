"""The cue side's build fails at each of its steps (``CUEWRAP_DEBUG_FAULT=build:<part>``,
cuewrap/wiring/_faults.py): what was built before the failure is closed again
(cuewrap/wiring/cueside.py), and the session runs on as a plain passthrough.

Real Pi (and a generic child) under ``python -m cuewrap`` in window 0 of a private tmux server,
so that every part is built: the bridge server, the publisher (registry entry, tmux window
option), the screen gate or the output watch, the tmux side (a control-mode client, questions
to tmux). A failure before the first part is the reference: nothing was built. After a failure
at any later step, cuewrap's process must come to the same open files (by kind), threads,
child processes, cuewrap files in its runtime and temp directories, and no window option;
and its events file must say ``degraded`` (the session goes on), never ``exited``.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pirig import TEST_EXT, PiHome, pi_argv
from tmuxrig import SESSION, TmuxRig
from waiting import wait_until

pytestmark = pytest.mark.tmux

PI_STEPS = [
    "delivery",
    "bridge",
    "publisher",
    "screen",
    "answer",
    "tmux",
    "attention",
    "controller",
    "wired",
]
GENERIC_STEPS = [
    "delivery",
    "publisher",
    "activity",
    "answer",
    "tmux",
    "attention",
    "controller",
    "wired",
]


def fd_kind(target: str) -> str:
    for prefix, kind in (("socket:", "socket"), ("pipe:", "pipe"), ("/dev/pts/", "pts")):
        if target.startswith(prefix):
            return kind
    return os.path.basename(target)  # the log file, /dev/ptmx, a pidfd


def children(pid: int) -> list[str]:
    """The commands of ``pid``'s child processes."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(os.path.basename(cmd))
    return sorted(found)


class Scene:
    def __init__(self, pi_home: PiHome, tmp: Path, fault: str, generic: bool) -> None:
        self.run_dir, self.tmp_dir = tmp / "run", tmp / "tmp"
        for d in (self.run_dir, self.tmp_dir):
            d.mkdir(mode=0o700)
        self.rig = TmuxRig(pi_home)
        self.rig.log_path = tmp / "cuewrap.log"
        self.events = tmp / "events.jsonl"  # outside the directories the snapshot looks at
        self.rig.env.update(
            XDG_RUNTIME_DIR=str(self.run_dir),
            TMPDIR=str(self.tmp_dir),
            CUEWRAP_DEBUG_FAULT=f"build:{fault}",
        )
        if generic:  # a program that draws once and stays
            argv = [sys.executable, "-m", "cuewrap", "--events", str(self.events), "--log",
                    str(self.rig.log_path), "--", "sh", "-c",
                    "printf 'ready\\n'; exec sleep 100000"]  # fmt: skip
        else:
            argv = pi_argv(["-e", str(TEST_EXT)], wrap=True, log_path=self.rig.log_path,
                           cuewrap_args=["--events", str(self.events)])  # fmt: skip
        self.rig.start(argv)
        self.pid = self.rig.pane_pid(f"{SESSION}:0")

    def failed(self) -> None:
        """The build failed (logged where the session catches it)."""

        def errors() -> list[dict[str, Any]]:
            if not self.rig.log_path.exists():
                return []
            lines = self.rig.log_path.read_text().splitlines()
            return [r for r in map(json.loads, lines) if r.get("kind") == "internal_error"]

        wait_until(lambda: any(r.get("where") == "controller" for r in errors()), 30,
                   "the cue side's build to fail", detail=lambda: str(errors()))  # fmt: skip

    def degraded(self) -> None:
        """The events file says what happened: the cue side failed, the session goes on
        (``degraded`` last, no ``exited``)."""

        def states() -> list[str]:
            text = self.events.read_text() if self.events.exists() else ""
            return [json.loads(line)["state"] for line in text.splitlines()]

        wait_until(lambda: states()[-1:] == ["degraded"], 10, "the degraded line", detail=states)
        assert "exited" not in states(), states()

    def snapshot(self) -> dict[str, object]:
        fds = Counter()
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            try:
                fds[fd_kind(os.readlink(f"/proc/{self.pid}/fd/{fd}"))] += 1
            except OSError:
                continue
        files = sorted(
            str(p.relative_to(d))
            for d in (self.run_dir, self.tmp_dir)
            for p in d.rglob("*")
            if any(part.startswith("cuewrap") for part in p.relative_to(d).parts)
            and not (p.is_dir() and p.name == "cuewrap")  # the registry's own directory
        )
        option = self.rig.tmux(
            "show-options", "-w", "-v", "-t", f"{SESSION}:0", "@cuewrap_state", check=False
        ).strip()
        return {
            "fds": dict(fds),
            "threads": len(os.listdir(f"/proc/{self.pid}/task")),
            "children": children(self.pid),
            "files": files,
            "window option": option,
        }

    def close(self) -> None:
        self.rig.close()


@pytest.mark.parametrize("pi_version", ["1.4.0"])
@pytest.mark.parametrize("generic", [False, True], ids=["pi", "generic"])
def test_a_build_that_fails_at_any_step_leaves_nothing_open(
    pi_home: PiHome, tmp_path: Path, generic: bool
) -> None:
    steps = GENERIC_STEPS if generic else PI_STEPS
    scenes: list[Scene] = []
    try:
        ref = Scene(pi_home, _fresh(tmp_path / "keys"), "keys", generic)
        scenes.append(ref)
        ref.failed()
        ref.degraded()
        want = ref.snapshot()
        # not vacuous: the reference is a running session (the relay's PTY, its child)
        assert want["children"] and "pts" in want["fds"] and want["window option"] == "", want
        for step in steps:
            scene = Scene(pi_home, _fresh(tmp_path / step), step, generic)
            scenes.append(scene)
            scene.failed()
            scene.degraded()
            wait_until(lambda s=scene: s.snapshot() == want, 15,  # type: ignore[misc]
                       f"what was built before {step} to be closed",
                       detail=lambda s=scene: f"want {want}\ngot  {s.snapshot()}")  # fmt: skip
            scene.close()
    finally:
        for scene in scenes:
            scene.close()


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path
