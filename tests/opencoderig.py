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
from typing import Any

import pytest
from agentrig import AgentSession, agent_bin, closing, private_home, write_json
from fakemodel import MODEL_ID, FakeModel, QueueItem

VERSION = "1.18.33"


def opencode_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    return agent_bin("opencode", VERSION, "CUEWRAP_OPENCODE_BIN")


def opencode_settings(
    home: Path, base_url: str, extra: dict[str, Any] | None = None
) -> dict[str, str]:
    """Its environment variables: its configuration (with ``extra`` keys: ``permission``
    …), private XDG directories (its TUI settings in ``home/.config/opencode``)."""
    config: dict[str, Any] = {
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
        **(extra or {}),
    }
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


class OpencodeSession(AgentSession):
    """``cuewrap --log … --events … -- opencode`` under pexpect, with its own fake API."""

    def __init__(
        self,
        tmp_path: Path,
        steps: list[QueueItem],
        *,
        env: dict[str, str] | None = None,
        config: dict[str, Any] | None = None,
        tui: dict[str, Any] | None = None,
    ) -> None:
        """``config``: keys of its configuration (``permission`` …); ``tui``: the user's own
        global TUI settings file (``tui.json``), none when None."""
        self.fake = FakeModel(steps).start()
        home, cwd = private_home(tmp_path)
        if tui is not None:
            (home / ".config" / "opencode").mkdir(parents=True)
            write_json(home, {".config/opencode/tui.json": tui})
        settings = opencode_settings(home, self.fake.base_url, config)
        program = str(Path(opencode_bin()) / "opencode")
        super().__init__(tmp_path, program, home, cwd, (("OPENCODE", "OPENTUI"), settings), env)

    def ready(self) -> None:
        """Its prompt is drawn (it takes 20-30 s to start on a loaded 2-core machine)."""
        self.wait_text("Ask anything", timeout=90)


@pytest.fixture
def opencode_sessions() -> Iterator[list[OpencodeSession]]:
    yield from closing()
