"""cuewrap must never take down the user's tmux server.

tmux up to 3.5a (Debian 12's 3.3a here) crashes (SIGSEGV in ``control_write``, every session
of the server gone) when a control-mode notification such as ``%session-window-changed`` meets a
control client that has not finished identifying. cuewrap used to start control clients of its
own (at every start inside tmux, when ``focus-events`` changed, after a restart): a script that
switched windows while agents started in new windows killed the server within a few dozen
starts (docs/tmux-and-ssh.md#why-no-control-client). Now cuewrap runs only ordinary tmux
commands, which tmux never sends notifications to.

Here, as an orchestrator that opens an agent per window would: cuewrap started again and again
in new windows of a private server with a user's client attached, while a thread switches
windows and toggles ``focus-events`` without pause. The server must be alive at the end, and
every cuewrap must have asked tmux (so that the scene really had cuewrap inside tmux). Each
test runs with the system's tmux (Debian 12's 3.3a) and with tmux 3.5a, the last release with
the crash, built from Debian's source package by scripts/install-tmux.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pirig import TEST_EXT, PiHome, PiSession, _installed, pi_argv, under_ci
from tmuxrig import need_tmux

pytestmark = pytest.mark.tmux

STARTS = 200  # cuewrap started this many times (the code before died within ~10-40)
AT_ONCE = 8  # windows running a cuewrap at a time


TMUX_VERSIONS = ("system", "3.5a")


@functools.cache
def _tmux_bin(version: str) -> Path:
    return _installed("install-tmux", version)


@pytest.fixture(params=TMUX_VERSIONS)
def tmux_path(request: pytest.FixtureRequest) -> str:
    """What to put first on PATH to run tmux (and so cuewrap's tmux commands): nothing for the
    system's, the bin directory of scripts/install-tmux for another version."""
    need_tmux()
    version = str(request.param)
    if version == "system":
        return ""
    try:
        bindir = _tmux_bin(version)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        msg = f"tmux {version} could not be built here (scripts/install-tmux): {exc}"
        if under_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return f"{bindir}{os.pathsep}"


class Server:
    def __init__(self, root: Path, env: dict[str, str], first: str) -> None:
        self.root = root
        self.env = {**env, "PATH": first + env.get("PATH", os.defpath)}
        tmux = shutil.which("tmux", path=self.env["PATH"]) or "tmux"
        self.base = [tmux, "-L", f"cuewrap-crash-{uuid.uuid4().hex[:10]}", "-f", "/dev/null"]
        self.client: PiSession | None = None

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=20, check=check,
            env=self.env,
        )  # fmt: skip

    def alive(self) -> bool:
        return self.tmux("list-sessions", check=False).returncode == 0

    def start(self) -> None:
        self.tmux("new-session", "-d", "-s", "work", "-x", "100", "-y", "30", "sleep 100000")
        self.tmux("new-window", "-d", "-t", "work:1", "sleep 100000")
        user = {k: v for k, v in self.env.items() if not k.startswith("TMUX")}
        self.client = PiSession(
            [*self.base, "attach-session", "-t", "work"],
            env={**user, "TERM": "xterm-256color"},
            cwd=self.root,
            dimensions=(30, 100),
        )
        deadline = time.monotonic() + 10
        while "0" not in self.tmux("list-clients", "-F", "#{client_control_mode}").stdout:
            assert time.monotonic() < deadline, "the user's client did not attach"
            time.sleep(0.05)

    def close(self) -> None:
        self.tmux("kill-server", check=False)
        if self.client is not None:
            self.client.close()


@pytest.fixture
def server(tmp_path: Path, tmux_path: str) -> Iterator[Server]:
    s = Server(tmp_path, dict(os.environ), tmux_path)
    yield s
    s.close()


