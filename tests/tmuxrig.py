"""A real tmux server on a private socket, with a client attached through a pexpect PTY that
plays the user's terminal (the "outer terminal"), and real Pi under cuewrap in window 0.

    rig = TmuxRig(pi_home, options={"focus-events": "on"})   # server options set before attach
    rig.start(argv)                   # window 0 runs argv (cuewrap … pi …); window 1 a sleep
    client = rig.attach()             # a PiSession whose terminal is the tmux client's
    rig.tmux("select-window", "-t", "work:1")
    rig.messages()                    # tmux show-messages: the status-line messages shown

Everything is killed at ``close()`` (the server with ``kill-server``, the clients' trees).

Fixture (registered by tests/conftest.py): ``tmux_scene(server_options=None,
global_options=None, window1=None) -> Scene``: such a rig running ``cuewrap pi`` with the test
extension (window 1 runs ``window1``, by default a sleep), a client attached and Pi ready,
cuewrap watching tmux; closed at teardown.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from pirig import TEST_EXT, PiHome, PiSession, pi_argv
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


class Scene:
    """The rig plus the cuewrap decision log of window 0."""

    def __init__(self, rig: TmuxRig, client: PiSession) -> None:
        self.rig = rig
        self.client = client

    def log(self, kind: str | None = None) -> list[dict[str, Any]]:
        return self.client.log_records(kind)

    def why(self) -> str:
        kinds = [
            {
                k: v
                for k, v in r.items()
                if k in ("kind", "type", "state", "presence", "via", "channel", "reason", "cue")
            }
            for r in self.log()
            if r.get("kind") not in ("child_mode", "child_title")
        ][-40:]
        return (
            f"log: {kinds}\nmessages: {self.rig.messages()[-5:]}\n"
            f"flags: {self.rig.window_flags()}\n{self.client.dump()}"
        )

    def wait(self, check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
        return wait_until(check, timeout, what, detail=self.why)

    def presence(self, state: str, after: int = 0) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            recs = [r for r in self.log("presence") if r.get("presence") == state]
            return recs[-1] if len(recs) > after else None

        return self.wait(check, f"presence {state}")  # type: ignore[no-any-return]

    def settled(self, count: int = 1) -> None:
        self.wait(
            lambda: len([r for r in self.log("fact") if r.get("type") == "AgentSettled"]) >= count,
            f"AgentSettled #{count}",
        )

    def returned(self, after: int = 0) -> None:
        """The user counts as back (presence focused or unknown after being away)."""
        self.wait(
            lambda: (
                len([r for r in self.log("invalidated") if r.get("reason") == "user returned"])
                > after
            ),
            "the user's return",
        )

    def cues(self) -> list[dict[str, Any]]:
        return self.log("cue")

    def deliveries(self, channel: str) -> list[dict[str, Any]]:
        return [r for r in self.log("delivery") if r.get("channel") == channel]

    def select(self, window: int) -> None:
        self.rig.tmux("select-window", "-t", f"{SESSION}:{window}")


@pytest.fixture
def tmux_scene(pi_home: PiHome) -> Iterator[Callable[..., Scene]]:
    rigs: list[TmuxRig] = []

    def make(
        server_options: dict[str, str] | None = None,
        global_options: dict[str, str] | None = None,
        window1: Sequence[str] = ("sleep", "100000"),
    ) -> Scene:
        rig = TmuxRig(pi_home, server_options=server_options, global_options=global_options)
        rigs.append(rig)
        argv = pi_argv(["-e", str(TEST_EXT)], wrap=True, log_path=rig.log_path)
        rig.start(argv, window1=window1)
        client = rig.attach()
        client.wait_ready(timeout=30)
        scene = Scene(rig, client)
        scene.wait(
            lambda: any(r.get("state") == "watching" for r in scene.log("tmux")),
            "cuewrap watching tmux",
        )
        return scene

    yield make
    for rig in rigs:
        rig.close()
