"""cuewrap's tmux side (``cuewrap.tmux.side.TmuxSide``) on its own loop against a real tmux
server with a user's client attached through a PTY: no Pi, so that a test can step in at the
one moment that matters.

When ``focus-events`` changes, cuewrap replaces its control client by one of the other kind
(docs/design.md#real-environments). Between the old client's end and tmux having the new one,
a window switch is told to neither; cuewrap must ask tmux for the pane's view again once the
new client is up, or its view stays wrong until tmux's next notification.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pirig import PiSession
from tmuxrig import need_tmux
from waiting import turning, wait_until

from cuewrap.loop import Loop
from cuewrap.tmux import control
from cuewrap.tmux.protocol import Notification
from cuewrap.tmux.side import TmuxSide
from cuewrap.workers import Reaper

pytestmark = pytest.mark.tmux


class Server:
    """A private tmux server: window 0 and window 1 each run a sleep; one user client."""

    def __init__(self, root: Path) -> None:
        need_tmux()
        self.root = root
        self.base = ["tmux", "-L", f"cuewrap-side-{uuid.uuid4().hex[:10]}", "-f", "/dev/null"]
        self.client: PiSession | None = None

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=10, check=True
        )
        return done.stdout.strip()

    def start(self) -> dict[str, str]:
        """The environment of a program in window 0's pane (``TMUX``, ``TMUX_PANE``)."""
        self.tmux("new-session", "-d", "-s", "work", "-x", "80", "-y", "24", "sleep", "100000")
        self.tmux("new-window", "-d", "-t", "work:1", "sleep", "100000")
        fmt = "#{socket_path},#{pid},#{session_id}\t#{pane_id}"
        tmux_var, pane = self.tmux("display-message", "-p", "-t", "work:0", fmt).split("\t")
        # tmux writes a tab as "_" to a client whose locale is not UTF-8: the caller's locale
        user = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
        env = {**user, "TMUX_PANE": pane}
        env["TMUX"] = tmux_var.replace(",$", ",")  # the session's number, as tmux sets it
        self.client = PiSession(
            [*self.base, "attach-session", "-t", "work"],
            env={**user, "TERM": "xterm-256color"},
            cwd=self.root,
            dimensions=(24, 80),
        )
        return env

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)
        if self.client is not None:
            self.client.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.close()


class Watched:
    """cuewrap's tmux side watching the server's session, on a loop of its own; what it says."""

    def __init__(self, env: dict[str, str]) -> None:
        self.loop = Loop()
        self.reaper = Reaper(self.loop)
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.heard: list[str] = []  # the notifications a test chooses to hear
        self.side = TmuxSide(
            self.loop,
            env,
            on_presence=lambda merged, via: None,
            inject=lambda data: None,
            is_eligible=lambda eligibility: True,
            record=lambda cue, channel, state, reason: None,
            log=lambda kind, **fields: self.log.append((kind, fields)),
            reaper=self.reaper,
        )
        self.sleep = turning(self.loop)

    def kind(self) -> str | None:
        side = self.side
        return side._client.kind if side._client is not None and side.watching else None

    def state(self) -> str | None:
        return self.side.view.state if self.side.view is not None else None

    def why(self) -> str:
        return f"kind {self.kind()}, view {self.state()}, heard {self.heard}, log {self.log[-8:]}"

    def close(self) -> None:
        self.side.close()
        self.reaper.close()
        self.loop.close()


@pytest.fixture
def watched(server: Server) -> Iterator[Watched]:
    w = Watched(server.start())
    yield w
    w.close()


def test_a_switch_while_the_control_client_changes_kind_is_seen(
    server: Server, watched: Watched, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = watched
    side, sleep, why, kind, state = w.side, w.sleep, w.why, w.kind, w.state
    heard = w.heard
    on_notification = side._on_notification

    def hear(note: Notification) -> None:
        heard.append(note.name)
        on_notification(note)

    side._on_notification = hear  # type: ignore[method-assign]
    assert side.start()
    # tmux's default focus-events off: cuewrap attaches its control client (once it knows);
    # tmux tells an attaching control client its session (%session-changed): cuewrap asks
    # once more; settled when that answer is in
    wait_until(lambda: kind() == "attach" and "session-changed" in heard and not side.busy,
               10, "an attached control client, heard and answered", sleep=sleep,
               detail=why)  # fmt: skip
    assert state() == "active", why()

    # the user switches to window 1 exactly while cuewrap replaces its control client:
    # right before the new one is spawned. The old one is still in tmux then (it leaves
    # only once the new one is up: tmux 3.3a crashed when one left as another came) and
    # tells of the switch; the new one, once up, asks again anyway
    switched: list[str] = []
    old_there: list[bool] = []
    real_start = control.ControlClient.start

    def controls() -> list[str]:
        return server.tmux("list-clients", "-F", "#{client_control_mode}").split()

    def start_after_a_switch(self: control.ControlClient) -> bool:
        if self.kind == "listen" and not switched:
            old_there.append("1" in controls())
            switched.append(server.tmux("select-window", "-t", "work:1"))
        return real_start(self)

    monkeypatch.setattr(control.ControlClient, "start", start_after_a_switch)
    server.tmux("set", "-s", "focus-events", "on")
    side.refresh()  # as a keystroke or a focus report would make it ask
    wait_until(lambda: kind() == "listen", 10, "the listening control client",
               sleep=sleep, detail=why)  # fmt: skip
    assert old_there == [True], "the old control client was still in tmux at the switch"
    # once the new one is up, the old (attached) one leaves: no control client is listed
    # (a listening one attaches to no session and is not in list-clients)
    wait_until(lambda: "1" not in controls(), 10, "the old control client to leave",
               sleep=sleep, detail=why)  # fmt: skip
    assert switched, "the switch was made while the client changed kind"
    assert server.tmux("display-message", "-p", "-t", "work", "#{window_index}") == "1"
    wait_until(lambda: state() == "hidden", 10,
               "cuewrap's view to say Pi's window is hidden", sleep=sleep,
               detail=why)  # fmt: skip


def test_a_replacing_client_that_fails_to_start_is_restarted_and_asks_again(
    server: Server, watched: Watched, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new kind of control client cannot be started the first time (tmux could not be
    run): cuewrap does not go on without one; it starts it again as it restarts one that ended,
    and the window switch made while it had none is seen once the new one is up."""
    w = watched
    side, sleep, why, kind, state, log = w.side, w.sleep, w.why, w.kind, w.state, w.log
    assert side.start()
    wait_until(lambda: kind() == "attach" and state() == "active" and not side.busy, 10,
               "an attached control client and the view", sleep=sleep, detail=why)  # fmt: skip
    failed: list[str] = []
    real_start = control.ControlClient.start

    def fail_once(self: control.ControlClient) -> bool:
        if self.kind == "listen" and not failed:
            failed.append(server.tmux("select-window", "-t", "work:1"))
            return False
        return real_start(self)

    monkeypatch.setattr(control.ControlClient, "start", fail_once)
    server.tmux("set", "-s", "focus-events", "on")
    side.refresh()
    wait_until(lambda: kind() == "listen", 10, "the listening control client, restarted",
               sleep=sleep, detail=why)  # fmt: skip
    assert failed, "the first start failed"
    assert ("tmux", {"state": "not started", "client": "listen"}) in log
    wait_until(lambda: state() == "hidden", 10, "cuewrap's view to say Pi's window is hidden",
               sleep=sleep, detail=why)  # fmt: skip
