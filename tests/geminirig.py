"""Real Gemini CLI (``scripts/install-gemini``: npm ``@google/gemini-cli``, pinned, JavaScript;
not a cuewrap dependency) under ``cuewrap -- gemini``, talking to the project's fake Gemini API
(``tests/fakegemini.py``), offline, in a private HOME.

Fixture (registered by tests/conftest.py): ``gemini_sessions``, a list a test appends its
``GeminiSession``s to; each is closed (Gemini CLI killed, its fake API stopped) at teardown.

What Gemini CLI needs to start interactively without a network: ``GEMINI_API_KEY`` and
``GOOGLE_GEMINI_BASE_URL`` (the fake API), and ``~/.gemini/settings.json`` with the API-key
auth chosen, folder trust off, no update check, no statistics. The user's own setting
``general.enableNotifications`` (off by default) is on: it is what makes Gemini CLI notify
(docs/generic-mode.md, "Programs, measured"); cuewrap does not turn it on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentrig import AgentSession, agent_bin
from fakegemini import MODEL_ID, FakeGemini, Step
from pirig import pi_environment
from waiting import wait_until

VERSION = "0.61.0"


def gemini_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    return agent_bin("gemini", VERSION, "CUEWRAP_GEMINI_BIN")


def gemini_home(root: Path, notifications: bool = True) -> tuple[Path, Path]:
    home = root / "home"
    cwd = home / "proj"
    (home / ".gemini").mkdir(parents=True)
    cwd.mkdir()
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {
            "enableNotifications": notifications,
            "disableAutoUpdate": True,
            "disableUpdateNag": True,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"hideTips": True},
        "model": {"name": MODEL_ID},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home, cwd


def gemini_environment(bin_dir: str, home: Path, base_url: str) -> dict[str, str]:
    env = pi_environment(Path(bin_dir), home / ".pi", home)
    env = {k: v for k, v in env.items() if not k.startswith(("GEMINI_", "GOOGLE_", "PI_"))}
    env.update(
        GEMINI_API_KEY="cuewrap-tests-fake-key",
        GOOGLE_GEMINI_BASE_URL=base_url,
        CUEWRAP_NOTIFY_TERMINAL="osc777",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    return env


class GeminiSession(AgentSession):
    """``cuewrap --log … --events … -- gemini`` under pexpect, with its own fake API."""

    def __init__(
        self,
        tmp_path: Path,
        steps: list[Step],
        *,
        env: dict[str, str] | None = None,
        notifications: bool = True,
    ) -> None:
        self.fake = FakeGemini(steps).start()
        home, cwd = gemini_home(tmp_path, notifications)
        bindir = gemini_bin()
        full = gemini_environment(bindir, home, self.fake.base_url)
        full.update(env or {})
        super().__init__(tmp_path, [str(Path(bindir) / "gemini")], full, cwd)

    def ready(self) -> None:
        """Its prompt is drawn, and it turned focus reporting on (cuewrap forwards focus
        reports to a child that did): from then on it knows whether it is looked at."""
        self.wait_text("Type your message", timeout=60)
        wait_until(
            lambda: any(r.get("mode") == 1004 and r.get("on") for r in self.records("child_mode")),
            30,
            "Gemini CLI to turn focus reporting on",
        )

    def close(self) -> None:
        super().close()
        self.fake.stop()


@pytest.fixture
def gemini_sessions() -> Iterator[list[GeminiSession]]:
    started: list[GeminiSession] = []
    yield started
    for s in started:
        s.close()
