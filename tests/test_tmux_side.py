"""cuewrap's tmux side (``cuewrap.tmux.side.TmuxSide``) on its own loop against a real tmux
server with a user's client attached through a PTY: no Pi, so that a test can count what the
side asks and when.

The side keeps no control-mode client (tmux up to 3.5a crashes when a notification meets one
that is still identifying: docs/tmux-and-ssh.md#why-no-control-client). It asks tmux only when
something depends on the answer: while the session waits on a change of presence that no focus
report would tell (``watch``), every ``POLL`` seconds; nothing while nothing waits.
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
from cuewrap.tmux import side as side_module
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
        # the user's client is attached before the side first asks (a loaded machine may take
        # a while to start it; asked before, tmux rightly says no client shows the pane)
        wait_until(lambda: self.tmux("list-clients", "-F", "#{client_tty}"), 10, "the client")
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
        self.told: list[str] = []  # the presence the side told, in order
        self.side = TmuxSide(
            self.loop,
            env,
            on_presence=lambda merged, via: self.told.append(merged),
            inject=lambda data: None,
            is_eligible=lambda eligibility: True,
            record=lambda cue, channel, state, reason: None,
            log=lambda kind, **fields: self.log.append((kind, fields)),
            reaper=self.reaper,
        )
        self.sleep = turning(self.loop)

    def state(self) -> str | None:
        return self.side.view.state if self.side.view is not None else None

    def why(self) -> str:
        return (
            f"asked {self.side.asked}, view {self.state()}, told {self.told}, log {self.log[-8:]}"
        )

    def close(self) -> None:
        self.side.close()
        self.reaper.close()
        self.loop.close()


@pytest.fixture
def watched(server: Server) -> Iterator[Watched]:
    w = Watched(server.start())
    yield w
    w.close()


def test_no_control_client_is_ever_started(
    server: Server, watched: Watched, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the side does (start, poll, focus-events turned on and off, deliveries'
    questions), every tmux it runs is an ordinary command client: none is ``tmux -C``, and
    tmux lists no control client at any time."""
    w = watched
    side, sleep, why, state = w.side, w.sleep, w.why, w.state
    argvs: list[list[str]] = []
    real_spawn = control._spawn

    def spawn(argv: list[str], env: Any, stdin: int) -> Any:
        argvs.append(argv)
        return real_spawn(argv, env, stdin)

    monkeypatch.setattr(control, "_spawn", spawn)
    controls: list[str] = []

    def control_clients() -> bool:
        out = server.tmux("list-clients", "-F", "#{client_control_mode}")
        controls.extend(c for c in out.split() if c == "1")
        return True

    assert side.start()
    wait_until(lambda: state() == "active" and not side.busy, 10, "the first view",
               sleep=sleep, detail=why)  # fmt: skip
    side.watch(True)
    for option in ("on", "off", "on", "off"):
        server.tmux("set", "-s", "focus-events", option)
        server.tmux("select-window", "-t", "work:1")
        side.focus("away")
        sleep(0.3)
        control_clients()
        server.tmux("select-window", "-t", "work:0")
        side.keystroke()
        sleep(0.3)
        control_clients()
    assert controls == [], "a control client was listed"
    assert argvs and all("-C" not in argv for argv in argvs), argvs
    assert side.asked >= 5, why()


def test_a_switch_is_seen_by_polling_only_while_something_waits(
    server: Server, watched: Watched
) -> None:
    """tmux's default ``focus-events off``: no focus report tells a window switch. While the
    session waits on a change of presence (a mark stands, a wait is pending), the side asks
    tmux every POLL seconds and sees the switch; while nothing waits it asks nothing."""
    w = watched
    side, sleep, why, state = w.side, w.sleep, w.why, w.state
    assert side.start()
    wait_until(lambda: state() == "active" and not side.busy, 10, "the first view",
               sleep=sleep, detail=why)  # fmt: skip
    # nothing waits: a switch is not asked about
    asked = side.asked
    server.tmux("select-window", "-t", "work:1")
    sleep(side_module.POLL * 2.5)
    assert side.asked == asked, why()
    assert state() == "active", "nothing waited, so nothing asked: the old view stands"
    # a mark stands: the side polls, and the switch back and forth is seen
    side.watch(True)
    wait_until(lambda: state() == "hidden", side_module.POLL * 4, "the switch away, polled",
               sleep=sleep, detail=why)  # fmt: skip
    assert w.told[-1] == "away", why()
    server.tmux("select-window", "-t", "work:0")
    wait_until(lambda: state() == "active", side_module.POLL * 4, "the return, polled",
               sleep=sleep, detail=why)  # fmt: skip
    # nothing waits again: the polling stops
    side.watch(False)
    sleep(0.2)
    asked = side.asked
    sleep(side_module.POLL * 2.5)
    assert side.asked == asked, why()


def test_with_focus_events_on_the_reports_tell_and_nothing_polls(
    server: Server, watched: Watched
) -> None:
    """With ``focus-events on`` tmux reports every switch to the pane itself: the side asks at
    each report, and does not poll even while something waits."""
    w = watched
    side, sleep, why, state = w.side, w.sleep, w.why, w.state
    server.tmux("set", "-s", "focus-events", "on")
    assert side.start()
    wait_until(lambda: state() == "active" and not side.busy, 10, "the first view",
               sleep=sleep, detail=why)  # fmt: skip
    assert side.view is not None and side.view.focus_events
    side.watch(True)
    sleep(0.1)
    asked = side.asked
    sleep(side_module.POLL * 2.5)
    assert side.asked == asked, why()
    # a focus report (as tmux sends the pane on a switch) makes it ask
    server.tmux("select-window", "-t", "work:1")
    side.focus("away")
    wait_until(lambda: state() == "hidden", 10, "the view after the report", sleep=sleep,
               detail=why)  # fmt: skip
    assert side.asked == asked + 1, why()


def test_stale_says_when_a_view_is_too_old_to_decide_by(server: Server, watched: Watched) -> None:
    w = watched
    side, sleep, why, state = w.side, w.sleep, w.why, w.state
    assert side.stale  # nothing asked yet
    assert side.start()
    wait_until(lambda: state() == "active" and not side.busy, 10, "the first view",
               sleep=sleep, detail=why)  # fmt: skip
    assert not side.stale, why()
    sleep(side_module.FRESH + 0.1)
    assert side.stale, why()


def test_when_answered_waits_for_the_question_in_flight_and_asks_nothing(
    server: Server, watched: Watched
) -> None:
    """What /cue's page waits on (wiring/cuepage.py): the answer to the question in flight,
    at once when none is; it never asks tmux itself."""
    w = watched
    side, sleep, why = w.side, w.sleep, w.why
    got: list[object] = []
    side.when_answered(got.append)
    assert got == [None] and side.asked == 0  # nothing in flight, nothing asked
    assert side.start() and side.busy
    side.when_answered(got.append)
    assert got == [None] and side.asked == 1
    wait_until(lambda: len(got) == 2, 10, "the answer", sleep=sleep, detail=why)
    assert got[1] is side.view and side.view is not None and side.asked == 1, why()
    side.when_answered(got.append)
    assert got[2] is side.view and side.asked == 1
