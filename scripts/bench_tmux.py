"""How fast cuewrap inside tmux learns what it needs, now that it asks tmux instead of keeping a
control-mode client on the server (docs/tmux-and-ssh.md#why-no-control-client). A private tmux
server, a user's client in a PTY; no Pi needed.

- leave / back while a mark stands, tmux's defaults: cuewrap's tmux side (``TmuxSide``, on a
  loop of its own) asks every second while something waits: from ``select-window`` to the
  presence it tells;
- leave / back with ``focus-events on``: ``cuewrap -- sleep`` in window 0, tmux's own focus
  reports to the pane: from ``select-window`` to cuewrap's presence record;
- a fact held for tmux's answer: ``cuewrap -- sh -c 'sleep 0.3'`` run N times in window 0 (its
  exit's cue depends on presence): the ``waited_ms`` of each ``tmux_hold`` record;
- cuewrap's CPU ticks while idle in tmux for 10 s (nothing waits: nothing is asked).

    scripts/bench_tmux [SWITCHES]      (default 20)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pexpect

from cuewrap.loop import Loop
from cuewrap.tmux.side import POLL, TmuxSide
from cuewrap.workers import Reaper

Record = dict[str, Any]


class Server:
    """A private tmux server: window 0 runs ``window0``, window 1 a sleep; one user client."""

    def __init__(self, options: dict[str, str], window0: list[str]) -> None:
        self.name = f"cuewrap-bench-{uuid.uuid4().hex[:8]}"
        self.base = ["tmux", "-L", self.name, "-f", "/dev/null"]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
        self.env["TERM"] = "xterm-256color"
        self.t("new-session", "-d", "-s", "b", "-x", "100", "-y", "30", *window0)
        for k, v in options.items():
            self.t("set", "-s", k, v)
        self.t("new-window", "-d", "-t", "b:1", "sleep", "100000")
        self.client = pexpect.spawn(
            "tmux", ["-L", self.name, "attach", "-t", "b"], env=self.env, dimensions=(30, 100)
        )
        self.stop = False
        threading.Thread(target=self._drain, daemon=True).start()

    def t(self, *a: str) -> str:
        return subprocess.run(
            [*self.base, *a], env=self.env, check=True, capture_output=True, text=True
        ).stdout

    def _drain(self) -> None:
        while not self.stop:
            try:
                self.client.read_nonblocking(65536, timeout=0.1)
            except pexpect.TIMEOUT:
                continue
            except Exception:
                return

    def pane_env(self) -> dict[str, str]:
        fmt = "#{socket_path},#{pid},#{session_id}\t#{pane_id}"
        tmux_var, pane = self.t("display-message", "-p", "-t", "b:0", fmt).strip().split("\t")
        return {**self.env, "TMUX": tmux_var.replace(",$", ","), "TMUX_PANE": pane}

    def close(self) -> None:
        self.stop = True
        subprocess.run([*self.base, "kill-server"], capture_output=True)
        self.client.close(force=True)


def records(log: str) -> list[Record]:
    out = []
    try:
        with open(log) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def wait(pred: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.005)
    raise SystemExit(f"timed out: {what}")


def polled(switches: int) -> tuple[list[float], list[float]]:
    """tmux's defaults, a mark standing: the side polls; ms from the switch to its presence."""
    server = Server({}, ["sleep", "100000"])
    loop = Loop()
    reaper = Reaper(loop)
    told: list[tuple[float, str]] = []
    side = TmuxSide(
        loop,
        server.pane_env(),
        on_presence=lambda merged, via: told.append((time.time(), merged)),
        inject=lambda data: None,
        is_eligible=lambda eligibility: True,
        record=lambda cue, channel, state, reason: None,
        log=lambda kind, **fields: None,
        reaper=reaper,
    )
    try:
        side.start()
        while side.view is None:
            loop.run_once(max_timeout=0.01)
        side.watch(True)
        rng = random.Random(1)
        leave: list[float] = []
        back: list[float] = []
        for _ in range(switches):
            for window, into, state in ((1, leave, "away"), (0, back, "unknown")):
                # a switch comes at any moment of the polling's second
                pause = time.monotonic() + rng.uniform(0, POLL)
                while time.monotonic() < pause:
                    loop.run_once(max_timeout=0.01)
                seen = len(told)
                t0 = time.time()
                server.t("select-window", "-t", f"b:{window}")
                end = time.monotonic() + 10
                while not (len(told) > seen and told[-1][1] == state):
                    if time.monotonic() > end:
                        raise SystemExit(f"polled: no {state} within 10 s")
                    loop.run_once(max_timeout=0.01)
                into.append((told[-1][0] - t0) * 1000)
        return leave, back
    finally:
        side.close()
        reaper.close()
        loop.close()
        server.close()


