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

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentrig import OSC777_ST, AgentSession, agent_bin, agent_environment, private_home, write_json
from fakeanthropic import FakeAnthropic, Step

VERSION = "2.1.328"
KEY = "sk-ant-api03-cuewrap-tests-0123456789abcdefghijklmnop"


def claude_bin(version: str = VERSION) -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it (an
    install that fails fails the test)."""
    env_var = "CUEWRAP_CLAUDE_BIN" if version == VERSION else "CUEWRAP_CLAUDE_BIN_LATEST"
    return agent_bin("claude", version, env_var)


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
    home, cwd = private_home(root, ".claude")
    config = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": version,
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {
            str(cwd): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    settings = {"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}}
    write_json(home, {".claude.json": config, ".claude/settings.json": settings})
    return home, cwd


#: what is dropped from the tests' environment: Claude Code's own variables
DROP = ("ANTHROPIC_", "CLAUDE")


def claude_settings(base_url: str) -> dict[str, str]:
    """Its environment variables: the fake API, its key, no traffic besides, no updates."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def claude_environment(bin_dir: str, home: Path, base_url: str) -> dict[str, str]:
    """The environment Claude Code runs in where no ``ClaudeSession`` starts it (in tmux)."""
    return agent_environment(bin_dir, home, DROP, **claude_settings(base_url))


class ClaudeSession(AgentSession):
    """``cuewrap --log … --events … -- claude`` under pexpect, with its own fake API."""

    osc777 = OSC777_ST

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
        home, cwd = claude_home(tmp_path, self.version)
        env = dict(env or {})
        if pythonpath:  # another cuewrap's source (a comparison with a checkout)
            env["PYTHONPATH"] = pythonpath
        program = os.path.join(bindir, "claude")
        environment = (DROP, claude_settings(self.fake.base_url))
        super().__init__(tmp_path, program, home, cwd, environment, env, name="Claude Code")

    def ready(self) -> None:
        self.wait_text("? for shortcuts")


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
