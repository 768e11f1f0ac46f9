"""Real Claude Code (``scripts/install-claude``: npm ``@anthropic-ai/claude-code``, pinned, a
native binary; not a cuewrap dependency) under ``cuewrap -- claude``, talking to the project's
fake Anthropic Messages API (``tests/fakeanthropic.py``), offline, in a private HOME.

Fixture (registered by tests/conftest.py): ``claude_sessions``, a list a test appends its
``ClaudeSession``s to; each is closed (Claude Code killed, its fake API stopped) at teardown.
It runs every test twice: with the pinned version (``VERSION``) and with the registry's latest
(``scripts/install-claude latest``; ``CUEWRAP_CLAUDE_BIN_LATEST``), so that a change in what
Claude Code reports shows up as a failing test, not as a user's missing reminder. The list's
``version`` says which; ``ClaudeSession(…, version=…)`` runs that one.

The test plays the host terminal through pexpect (it answers none of the queries, as a bare
PTY; cuewrap's start-up query then closes after its 5 s). What Claude Code needs to start
interactively without a network (docs/generic-mode.md, "Claude Code"):

- ``~/.claude.json``: onboarding done for this version, the API key's last 20 characters
  approved, the project's trust dialog accepted;
- ``~/.claude/settings.json``: the default permission mode (``default``: a Bash call asks for
  permission) and auto mode off (else a dialog asks at start whether to make it the default);
- ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``,
  ``DISABLE_AUTOUPDATER``.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from fakeanthropic import FakeAnthropic, Step
from launch import seen
from pirig import pi_environment
from shared import LoggedChild
from waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
VERSION = "2.1.328"
KEY = "sk-ant-api03-cuewrap-tests-0123456789abcdefghijklmnop"
AWAY = b"\x1b[O"
BACK = b"\x1b[I"
OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)\x1b\\")
_SCREEN_JUNK = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\s")


def claude_bin(version: str = VERSION) -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it (an
    install that fails fails the test)."""
    found = os.environ.get(
        "CUEWRAP_CLAUDE_BIN" if version == VERSION else "CUEWRAP_CLAUDE_BIN_LATEST"
    )
    if not found:
        done = subprocess.run(
            [str(ROOT / "scripts" / "install-claude"), version],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"scripts/install-claude {version} failed:\n{done.stderr}"
        found = done.stdout.strip()
    return found


def installed_version(bin_dir: str) -> str:
    """The x.y.z of the Claude Code in ``bin_dir`` (its ``--version``: "2.1.332 (Claude Code)")."""
    done = subprocess.run(
        [os.path.join(bin_dir, "claude"), "--version"], capture_output=True, text=True, timeout=60
    )
    match = re.match(r"\s*(\d+\.\d+\.\d+\S*)", done.stdout)
    assert match, f"claude --version said {done.stdout!r} {done.stderr!r}"
    return match.group(1)


def claude_home(root: Path, version: str = VERSION) -> tuple[Path, Path]:
    """A private HOME with Claude Code onboarded, and the project directory in it."""
    home = root / "home"
    cwd = home / "proj"
    (home / ".claude").mkdir(parents=True)
    cwd.mkdir()
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": version,
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {
            str(cwd): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    (home / ".claude.json").write_text(json.dumps(config))
    settings = {"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    return home, cwd


def claude_environment(bin_dir: str, home: Path, base_url: str) -> dict[str, str]:
    env = pi_environment(Path(bin_dir), home / ".pi", home)
    env = {k: v for k, v in env.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "PI_"))}
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        CUEWRAP_NOTIFY_TERMINAL="osc777",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    return env


class ClaudeSession(LoggedChild):
    """``cuewrap --log … --events … -- claude`` under pexpect, with its own fake API."""

    presence_within = 10.0

    def __init__(
        self,
        tmp_path: Path,
        steps: list[Step],
        *,
        env: dict[str, str] | None = None,
        pythonpath: str | None = None,
        version: str = VERSION,
    ) -> None:
        self.fake = FakeAnthropic(steps).start()
        bindir = claude_bin(version)
        self.version = version if version != "latest" else installed_version(bindir)
        home, self.cwd = claude_home(tmp_path, self.version)
        self.env = claude_environment(bindir, home, self.fake.base_url)
        self.env.update(env or {})
        if pythonpath:  # another cuewrap's source (a comparison with a checkout)
            self.env["PYTHONPATH"] = pythonpath
        self.log = tmp_path / "log.jsonl"
        self.events = tmp_path / "events.jsonl"
        argv = ["-m", "cuewrap", "--log", str(self.log), "--events", str(self.events), "--"]
        argv.append(os.path.join(bindir, "claude"))
        self.p = pexpect.spawn(
            PY, argv, env=self.env, cwd=str(self.cwd), timeout=60, dimensions=(30, 120)
        )
        self.p.logfile_read = io.BytesIO()

    # -- the screen ---------------------------------------------------------------------------
    def out(self) -> bytes:
        return seen(self.p)

    def text(self, since: int = 0) -> bytes:
        """What was drawn, without escape sequences and white space (Claude Code draws spaces
        as cursor moves)."""
        return _SCREEN_JUNK.sub(b"", self.out()[since:])

    def wait_text(self, what: str, since: int = 0, timeout: float = 30) -> None:
        needle = re.sub(r"\s", "", what).encode()
        wait_until(
            lambda: needle in self.text(since),
            timeout,
            f"Claude Code to show {what!r}",
            detail=lambda: self.text(since)[-600:],
        )

    def ready(self) -> None:
        self.wait_text("? for shortcuts")

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

    def notifications(self) -> list[tuple[bytes, bytes]]:
        return OSC777.findall(self.out())

    # -- the decision log ---------------------------------------------------------------------
    def statuses(self) -> list[dict[str, Any]]:
        return [r for r in self.records("fact") if r.get("type") == "ProgramStatus"]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.p.terminate(force=True)
        self.fake.stop()


class Sessions(list[ClaudeSession]):
    """The sessions a test started, and the Claude Code version it runs."""

    version: str = VERSION


@pytest.fixture(params=[VERSION, "latest"])
def claude_sessions(request: pytest.FixtureRequest) -> Iterator[Sessions]:
    started = Sessions()
    started.version = request.param
    yield started
    for s in started:
        s.close()