def reported(switches: int) -> tuple[list[float], list[float], int]:
    """``focus-events on``: ``cuewrap -- sleep``; ms from the switch to its presence record;
    then its CPU ticks over 10 s of nothing."""
    log = os.path.join(tempfile.mkdtemp(), "log")
    server = Server(
        {"focus-events": "on"},
        [sys.executable, "-m", "cuewrap", "--log", log, "--", "sleep", "100000"],
    )
    try:
        wait(lambda: any(r.get("kind") == "tmux_view" for r in records(log)), "cuewrap's view")
        time.sleep(0.5)

        def presences() -> list[Record]:
            return [r for r in records(log) if r.get("kind") == "presence"]

        def more_than(seen: int) -> Callable[[], bool]:
            return lambda: len(presences()) > seen

        leave: list[float] = []
        back: list[float] = []
        for _ in range(switches):
            for window, into in ((1, leave), (0, back)):
                seen = len(presences())
                t0 = time.time()
                server.t("select-window", "-t", f"b:{window}")
                wait(more_than(seen), "a presence record")
                into.append((presences()[seen]["t"] - t0) * 1000)
        pid = int(server.t("display-message", "-p", "-t", "b:0", "#{pane_pid}").strip())
        time.sleep(1.0)

        def ticks() -> int:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])

        before = ticks()
        time.sleep(10.0)
        return leave, back, ticks() - before
    finally:
        server.close()


def held(runs: int) -> list[float]:
    """``cuewrap -- sh -c 'sleep 0.3'`` in window 0, ``runs`` times: how long its exit waited
    for tmux's answer (``tmux_hold``'s ``waited_ms``)."""
    server = Server({}, ["sleep", "100000"])
    waited: list[float] = []
    try:
        tmp = tempfile.mkdtemp()
        for n in range(runs):
            log = os.path.join(tmp, f"log{n}")
            line = f"{sys.executable} -m cuewrap --log {log} -- sh -c 'echo go; sleep 0.3'"
            server.t("respawn-pane", "-k", "-t", "b:0", line)

            def hold(log: str = log) -> list[Record]:
                return [r for r in records(log) if r.get("kind") == "tmux_hold"]

            def some(log: str = log) -> bool:
                return bool(hold(log))

            wait(some, f"run {n}'s tmux_hold record")
            waited.append(float(hold()[0]["waited_ms"]))
        return waited
    finally:
        server.close()


def fmt(xs: list[float]) -> str:
    return f"p50 {statistics.median(xs):6.1f} ms  max {max(xs):6.1f} ms"


def main() -> None:
    switches = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    day = time.strftime("%Y-%m-%d")
    print(f"cuewrap inside {version}, {switches} switches each way, {day}")
    leave, back = polled(switches)
    print(f"  {'defaults, a mark standing (polled)':40s} leave: {fmt(leave)} | back: {fmt(back)}")
    leave, back, idle = reported(switches)
    print(f"  {'focus-events on (tmux reports)':40s} leave: {fmt(leave)} | back: {fmt(back)}")
    print(f"  {'idle, nothing waiting':40s} {idle} CPU ticks in 10 s")
    waited = held(max(5, switches // 2))
    print(f"  {'a fact held for tmux answer':40s} {fmt(waited)} ({len(waited)} runs)")


if __name__ == "__main__":
    main()
