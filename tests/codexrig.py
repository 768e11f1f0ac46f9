"""Real Codex CLI (``scripts/install-codex``: npm ``@openai/codex``, pinned, a native binary;
not a cuewrap dependency) under ``cuewrap -- codex``, talking to the project's fake OpenAI
Responses API (``tests/fakeresponses.py``), offline, in a private HOME.

Fixture (registered by tests/conftest.py): ``codex_sessions``, a list a test appends its
``CodexSession``s to; each is closed (Codex killed, its fake API stopped) at teardown.

What Codex needs to start interactively without a network (docs/generic-mode.md, "Codex CLI"):
``$CODEX_HOME/config.toml`` (``~/.codex`` in the private HOME) with a model provider of its
own (``base_url`` the fake API, ``wire_api = "responses"``, the key from an environment
variable: no login screen), the project trusted (no trust dialog), ``approval_policy =
"on-request"`` (a command the model asks to run unsandboxed waits for the user's approval),
no update check.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentrig import AgentSession, agent_bin
from fakeresponses import MODEL_ID, FakeResponses, Step
from pirig import pi_environment

VERSION = "0.171.0"
KEY = "sk-cuewrap-tests-codex-0123456789"


def codex_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    return agent_bin("codex", VERSION, "CUEWRAP_CODEX_BIN")


def codex_home(root: Path, base_url: str) -> tuple[Path, Path]:
    """A private HOME with Codex configured for the fake API, and the project directory."""
    home = root / "home"
    cwd = home / "proj"
    (home / ".codex").mkdir(parents=True)
    cwd.mkdir()
    config = f"""\
model = "{MODEL_ID}"
model_provider = "fake"
approval_policy = "on-request"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}"
wire_api = "responses"
env_key = "CUEWRAP_TESTS_FAKE_KEY"

[projects."{cwd}"]
trust_level = "trusted"
"""
    (home / ".codex" / "config.toml").write_text(config)
    return home, cwd


def codex_environment(bin_dir: str, home: Path) -> dict[str, str]:
    env = pi_environment(Path(bin_dir), home / ".pi", home)
    env = {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "CODEX_", "PI_"))}
    env.update(
        CODEX_HOME=str(home / ".codex"),
        CUEWRAP_TESTS_FAKE_KEY=KEY,
        CUEWRAP_NOTIFY_TERMINAL="osc777",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    return env


class CodexSession(AgentSession):
    """``cuewrap --log … --events … -- codex`` under pexpect, with its own fake API."""

    def __init__(
        self, tmp_path: Path, steps: list[Step], *, env: dict[str, str] | None = None
    ) -> None:
        self.fake = FakeResponses(steps).start()
        home, cwd = codex_home(tmp_path, self.fake.base_url)
        self.home = home
        bindir = codex_bin()
        full = codex_environment(bindir, home)
        full.update(env or {})
        super().__init__(tmp_path, [str(Path(bindir) / "codex")], full, cwd)

    def ready(self) -> None:
        """Its first report (``idle``) says its session is up. Its prompt is drawn earlier, while
        it still waits for a terminal that answers none of its queries (DA1, the cursor
        position, the colours: about 5 s), and a prompt typed then is not sent."""
        self.wait_status("idle", timeout=40)
        self.wait_text("? for shortcuts")

    def close(self) -> None:
        super().close()
        self.fake.stop()
        end_daemons(self.home)


def end_daemons(home: Path) -> None:
    """Codex 0.171.0 starts an app-server daemon of its own (``codex app-server … --managed-
    daemon``, from ``$CODEX_HOME/packages``, in a session of its own) that outlives it: the
    ones run from this test's HOME are ended, by their pids."""
    prefix = str(home) + os.sep
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0", 1)[0]
            if argv0.decode(errors="replace").startswith(prefix):
                os.kill(int(entry), signal.SIGKILL)


@pytest.fixture
def codex_sessions() -> Iterator[list[CodexSession]]:
    started: list[CodexSession] = []
    yield started
    for s in started:
        s.close()
