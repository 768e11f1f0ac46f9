"""A real third-party coding agent under ``cuewrap --log … --events … -- AGENT``, played by
pexpect as a bare PTY host terminal (it answers no query), with the decision log and the
screen at hand. The program-specific rigs (tests/codexrig.py …) build the environment and the
command; this holds what every such test reads, and what the rigs share:

- ``AgentSession``        the program under cuewrap, its fake API (``fake``, stopped at
                          ``close``), its screen, decision log, ``ls``; ``notified_away``:
                          the scenario of a prompt while away and its notifications
- ``private_home(root, DIR)``  a private HOME with ``DIR`` made in it, and the project
                          directory ``proj``; ``write_json(HOME, FILES)`` its settings
- ``agent_environment(BIN, HOME, DROP, **SET)``  the environment: real Pi's rig's, less the
                          variables starting with ``DROP``, cuewrap's notifications as OSC 777
- ``closing()``           a fixture's body: the list of sessions, each closed at teardown
- ``started(SESSIONS, S)`` a session kept for teardown, once ready
- ``private_runtime(tmp_path)``  the environment of a private runtime directory (``ls``)

The scenarios the programs' tests share are in tests/agentscenes.py.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pexpect
from fakemodel import Served
from launch import seen
from pirig import pi_environment
from shared import LoggedChild
from waiting import absence_window, wait_until

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
AWAY = b"\x1b[O"
BACK = b"\x1b[I"
OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)(?:\x07|\x1b\\)")
#: an OSC 777 ended by ST only
OSC777_ST = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)\x1b\\")
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


def private_home(root: Path, *dirs: str) -> tuple[Path, Path]:
    """A private HOME under ``root`` with ``dirs`` made in it, and the project directory."""
    home = root / "home"
    cwd = home / "proj"
    for d in dirs:
        (home / d).mkdir(parents=True)
    cwd.mkdir(parents=True)
    return home, cwd


def write_json(home: Path, files: dict[str, Any]) -> None:
    """Each of ``files`` (a path in ``home``: its content) written as JSON."""
    for name, content in files.items():
        (home / name).write_text(json.dumps(content))


def agent_environment(
    bin_dir: str, home: Path, drop: tuple[str, ...], **settings: str
) -> dict[str, str]:
    """Real Pi's rig's environment for ``home`` without the variables starting with ``drop``
    (nor ``PI_``, nor a CI's), with ``settings``; cuewrap notifies by OSC 777 only, the user
    counts as present however long they are idle."""
    env = pi_environment(Path(bin_dir), home / ".pi", home)
    env = {k: v for k, v in env.items() if not k.startswith((*drop, "PI_")) and not _ci(k)}
    env.update(
        settings,
        CUEWRAP_NOTIFY_TERMINAL="osc777",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    return env


def _ci(name: str) -> bool:
    """A variable that says "a CI runs this" (``CI=true`` under ``.ci/run``): a program that
    reads it (Gemini CLI does) runs non-interactively, unlike on a user's terminal."""
    return name in ("CI", "CONTINUOUS_INTEGRATION") or name.startswith("CI_")


def private_runtime(tmp_path: Path) -> dict[str, str]:
    """The environment of a runtime directory of the test's own (what ``cuewrap ls`` reads)."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    return {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp_path)}


def run_cuewrap(env: dict[str, str], *args: str) -> tuple[int, str]:
    """``cuewrap ARGS`` (``answer``, ``ls`` …) beside a session, with ``env`` over ours: its
    exit status and what it printed, one string."""
    done = subprocess.run(
        [PY, "-m", "cuewrap", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


class AgentSession(LoggedChild):
    """``cuewrap --log … --events … -- COMMAND`` under pexpect, with the program's fake API
    (``fake``, set by the program's rig before this starts)."""

    fake: Served
    presence_within = 10.0
    #: the notifications it finds on the screen
    osc777 = OSC777

    def __init__(
        self,
        tmp_path: Path,
        program: str,
        home: Path,
        cwd: Path,
        environment: tuple[tuple[str, ...], dict[str, str]],
        env: dict[str, str] | None = None,
        *,
        dimensions: tuple[int, int] = (30, 120),
        name: str = "",
    ) -> None:
        """``program`` (its path) run in ``cwd`` with ``agent_environment(…, *environment)``
        for ``home`` (the variables starting with its prefixes dropped, its settings set), then
        ``env`` (the test's own)."""
        drop, settings = environment
        self.cwd = cwd
        self.env = agent_environment(os.path.dirname(program), home, drop, **settings)
        self.env.update(env or {})
        self.log = tmp_path / "log.jsonl"
        self.events = tmp_path / "events.jsonl"
        argv = ["-m", "cuewrap", "--log", str(self.log), "--events", str(self.events), "--"]
        self.p = pexpect.spawn(
            PY, [*argv, program], env=self.env, cwd=str(cwd), timeout=60, dimensions=dimensions
        )
        self.p.logfile_read = io.BytesIO()
        self.name = name or os.path.basename(program)

    def ready(self) -> None:
        """Wait until the program takes a prompt (each rig says how it knows)."""
        raise NotImplementedError

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

    def notifications(self) -> list[tuple[bytes, bytes]]:
        return self.osc777.findall(self.out())

    def notified_away(
        self,
        prompt: str,
        waiting_for: str,
        quiet: str,
        *,
        shown: str = "",
        timeout: float = 30,
        window: float = 2.0,
        detail: Callable[[], object] | None = None,
    ) -> list[tuple[bytes, bytes]]:
        """The user goes away and types ``prompt`` (the program shows ``shown``): notifications
        come (``waiting_for``), and no more in the ``window`` seconds after (``quiet`` says what
        must not come). Returns them."""
        self.presence(AWAY, "away")
        mark = self.type(prompt)
        if shown:
            self.wait_text(shown, mark)
        notes = wait_until(self.notifications, timeout, waiting_for, detail=detail)
        absence_window(window, quiet)
        assert self.notifications() == notes, (notes, self.notifications(), self.records("cue"))
        return notes

    # -- the decision log ---------------------------------------------------------------------
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
        """``cuewrap ls --json`` with ``env``: its one row (asserted)."""
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

    def ls_table(self, env: dict[str, str]) -> list[list[str]]:
        """``cuewrap ls`` with ``env``: its lines, cut into words."""
        return [
            line.split()
            for line in subprocess.run(
                [PY, "-m", "cuewrap", "ls"],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                timeout=20,
            ).stdout.splitlines()
        ]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.p.terminate(force=True)
        self.fake.stop()


S = TypeVar("S", bound=AgentSession)


def closing() -> Iterator[list[S]]:
    """A rig's fixture: ``yield from closing()``; the sessions a test appends are closed at
    its teardown."""
    started: list[S] = []
    yield started
    for s in started:
        s.close()


def started(sessions: list[S], session: S) -> S:
    """``session``, kept in ``sessions`` (closed at teardown), once it is ready."""
    sessions.append(session)
    session.ready()
    return session
