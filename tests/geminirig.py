"""Real Gemini CLI (``scripts/install-gemini``: npm ``@google/gemini-cli``, pinned, JavaScript;
not a cuewrap dependency) under ``cuewrap -- gemini``, talking to the project's fake Gemini API
(``tests/fakegemini.py``), offline, in a private HOME.

Fixture (registered by tests/conftest.py): ``gemini_sessions``, a list a test appends its
``GeminiSession``s to; each is closed (Gemini CLI killed, its fake API stopped) at teardown.

What Gemini CLI needs to start interactively without a network: ``GEMINI_API_KEY`` and
``GOOGLE_GEMINI_BASE_URL`` (the fake API), and ``~/.gemini/settings.json`` with the API-key
auth chosen, folder trust off, no update check, no statistics. The user's own setting
``general.enableNotifications`` (off by default) is not set unless a test sets it: cuewrap's
session defaults turn it on (docs/generic-mode.md, "What cuewrap supplies"), the user's own
``false`` wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentrig import AgentSession, agent_bin, closing, private_home, write_json
from fakegemini import MODEL_ID, FakeGemini, Step
from waiting import wait_until

VERSION = "0.61.0"


def gemini_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    return agent_bin("gemini", VERSION, "CUEWRAP_GEMINI_BIN")


def gemini_home(root: Path, notifications: bool | None = None) -> tuple[Path, Path]:
    """The user's settings; ``notifications``: their own ``general.enableNotifications``
    (None: not set, cuewrap's session defaults turn it on)."""
    home, cwd = private_home(root, ".gemini")
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"hideTips": True},
        "model": {"name": MODEL_ID},
    }
    if notifications is not None:
        settings["general"]["enableNotifications"] = notifications
    write_json(home, {".gemini/settings.json": settings})
    return home, cwd


class GeminiSession(AgentSession):
    """``cuewrap --log … --events … -- gemini`` under pexpect, with its own fake API."""

    def __init__(
        self,
        tmp_path: Path,
        steps: list[Step],
        *,
        env: dict[str, str] | None = None,
        notifications: bool | None = None,
    ) -> None:
        self.fake = FakeGemini(steps).start()
        home, cwd = gemini_home(tmp_path, notifications)
        settings = {
            "GEMINI_API_KEY": "cuewrap-tests-fake-key",
            "GOOGLE_GEMINI_BASE_URL": self.fake.base_url,
        }
        program = str(Path(gemini_bin()) / "gemini")
        super().__init__(tmp_path, program, home, cwd, (("GEMINI_", "GOOGLE_"), settings), env)

    def ready(self) -> None:
        """Its prompt is drawn, and it turned focus reporting on (cuewrap forwards focus
        reports to a child that did): from then on it knows whether it is looked at."""
        self.wait_text("Type your message", timeout=60)
        wait_until(
            lambda: any(r.get("mode") == 1004 and r.get("on") for r in self.records("child_mode")),
            30,
            "Gemini CLI to turn focus reporting on",
        )


@pytest.fixture
def gemini_sessions() -> Iterator[list[GeminiSession]]:
    yield from closing()
