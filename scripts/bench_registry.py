"""The session registry (docs/sessions.md): how long `cuewrap ls` and `cuewrap ls --json` take
with N real sessions running (goal: under 150 ms with 20), and how soon a state change is
visible to a reader (goal: within 100 ms): from the BEL written to the child's terminal to the
entry saying needs-input, once per session; and inside tmux, from the BEL to the window option
@cuewrap_state saying so (10 windows of a private tmux server, when tmux is there). N real
`cuewrap -- python child` sessions in PTYs, a private runtime and temp directory (no Pi needed).

    scripts/bench_registry [SESSIONS] [LS_RUNS]      (default 20 and 20)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import pexpect

from cuewrap.sessions.registry import read_sessions

CHILD = """
    import sys, termios
    a = termios.tcgetattr(0); a[3] &= ~termios.ECHO; termios.tcsetattr(0, termios.TCSANOW, a)
    print("READY", flush=True)
    for line in sys.stdin:
        if line.strip() == "bell":
            sys.stdout.write("\\a"); sys.stdout.flush()
"""  # no echo; "bell" rings


def fig(name: str, xs: list[float], goal: str) -> None:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(len(xs) * 0.95))]
    print(
        f"{name:<44} median {statistics.median(xs):6.1f} ms  p95 {p95:6.1f} ms"
        f"  max {xs[-1]:6.1f} ms   goal {goal}"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    root = tempfile.mkdtemp(prefix="cuewrap-bench-registry-")
    run, tmp = os.path.join(root, "run"), os.path.join(root, "tmp")
    os.mkdir(run, 0o700)
    os.mkdir(tmp)
    child = os.path.join(root, "child.py")
    with open(child, "w") as fh:
        fh.write(textwrap.dedent(CHILD))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    env.update(
        XDG_RUNTIME_DIR=run,
        TMPDIR=tmp,
        TERM="xterm-256color",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_GENERIC_QUIET_AFTER="0",
    )
    sessions: list[pexpect.spawn] = []
    try:
        for _ in range(n):
            p = pexpect.spawn(
                sys.executable, ["-m", "cuewrap", "--", sys.executable, child], env=env, timeout=30
            )
            p.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default
            p.expect("READY")
            sessions.append(p)
        deadline = time.monotonic() + 30
        while len(read_sessions(env)) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        listed = read_sessions(env)
        assert len(listed) == n, f"{len(listed)} of {n} sessions listed"

        def timed(args: list[str]) -> tuple[list[float], bytes]:
            out = []
            stdout = b""
            for _ in range(runs):
                t0 = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "cuewrap", *args],
                    env=env,
                    capture_output=True,
                    check=True,
                )
                out.append((time.perf_counter() - t0) * 1000)
                stdout = done.stdout
            return out, stdout

        ls_ms, table = timed(["ls"])
        json_ms, _ = timed(["ls", "--json"])
        assert table.count(b"\n") == n + 1, table
        read_ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            read_sessions(env)
            read_ms.append((time.perf_counter() - t0) * 1000)

        # a state change, as a reader sees it: BEL written -> the entry says needs-input
        latency = []
        for p in sessions:
            pid = p.pid
            t0 = time.perf_counter()
            p.sendline("bell")
            while True:
                row = next(r for r in read_sessions(env, clean=False) if r["pid"] == pid)
                if row["state"] == "needs-input":
                    break
                if time.perf_counter() - t0 > 5:
                    raise SystemExit(f"session {pid}: no needs-input after 5 s")
                time.sleep(0.001)
            latency.append((time.perf_counter() - t0) * 1000)

        tmux_ms = in_tmux(env, child) if shutil.which("tmux") else []

        print(f"registry with {n} running sessions, {runs} runs each (cpus: {os.cpu_count()})")
        fig("`cuewrap ls` (a new process, table)", ls_ms, "< 150 ms")
        fig("`cuewrap ls --json` (a new process)", json_ms, "< 150 ms")
        fig("read_sessions() in process", read_ms, "-")
        fig(f"state change visible to a reader ({n} BELs)", latency, "< 100 ms")
        if tmux_ms:
            fig("... in tmux's @cuewrap_state (10 BELs)", tmux_ms, "-")
    finally:
        for p in sessions:
            p.terminate(force=True)


def in_tmux(env: dict[str, str], child: str) -> list[float]:
    """Inside tmux: the BEL -> the window's @cuewrap_state (10 windows, one BEL each)."""
    name = f"cuewrap-bench-{os.getpid()}"
    base = ["tmux", "-L", name, "-f", "/dev/null"]

    def t(*a: str) -> str:
        return subprocess.run([*base, *a], env=env, capture_output=True, text=True).stdout

    def opt(w: int) -> str:
        return t("show-options", "-w", "-v", "-t", f"b:{w}", "@cuewrap_state").strip()

    cmd = [sys.executable, "-m", "cuewrap", "--", sys.executable, child]
    out = []
    try:
        t("new-session", "-d", "-s", "b", "-x", "100", "-y", "30", *cmd)
        for w in range(1, 10):
            t("new-window", "-d", "-t", f"b:{w}", *cmd)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(opt(w) != "working" for w in range(10)):
            time.sleep(0.05)
        for w in range(10):
            t0 = time.perf_counter()
            t("send-keys", "-t", f"b:{w}", "bell", "Enter")
            while opt(w) != "needs-input":
                if time.perf_counter() - t0 > 5:
                    raise SystemExit(f"window {w}: no needs-input after 5 s")
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        t("kill-server")
    return out


if __name__ == "__main__":
    main()
