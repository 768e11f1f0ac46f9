"""A real tmux server on a private socket, with a client attached through a pexpect PTY that
plays the user's terminal (the "outer terminal"), and real Pi under cuewrap in window 0.

    rig = TmuxRig(pi_home, options={"focus-events": "on"})   # server options set before attach
    rig.start(argv)                   # window 0 runs argv (cuewrap … pi …); window 1 a sleep
    client = rig.attach()             # a PiSession whose terminal is the tmux client's
    rig.tmux("select-window", "-t", "work:1")
    rig.messages()                    # tmux show-messages: the status-line messages shown

Everything is killed at ``close()`` (the server with ``kill-server``, the clients' trees).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Sequence

import pytest
from pirig import PiHome, PiSession
from waiting import wait_until

SESSION = "work"


def need_tmux() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/install-test-deps)")


class TmuxRig:
    def __init__(
        self,
        pi_home: PiHome,
        *,
        server_options: dict[str, str] | None = None,
        global_options: dict[str, str] | None = None,
        size: tuple[int, int] = (40, 120),
    ) -> None:
        need_tmux()
        self.home = pi_home
        self.name = f"cuewrap-test-{uuid.uuid4().hex[:10]}"
        self.base = ["tmux", "-L", self.name, "-f", "/dev/null"]
        self.server_options = server_options or {}
        self.global_options = global_options or {}
        self.rows, self.cols = size
        self.env = dict(pi_home.env)
        self.clients: list[PiSession] = []
        self.log_path = pi_home.root / "cuewrap-tmux.log"

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            [*self.base, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self, argv: Sequence[str], *, window1: Sequence[str] = ("sleep", "100000")) -> None:
        """Window 0 runs ``argv`` (no shell in between); window 1 ``window1``."""
        self.tmux(
            "new-session", "-d", "-s", SESSION, "-x", str(self.cols), "-y", str(self.rows),
            "-c", str(self.home.cwd), *argv,
        )  # fmt: skip
        for key, value in self.server_options.items():
            self.tmux("set", "-s", key, value)
        for key, value in self.global_options.items():
            self.tmux("set", "-g", key, value)
        self.tmux("set", "-g", "remain-on-exit", "off")
        self.tmux("new-window", "-d", "-t", f"{SESSION}:1", "-c", str(self.home.cwd), *window1)

    def attach(self) -> PiSession:
        """A user's client: the tmux client in a PTY (pyte screen, raw bytes, keys)."""
        env = {k: v for k, v in self.env.items() if not k.startswith("TMUX")}
        env["TERM"] = "xterm-256color"
        client = PiSession(
            ["tmux", "-L", self.name, "attach-session", "-t", SESSION],
            env=env,
            cwd=self.home.cwd,
            log_path=self.log_path,
            dimensions=(self.rows, self.cols),
        )
        self.clients.append(client)
        return client

    def user_clients(self) -> list[str]:
        out = self.tmux("list-clients", "-F", "#{client_name} #{client_control_mode}")
        return [line.split()[0] for line in out.splitlines() if line.endswith(" 0")]

    def wait_clients(self, n: int, timeout: float = 10.0) -> list[str]:
        def listed() -> tuple[list[str]] | None:
            names = self.user_clients()
            return (names,) if len(names) == n else None  # a tuple: true even for n == 0

        return wait_until(listed, timeout, f"{n} user client(s)",
                          detail=lambda: f"tmux lists {self.user_clients()}")[0]  # fmt: skip

    def messages(self) -> list[str]:
        """tmux's message log: ``<client> message: <text>`` lines (commands left out); it can
        only be read with a client attached (none: empty)."""
        if not self.user_clients():
            return []
        out = self.tmux("show-messages")
        return [line for line in out.splitlines() if " message: " in line]

    def cue_messages(self) -> list[str]:
        return [line for line in self.messages() if "message: Pi" in line]

    def window_flags(self) -> dict[str, tuple[bool, str]]:
        """window index -> (bell flag, window_flags as the status line shows them)."""
        out = self.tmux(
            "list-windows",
            "-t",
            SESSION,
            "-F",
            "#{window_index}\t#{window_bell_flag}\t#{window_flags}",
        )
        flags: dict[str, tuple[bool, str]] = {}
        for line in out.splitlines():
            index, bell, shown = [*line.split("\t"), "", ""][:3]
            flags[index] = (bell == "1", shown)
        return flags

    def capture(self, target: str) -> list[str]:
        out = self.tmux("capture-pane", "-p", "-t", target)
        return [line.rstrip() for line in out.split("\n")][: self.rows - 1]

    def pane_pid(self, target: str) -> int:
        return int(self.tmux("display-message", "-p", "-t", target, "#{pane_pid}").strip())

    def close(self) -> None:
        self.tmux("kill-server", check=False)  # clients see EOF and end by themselves
        with contextlib.suppress(TimeoutError):  # the rest are closed below
            wait_until(lambda: all(c.eof for c in self.clients), 5, "the clients to see EOF")
        for client in self.clients:
            client.close()
