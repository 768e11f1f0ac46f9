"""A real third-party coding agent under ``cuewrap --log … --events … -- AGENT``, played by
pexpect as a bare PTY host terminal (it answers no query), with the decision log and the
screen at hand. The program-specific rigs (tests/codexrig.py …) build the environment and the
command; this holds what every such test reads.

Installers: ``agent_bin(NAME, VERSION, ENV)`` takes the bin directory from ``ENV`` (scripts/test
exports it) or runs ``scripts/install-NAME VERSION`` (cached, idempotent). An install that fails
fails the test: these tests never skip (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pexpect
from launch import seen
from waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
AWAY = b"\x1b[O"
BACK = b"\x1b[I"
OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)(?:\x07|\x1b\\)")
_SCREEN_JUNK = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\s")


def agent_bin(name: str, version: str, env_var: str) -> str:
    """The bin directory of ``scripts/install-NAME VERSION``: from ``env_var`` when set (only
    for the pinned version's variable), else the install script's (it fails the test when the
    install fails)."""
    found = os.environ.get(env_var)
    if not found:
        done = subprocess.run(
            [str(ROOT / "scripts" / f"install-{name}"), version],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"scripts/install-{name} {version} failed:\n{done.stderr}"
        found = done.stdout.strip()
    return found


class AgentSession:
    """``cuewrap --log … --events … -- COMMAND`` under pexpect."""

    def __init__(
        self,
        tmp_path: Path,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        *,
        dimensions: tuple[int, int] = (30, 120),
    ) -> None:
        self.cwd = cwd
        self.env = env
        self.log = tmp_path / "log.jsonl"
        self.events = tmp_path / "events.jsonl"
        argv = ["-m", "cuewrap", "--log", str(self.log), "--events", str(self.events), "--"]
        self.p = pexpect.spawn(
            PY, argv + command, env=env, cwd=str(cwd), timeout=60, dimensions=dimensions
        )
        self.p.logfile_read = io.BytesIO()
        self.name = os.path.basename(command[0])

    # -- the screen ---------------------------------------------------------------------------
    def out(self) -> bytes:
        return seen(self.p)

    def text(self, since: int = 0) -> bytes:
        """What was drawn, without escape sequences and white space (spaces are often drawn
        as cursor moves)."""
        return _SCREEN_JUNK.sub(b"", self.out()[since:])

    def wait_text(self, what: str, since: int = 0, timeout: float = 30) -> None:
        needle = re.sub(r"\s", "", what).encode()
        wait_until(
            lambda: needle in self.text(since),
            timeout,
            f"{self.name} to show {what!r}",
            detail=lambda: self.text(since)[-600:],
        )

    def type(self, text: str) -> int:
        """Type ``text`` as a user does, then Enter a moment later (not a paste); returns where
        the output stood before."""
        mark = len(self.out())
        for ch in text:
            self.p.send(ch)
            time.sleep(0.02)
        time.sleep(0.3)  # a user's pause before Enter
        self.p.send(b"\r")
        return mark

    def presence(self, report: bytes, state: str) -> None:
        self.p.send(report)
        wait_until(
            lambda: any(
                r.get("type") == "Presence" and r.get("state") == state
                for r in self.records("fact")
            ),
            10,
            f"cuewrap to see presence {state}",
        )

    def notifications(self) -> list[tuple[bytes, bytes]]:
        return OSC777.findall(self.out())

    # -- the decision log ---------------------------------------------------------------------
    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        rows = []
        for line in self.log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
        return [r for r in rows if kind is None or r.get("kind") == kind]

    def statuses(self) -> list[dict[str, Any]]:
        return [r for r in self.records("fact") if r.get("type") == "ProgramStatus"]

    def wait_status(self, state: str, after: int = 0, timeout: float = 30) -> None:
        """Wait for the program's report ``state`` as a fact, past the first ``after`` ones."""
        wait_until(
            lambda: state in [f["state"] for f in self.statuses()[after:]],
            timeout,
            f"{self.name}'s {state} report",
            detail=lambda: [f["state"] for f in self.statuses()],
        )

    def ls(self, env: dict[str, str]) -> list[dict[str, Any]]:
        done = subprocess.run(
            [PY, "-m", "cuewrap", "ls", "--json"],
            env={**os.environ, **env},
            capture_output=True,
            timeout=20,
        )
        assert done.returncode == 0, done.stderr
        rows = json.loads(done.stdout)
        assert len(rows) == 1, rows
        return rows  # type: ignore[no-any-return]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.p.terminate(force=True)
