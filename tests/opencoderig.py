"""Real opencode (``scripts/install-opencode``: npm ``opencode-ai``, pinned, a native binary; not
a cuewrap dependency) under ``cuewrap -- opencode``, talking to the project's fake
OpenAI-compatible chat API (``tests/fakemodel.py``), offline, in a private HOME.

Fixture (registered by tests/conftest.py): ``opencode_sessions``, a list a test appends its
``OpencodeSession``s to; each is closed (opencode killed, its fake API stopped) at teardown.

What opencode needs to start without a network: its configuration in
``OPENCODE_CONFIG_CONTENT`` (a provider of its own, ``@ai-sdk/openai-compatible`` with the
fake API's base URL, its model chosen; no auto-update, no sharing),
``OPENCODE_DISABLE_MODELS_FETCH`` and ``OPENCODE_DISABLE_AUTOUPDATE``, private XDG
directories. Its first request of a session asks for a title: the fake API's first steps
answer that (a ``text`` the test does not look for).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentrig import AgentSession, agent_bin
from fakemodel import MODEL_ID, FakeModel, QueueItem
from pirig import pi_environment

VERSION = "1.18.33"


def opencode_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    return agent_bin("opencode", VERSION, "CUEWRAP_OPENCODE_BIN")


def opencode_environment(bin_dir: str, home: Path, base_url: str) -> dict[str, str]:
    env = pi_environment(Path(bin_dir), home / ".pi", home)
    env = {k: v for k, v in env.items() if not k.startswith(("OPENCODE", "OPENTUI", "PI_"))}
    config = {
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": base_url, "apiKey": "cuewrap-tests-fake-key"},
                "models": {MODEL_ID: {"name": "Fake Model"}},
            }
        },
        "model": f"fake/{MODEL_ID}",
        "autoupdate": False,
        "share": "disabled",
    }
    env.update(
        OPENCODE_CONFIG_CONTENT=json.dumps(config),
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        CUEWRAP_NOTIFY_TERMINAL="osc777",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    return env


class OpencodeSession(AgentSession):
    """``cuewrap --log … --events … -- opencode`` under pexpect, with its own fake API."""

    def __init__(
        self, tmp_path: Path, steps: list[QueueItem], *, env: dict[str, str] | None = None
    ) -> None:
        self.fake = FakeModel(steps).start()
        home = tmp_path / "home"
        cwd = home / "proj"
        cwd.mkdir(parents=True)
        bindir = opencode_bin()
        full = opencode_environment(bindir, home, self.fake.base_url)
        full.update(env or {})
        super().__init__(tmp_path, [str(Path(bindir) / "opencode")], full, cwd)

    def ready(self) -> None:
        """Its prompt is drawn (it takes 20-30 s to start on a loaded 2-core machine)."""
        self.wait_text("Ask anything", timeout=90)

    def close(self) -> None:
        super().close()
        self.fake.stop()


@pytest.fixture
def opencode_sessions() -> Iterator[list[OpencodeSession]]:
    started: list[OpencodeSession] = []
    yield started
    for s in started:
        s.close()