def _switcher(server: Server, stop: threading.Event, counts: list[int]) -> None:
    """Window switches as fast as tmux takes them, ``focus-events`` toggled every 25th."""
    i = 0
    while not stop.is_set():
        i += 1
        args = ["select-window", "-t", f"work:{i % 2}"]
        if i % 25 == 0:
            args = ["set", "-s", "focus-events", "on" if i % 50 else "off"]
        try:
            if server.tmux(*args, check=False).returncode != 0 and not server.alive():
                return
        except subprocess.TimeoutExpired:
            return
        counts[0] = i


def _asked_tmux(log: Path) -> bool:
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        with_state = json.loads(line)
        if with_state.get("kind") == "tmux" and with_state.get("state") == "watching":
            return True
    return False


def _storm(server: Server, tmp_path: Path, command: list[str], starts: int, gap: float) -> None:
    """Start ``command`` (a cuewrap line, ``{log}`` for its log's path) ``starts`` times in new
    windows, at most AT_ONCE at a time, while windows are switched; then check the server."""
    server.start()
    version = server.tmux("display-message", "-p", "#{version}").stdout.strip()
    print(f"tmux {version}: {starts} starts")
    stop = threading.Event()
    counts = [0]
    switcher = threading.Thread(target=_switcher, args=(server, stop, counts), daemon=True)
    switcher.start()
    logs: list[Path] = []
    try:
        for n in range(starts):
            log = tmp_path / f"cuewrap-{n}.log"
            logs.append(log)
            line = " ".join(shlex.quote(a.replace("{log}", str(log))) for a in command)
            while True:
                windows = server.tmux("list-windows", "-t", "work", check=False)
                assert windows.returncode == 0, (
                    f"the tmux server died after {n} starts and {counts[0]} switches"
                )
                if len(windows.stdout.splitlines()) < 2 + AT_ONCE:
                    break
                time.sleep(0.05)
            server.tmux("new-window", "-d", "-c", str(tmp_path), line)
            time.sleep(gap)
    finally:
        stop.set()
        switcher.join(20)
    deadline = time.monotonic() + 60
    while len(server.tmux("list-windows", "-t", "work").stdout.splitlines()) > 2:
        assert server.alive(), f"the tmux server died after {counts[0]} switches"
        assert time.monotonic() < deadline, "the cuewraps did not end"
        time.sleep(0.1)
    assert server.alive(), f"the tmux server died after {counts[0]} switches"
    assert counts[0] > starts, f"only {counts[0]} switches were made"
    asked = sum(_asked_tmux(log) for log in logs)
    first = next((log for log in logs if not _asked_tmux(log)), None)
    said = first.read_text()[-1500:] if first is not None and first.exists() else "no log"
    assert asked == starts, f"{starts - asked} of {starts} cuewraps did not ask tmux: {said}"


def test_many_starts_while_windows_switch_never_crash_tmux(server: Server, tmp_path: Path) -> None:
    """cuewrap in generic mode (a program that writes a line, then waits): a few hundred
    starts, each one asks tmux for the pane's view."""
    program = "echo working; sleep 1"  # long enough for cuewrap to ask tmux on a busy machine
    command = [sys.executable, "-m", "cuewrap", "--log", "{log}", "--", "sh", "-c", program]
    _storm(server, tmp_path, command, STARTS, 0.1)


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_pi_starts_while_windows_switch_never_crash_tmux(
    pi_home: PiHome, tmp_path: Path, tmux_path: str
) -> None:
    """``cuewrap pi`` itself, as the issue's users ran it: started in new windows while a
    script switches windows; each is ended (SIGTERM) after a few seconds."""
    server = Server(tmp_path, dict(pi_home.env), tmux_path)
    try:
        argv = pi_argv(["-e", str(TEST_EXT)], wrap=True, log_path=Path("{log}"))
        command = ["sh", "-c", 'timeout --foreground 6 "$@"; exit 0', "sh", *argv]
        _storm(server, tmp_path, command, 24, 0.4)
    finally:
        server.close()
