"""How fast cuewrap inside tmux hears that the user left or came back: from `tmux
select-window` to cuewrap's presence record, over N switches each way, with tmux's defaults
(cuewrap's control-mode client) and with focus-events on (tmux's own focus reports), side by
side; and cuewrap's CPU ticks while idle in tmux for 10 s. A private tmux server, a client in a
PTY, `cuewrap -- sleep` in window 0 (no Pi needed).

    scripts/bench_tmux [SWITCHES]      (default 20)
"""

from __future__ import annotations

import json
import os
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

Record = dict[str, Any]


def run(case: str, server: dict[str, str], switches: int) -> tuple[list[float], list[float], int]:
    tmp = tempfile.mkdtemp()
    log = os.path.join(tmp, "log")
    name = f"cuewrap-bench-{uuid.uuid4().hex[:8]}"
    base = ["tmux", "-L", name, "-f", "/dev/null"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env["TERM"] = "xterm-256color"

    def t(*a: str) -> str:
        return subprocess.run(
            [*base, *a], env=env, check=True, capture_output=True, text=True
        ).stdout

    t("new-session", "-d", "-s", "b", "-x", "100", "-y", "30",
      sys.executable, "-m", "cuewrap", "--log", log, "--", "sleep", "100000")  # fmt: skip
    for k, v in server.items():
        t("set", "-s", k, v)
    t("new-window", "-d", "-t", "b:1", "sleep", "100000")
    client = pexpect.spawn("tmux", ["-L", name, "attach", "-t", "b"], env=env, dimensions=(30, 100))
    stop = False

    def drain() -> None:
        while not stop:
            try:
                client.read_nonblocking(65536, timeout=0.1)
            except pexpect.TIMEOUT:
                continue
            except Exception:
                return

    threading.Thread(target=drain, daemon=True).start()

    def records() -> list[Record]:
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

    def presences() -> list[Record]:
        return [r for r in records() if r.get("kind") == "presence"]

    def wait(pred: Callable[[], bool], timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return
            time.sleep(0.005)
        raise SystemExit(f"{case}: timed out; last records {records()[-5:]}")

    def more_than(seen: int) -> Callable[[], bool]:
        return lambda: len(presences()) > seen

    wait(lambda: any(r.get("kind") == "tmux_view" for r in records()))
    time.sleep(0.5)
    leave: list[float] = []
    back: list[float] = []
    for _ in range(switches):
        for window, into in ((1, leave), (0, back)):
            seen = len(presences())
            t0 = time.time()
            t("select-window", "-t", f"b:{window}")
            wait(more_than(seen))
            into.append((presences()[seen]["t"] - t0) * 1000)
    pid = int(t("display-message", "-p", "-t", "b:0", "#{pane_pid}").strip())
    time.sleep(1.0)

    def ticks() -> int:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    before = ticks()
    time.sleep(10.0)
    idle = ticks() - before
    stop = True
    subprocess.run([*base, "kill-server"], capture_output=True)
    client.close(force=True)
    return leave, back, idle


def fmt(xs: list[float]) -> str:
    return f"p50 {statistics.median(xs):6.1f} ms  max {max(xs):6.1f} ms"


def main() -> None:
    switches = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    day = time.strftime("%Y-%m-%d")
    print(f"cuewrap inside tmux {version}, {switches} switches each way, {day}")
    rows = [
        ("defaults (control-mode client)", {}),
        ("focus-events on (tmux's reports)", {"focus-events": "on"}),
    ]
    results = [(label, *run(label, server, switches)) for label, server in rows]
    for label, leave, back, idle in results:
        print(f"  {label:34s} leave: {fmt(leave)} | back: {fmt(back)} | idle CPU {idle} ticks/10 s")
    ratio = statistics.median(results[0][1]) / statistics.median(results[1][1])
    print(f"  ratio defaults / focus-events on (p50 leave): {ratio:.2f}x")


if __name__ == "__main__":
    main()
