"""Pi's first frame: `pi` alone; `pi` given what cuewrap gives it, without cuewrap (what Pi
itself spends on it: PI_PROGRAM_STATUS=1, `-e` the bridge extension, the bridge socket's
variables naming a socket that listens and does not accept yet, as cuewrap's until its cue side
is built); the same under a minimal Python relay run by the installed cuewrap's interpreter (the
least any Python wrapper adds: its start before Pi's exec, its relaying); `cuewrap pi` (which
asks the terminal what it is at start: XTVERSION, DA1) as this checkout's venv runs it (an
editable install: an import hook runs at every interpreter start) and as a user installs it
(scripts/install_copy.py: not editable, bytecode compiled), and installed with the query off
(CUEWRAP_DEBUG_NO_QUERY=1).

    scripts/bench_first_frame [ROUNDS=10] [PI_VERSION=1.4.0]

CUEWRAP_BENCH_OTHER=PATH/TO/cuewrap adds a row for another cuewrap (e.g. another branch's,
installed with scripts/install_copy.py), side by side.

Time from the fork to the end of Pi's first synchronized frame (`CSI ? 2026 l`) on a PTY whose
reader plays a terminal of 24x80: it answers DA1 (Pi's and cuewrap's) and XTVERSION at once.
Medians, and the ratio of the fastest quarter (the 25th percentile: less moved by load). Pi runs
against an isolated, offline home (no model: its first frame does not need one).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

from install_copy import install_copy

from cuewrap.bridge import extension_path
from cuewrap.bridge.channel import ENV_SOCKET, ENV_SUMMARY, ENV_TOKEN

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINIMAL_RELAY = """
import fcntl, os, pty, select, sys, termios, tty
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8)))
tty.setraw(0)
while True:
    for r in select.select([0, fd], [], [])[0]:
        data = os.read(r, 65536)
        os.write(fd if r == 0 else 1, data)
"""
FRAME_END = b"\x1b[?2026l"
ANSWERS = {  # query -> what a terminal answers
    b"\x1b[c": b"\x1b[?62;22c",
    b"\x1b[>0q": b"\x1bP>|bench(1)\x1b\\",
}


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` so far (ns, /proc/PID/task/*/schedstat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
            total += int(fh.read().split()[0])
    return total


def first_frame(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from the fork to the end of the first frame; the CPU the forked process (Pi
    alone, or cuewrap without Pi) used by then goes to ``CPU``."""
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        os.execvpe(argv[0], argv, env)
    buf = b""
    answered = 0
    try:
        while True:
            if not select.select([fd], [], [], 30)[0]:
                raise SystemExit(f"no first frame in 30 s: {argv}")
            data = os.read(fd, 65536)
            buf += data
            # answer every query seen so far, once each, in order (as a terminal does)
            seen = sorted((i, q) for q in ANSWERS for i in _find_all(buf, q))
            for _, q in seen[answered:]:
                os.write(fd, ANSWERS[q])
            answered = len(seen)
            if FRAME_END in buf:
                took = time.perf_counter() - t0
                CPU.append(cpu_ns(pid) / 1e9)
                return took
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


CPU: list[float] = []


def quarter(values: list[float]) -> float:
    return sorted(values)[len(values) // 4]


def _find_all(buf: bytes, needle: bytes) -> list[int]:
    out, i = [], buf.find(needle)
    while i >= 0:
        out.append(i)
        i = buf.find(needle, i + 1)
    return out


def measure(rounds: int, pi_bin: str, installed: str, extension: str) -> None:
    python = os.path.join(os.path.dirname(installed), "python")  # the installed cuewrap's
    with tempfile.TemporaryDirectory() as home:
        env = {
            "PATH": f"{pi_bin}:{os.environ['PATH']}",
            "HOME": home,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PI_CODING_AGENT_DIR": os.path.join(home, "agent"),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
        }
        os.makedirs(env["PI_CODING_AGENT_DIR"])
        editable = os.path.join(os.path.dirname(sys.executable), "cuewrap")
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listening.bind(os.path.join(home, "bridge.sock"))
        listening.listen(8)
        given = dict(env, PI_PROGRAM_STATUS="1", **{ENV_SOCKET: listening.getsockname()})
        given.update({ENV_TOKEN: "0" * 64, ENV_SUMMARY: "0"})
        relay = os.path.join(home, "relay.py")
        with open(relay, "w") as fh:
            fh.write(MINIMAL_RELAY)
        runs = {
            "pi": (["pi"], env),
            "pi + what cuewrap gives": (["pi", "-e", extension], given),
            "  same, minimal relay": ([python, relay, "pi", "-e", extension], given),
            "cuewrap pi (editable)": ([editable, "pi"], env),
            "cuewrap pi (installed)": ([installed, "pi"], env),
            "  same, no query": ([installed, "pi"], dict(env, CUEWRAP_DEBUG_NO_QUERY="1")),
        }
        other = os.environ.get("CUEWRAP_BENCH_OTHER")  # another cuewrap command, e.g. main's
        if other:
            runs["cuewrap pi (other)"] = ([other, "pi"], env)
        first_frame(["pi"], env)  # warm the caches once
        first_frame([installed, "pi"], env)
        CPU.clear()
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(rounds):  # interleaved, so a load change hits all alike
            for name, (argv, e) in runs.items():
                times[name].append(first_frame(argv, e))
                cpu[name].append(CPU.pop())
        print(f"Pi's first frame, median of {rounds} (ms), load {os.getloadavg()[0]:.2f}:")
        print("  (CPU: of the process started: Pi's own; for a wrapper its own, without Pi's;")
        print("   p25: the ratio of the fastest quarter's)")
        base = statistics.median(times["pi"])
        base25 = quarter(times["pi"])
        for name, values in times.items():
            med = statistics.median(values)
            print(
                f"  {name:<24} {med * 1e3:7.1f}   (+{(med - base) * 1e3:5.1f} vs pi, "
                f"{med / base:.2f}x; p25 {quarter(values) / base25:.2f}x)   "
                f"CPU {statistics.median(cpu[name]) * 1e3:5.1f}"
            )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    version = sys.argv[2] if len(sys.argv) > 2 else "1.4.0"
    install_pi = os.path.join(ROOT, "scripts", "install-pi")
    pi_bin = subprocess.run(
        [install_pi, version], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as where:
        measure(rounds, pi_bin, install_copy(where), extension_path())


if __name__ == "__main__":
    main()
