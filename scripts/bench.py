"""Launcher benchmarks: throughput, keystroke latency, idle CPU, start-up time.

Every relay under test runs inside the same outer PTY, drained by this process, so the
figures compare like with like; ratios are measured side by side in one run.
"""

from __future__ import annotations

import argparse
import compileall
import io
import os
import pathlib
import pty
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable

from install_copy import install_copy  # scripts/install_copy.py (this script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = sys.executable
CUEWRAP = [PY, "-m", "cuewrap", "--"]

MINIMAL_RELAY = r"""
import os, pty, select, sys, tty, termios
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
old = termios.tcgetattr(0)
tty.setraw(0)
try:
    fds = [0, fd]
    while True:
        r, _, _ = select.select(fds, [], [])
        if fd in r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            os.write(1, data)
        if 0 in r:
            data = os.read(0, 65536)
            if not data:
                fds.remove(0)
            else:
                os.write(fd, data)
finally:
    termios.tcsetattr(0, termios.TCSADRAIN, old)
os.waitpid(pid, 0)
"""

ECHO_CHILD = r"""
import os, sys, tty
tty.setraw(0)
os.write(1, b"READY\n")
while True:
    d = os.read(0, 1024)
    if not d or d == b"q":
        break
    os.write(1, d)
"""


def run_in_pty(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env or os.environ)
    return pid, fd


def drain(fd: int) -> int:
    total = 0
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        total += len(data)
    return total


def make_file(path: str, mb: int, tui: bool) -> None:
    """Plain: 100-byte text lines. TUI: Pi-like full frames (synchronized output, cursor
    moves, erase-line, SGR colours, box drawing and spinner characters), ~5 KB per frame."""
    if tui:
        rows = []
        for r in range(1, 41):
            rows.append(
                b"\x1b[%d;1H\x1b[2K\x1b[38;5;244m\xe2\x94\x80\xe2\x94\x80 \xe2\xa0\x8b Working"
                b"\x1b[0m \x1b[1;32mok\x1b[0m caf\xc3\xa9 \x1b[3mtranscript line %d of the"
                b" session\x1b[23m \x1b[38;2;120;130;140mdim text here\x1b[39m" % (r, r)
            )
        frame = b"\x1b[?2026h" + b"".join(rows) + b"\x1b[?25l\x1b[?2026l"
        block = frame * ((1 << 20) // len(frame) + 1)
    else:
        line = b"The quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz."
        line += b"\r\n"
        block = line * ((1 << 20) // len(line) + 1)
    with open(path, "wb") as fh:
        written = 0
        while written < mb << 20:
            fh.write(block)
            written += len(block)


def throughput(label: str, argv: list[str], size: int) -> float:
    """MB/s from the first byte to the last: start-up (cuewrap imports its cue side while the
    child starts) is measured separately, by bench_startup."""
    env = dict(os.environ, TERM="xterm-256color")
    pid, fd = run_in_pty(argv, env)
    total = 0
    t_first = t_last = 0.0
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            break
        if not data:
            break
        t_last = time.perf_counter()
        if not total:
            t_first = t_last
        total += len(data)
    os.waitpid(pid, 0)
    os.close(fd)
    if total < size:
        print(f"  warning: {label} delivered {total} of {size} bytes", file=sys.stderr)
    return total / max(t_last - t_first, 1e-9) / 1e6


def bench_throughput(mb: int, rounds: int) -> None:
    tmp = tempfile.mkdtemp(prefix="cuewrap-bench-")
    try:
        for kind in ("plain", "tui"):
            path = os.path.join(tmp, kind)
            make_file(path, mb, kind == "tui")
            size = os.path.getsize(path)
            relays = {
                "direct cat": ["cat", path],
                "minimal relay": [PY, "-c", MINIMAL_RELAY, "cat", path],
                "cuewrap": [*CUEWRAP, "cat", path],
            }
            if shutil.which("script"):
                relays["script(1)"] = ["script", "-q", "-c", f"cat {path}", "/dev/null"]
            results: dict[str, list[float]] = {k: [] for k in relays}
            for _ in range(rounds):  # interleaved, so drift hits every relay alike
                for name, argv in relays.items():
                    results[name].append(throughput(name, argv, size))
            med = {k: statistics.median(v) for k, v in results.items()}
            print(f"throughput, {size >> 20} MB {kind} output, median of {rounds} (MB/s):")
            for name, v in med.items():
                ratio = v / med["minimal relay"]
                print(f"  {name:14s} {v:7.1f}   x{ratio:.3f} of minimal relay")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def latency(argv: list[str], samples: int) -> list[float]:
    env = dict(os.environ, TERM="xterm-256color")
    pid, fd = run_in_pty(argv, env)
    buf = b""
    while b"READY" not in buf:
        buf += os.read(fd, 4096)
    time.sleep(0.3)
    # swallow cuewrap's setup bytes
    while select.select([fd], [], [], 0.1)[0]:
        os.read(fd, 4096)
    out = []
    for i in range(samples):
        ch = b"abcdefghijklmnoprstuvwxyz"[i % 25 : i % 25 + 1]  # no "q": it ends the child
        t0 = time.perf_counter()
        os.write(fd, ch)
        got = b""
        while ch not in got:
            got += os.read(fd, 4096)
        out.append(time.perf_counter() - t0)
    os.write(fd, b"q")
    drain(fd)
    os.waitpid(pid, 0)
    os.close(fd)
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p))]


def bench_latency(samples: int, rounds: int = 4) -> None:
    """Keystroke round trip, each relay run ``rounds`` times interleaved (drift hits all)."""
    print(f"keystroke round trip over {samples} samples, {rounds} interleaved runs (µs):")
    relays = {
        "direct": [PY, "-c", ECHO_CHILD],
        "minimal relay": [PY, "-c", MINIMAL_RELAY, PY, "-c", ECHO_CHILD],
        "cuewrap": [*CUEWRAP, PY, "-c", ECHO_CHILD],
    }
    lat: dict[str, list[float]] = {k: [] for k in relays}
    for _ in range(rounds):
        for name, argv in relays.items():
            lat[name] += latency(argv, max(1, samples // rounds))
    res = {k: (pct(v, 0.5) * 1e6, pct(v, 0.99) * 1e6) for k, v in lat.items()}
    for name, (p50, p99) in res.items():
        ratio = p50 / res["minimal relay"][0]
        print(f"  {name:14s} p50 {p50:7.0f}  p99 {p99:7.0f}   p50 x{ratio:.2f} of minimal relay")
    print(
        f"  added by cuewrap vs direct: p50 {res['cuewrap'][0] - res['direct'][0]:+.0f} µs;"
        f" vs minimal relay: p50 {res['cuewrap'][0] - res['minimal relay'][0]:+.0f} µs"
    )


TUI_CHILD = r"""
import os, sys, time
# a TUI's redraws: 1-2 KB frames (synchronized output, cursor moves, colours) every few ms
seconds, every = float(sys.argv[1]), float(sys.argv[2])
status = os.environ.get("BENCH_STATUS")
if status:  # what Pi says at start (its OSC 7501 report): the screen source is not needed
    os.write(1, b"\x1b]7501;state=idle:app=pi\x1b\\")
rows = [
    b"\x1b[%d;1H\x1b[2K\x1b[38;5;244m\xe2\x94\x80\xe2\x94\x80 \xe2\xa0\x8b Working\x1b[0m"
    b" \x1b[1;32mok\x1b[0m line %d \x1b[38;2;120;130;140mdim\x1b[39m" % (r, r)
    for r in range(1, 41)
]
frames = [b"\x1b[?2026h\x1b[?25l" + b"".join(rows[i:i + n]) + b"\x1b[?2026l"
          for i, n in ((0, 14), (10, 22), (5, 18), (20, 16))]
end = time.monotonic() + seconds
i = 0
while time.monotonic() < end:
    os.write(1, frames[i % 4])
    i += 1
    time.sleep(every)
os.write(1, b"\r\nDONE\r\n")
"""


def cpu_per_mb(
    argv: list[str],
    env: dict[str, str],
    seconds: float,
    extra: Callable[[], list[int]] | None = None,
) -> tuple[float, float]:
    """CPU time of the relay's own processes (not the child) between 1 s after the start and
    0.5 s before the child stops writing: (ms per second, ms per MB relayed). ``extra``: more
    processes of the relay (tmux's server), asked for at the first mark."""
    pid, fd = run_in_pty(argv, env)
    t0 = time.monotonic()
    total = 0
    marks: list[tuple[float, int, float]] = []
    plan = [t0 + 1.0, t0 + seconds - 0.5]
    pids = [pid]
    while True:
        left = (plan[0] - time.monotonic()) if plan else None
        ready = select.select([fd], [], [], max(0.0, left) if left is not None else None)[0]
        if plan and time.monotonic() >= plan[0]:
            if not marks and extra is not None:
                pids += extra()
            marks.append((cpu_ns(pids), total, time.monotonic()))
            plan.pop(0)
        if ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                break
            if not data:
                break
            total += len(data)
    os.waitpid(pid, 0)
    os.close(fd)
    (c0, b0, t0), (c1, b1, t1) = marks
    ms = (c1 - c0) / 1e6
    return ms / (t1 - t0), ms / max((b1 - b0) / 1e6, 1e-9)


def tmux_relay(child: list[str]) -> tuple[list[str], Callable[[], list[int]], Callable[[], None]]:
    """tmux (a private server, the client attached in the PTY) running ``child``."""
    name = f"cuewrap-bench-{os.getpid()}"
    base = ["tmux", "-L", name, "-f", "/dev/null"]

    def server() -> list[int]:
        out = subprocess.run([*base, "display", "-p", "#{pid}"], capture_output=True, text=True)
        return [int(out.stdout)] if out.stdout.strip().isdigit() else []

    def stop() -> None:
        subprocess.run([*base, "kill-server"], capture_output=True)
        tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
        try:  # the server leaves its socket behind when its last session ended by itself
            os.unlink(os.path.join(tmpdir, f"tmux-{os.getuid()}", name))
        except OSError:
            pass

    return [*base, "new-session", shlex.join(child)], server, stop


def bench_cpu(seconds: float, rounds: int) -> None:
    """CPU when the child writes like a TUI (~1.5 KB every 2.5 ms, ~0.6 MB/s): the per-chunk
    overhead (the loop, the filters, timers), side by side, interleaved. The child writes on
    a clock, so every wrapper relays the same flood: CPU per second compares them all (tmux
    re-renders, so its bytes out are not the child's), CPU per MB the pass-through ones."""
    child = [PY, "-c", TUI_CHILD, str(seconds), "0.0025"]
    with tempfile.TemporaryDirectory() as bindir:
        fake = os.path.join(bindir, "pi")  # a stand-in pi that draws like one
        with open(fake, "w") as fh:
            fh.write(f"#!/bin/sh\nBENCH_STATUS=1 exec {shlex.join(child)}\n")
        os.chmod(fake, 0o755)
        env = dict(os.environ, TERM="xterm-256color", PATH=f"{bindir}:{os.environ['PATH']}")
        env = {k: v for k, v in env.items() if not k.startswith("TMUX")}
        relays: dict[str, tuple[list[str], Callable[[], list[int]] | None]] = {
            "minimal relay": ([PY, "-c", MINIMAL_RELAY, *child], None),
            "cuewrap --": ([*CUEWRAP, *child], None),
            "cuewrap pi": ([*CUEWRAP[:-1], "pi"], None),
        }
        if shutil.which("script"):
            relays["script(1)"] = (["script", "-q", "-c", shlex.join(child), "/dev/null"], None)
        stop_tmux = None
        if shutil.which("tmux"):
            argv, server, stop_tmux = tmux_relay(child)
            relays["tmux"] = (argv, server)
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in relays}
        try:
            for _ in range(rounds):
                for name, (argv, extra) in relays.items():
                    results[name].append(cpu_per_mb(argv, env, seconds, extra))
        finally:
            if stop_tmux is not None:
                stop_tmux()
    per_s = {k: statistics.median(v[0] for v in vs) for k, vs in results.items()}
    per_mb = {k: statistics.median(v[1] for v in vs) for k, vs in results.items()}
    base = per_s["minimal relay"]
    print(f"CPU, TUI-like writes, {seconds:.0f} s x {rounds} interleaved (CPU ms per s, per MB):")
    for name, v in per_s.items():
        mb = f"{per_mb[name]:6.2f}" if name != "tmux" else "     -"
        print(f"  {name:14s} {v:6.2f} /s {mb} /MB   x{v / base:.2f} of minimal relay")
    if "tmux" in per_s:
        for name in ("cuewrap --", "cuewrap pi"):
            print(f"  {name} / tmux: x{per_s[name] / per_s['tmux']:.2f}")


def cuewrap_copy(dest: str, rev: str | None) -> str:
    """A copy of the ``cuewrap`` package in ``dest`` (made): the work tree's (``rev`` None) or
    ``rev``'s from git (``git archive``, the work tree untouched), bytecode compiled. Returns
    ``dest``, for PYTHONPATH: both sides of a comparison are loaded alike, from a copy."""
    os.makedirs(dest)
    package = os.path.join(dest, "cuewrap")
    if rev is None:
        shutil.copytree(
            os.path.join(ROOT, "cuewrap"), package, ignore=shutil.ignore_patterns("__pycache__")
        )
    else:
        archive = subprocess.run(
            ["git", "-C", ROOT, "archive", "--format=tar", rev, "--", "cuewrap"],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                name = os.path.normpath(member.name)
                if not member.isfile() or not name.startswith("cuewrap" + os.sep):
                    continue
                fh = tar.extractfile(member)
                assert fh is not None
                os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
                with open(os.path.join(dest, name), "wb") as out:
                    out.write(fh.read())
        if not os.path.isfile(os.path.join(package, "__main__.py")):
            raise SystemExit(f"--against {rev}: no cuewrap/__main__.py there")
    compileall.compile_dir(package, quiet=1)
    return dest


def imported_from(
    python: str, env: dict[str, str] | None, cwd: os.PathLike[str] | str, path: str, what: str
) -> str:
    """The ``cuewrap/__init__.py`` that ``python`` imports (run in ``cwd`` with ``env``); the
    script ends unless it is the copy in ``path``."""
    found = subprocess.run(
        [python, "-c", "import cuewrap; print(cuewrap.__file__)"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not found.startswith(os.path.join(path, "cuewrap") + os.sep):
        raise SystemExit(f"{what}: python imports cuewrap from {found!r}, not {path}")
    return found


def git_label(rev: str) -> str:
    """``rev`` as given and the commit it names (``main (abc1234)``)."""
    out = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"--against {rev}: not a commit here ({out.stderr.strip()})")
    short = out.stdout.strip()
    return short if short.startswith(rev) or rev.startswith(short) else f"{rev} ({short})"


def worktree_label() -> str:
    head = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", ROOT, "status", "--porcelain", "--", "cuewrap"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"the work tree, {head or '?'}{' + changes' if dirty else ''}"


def tree_cpu(root: int, pi: int | None) -> dict[int, int]:
    """CPU (ns) of ``root`` and its descendants outside ``pi``'s subtree: the relay's own
    processes (cuewrap's leader and workers too), not Pi's or what Pi runs."""
    from pirig import _descendants

    skip: set[int] = set()
    if pi is not None:
        skip = {pi} | {p for p, _ in _descendants(pi)}
    pids = [root] + [p for p, _ in _descendants(root) if p not in skip]
    return {p: cpu_ns([p]) for p in pids}


def cpu_delta(before: dict[int, int], after: dict[int, int]) -> int:
    """CPU spent between two ``tree_cpu`` readings by the processes alive at both."""
    return sum(max(0, after[p] - before[p]) for p in before if p in after)


def peak_rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            found = re.search(r"VmHWM:\s+(\d+)", fh.read())
    except OSError:
        return 0
    return int(found.group(1)) if found else 0


def bench_pi(
    rounds: int,
    pi_version: str = "1.4.0",
    against: str | None = None,
    budget_watched: float = 3.0,
    budget_away: float = 2.0,
) -> str | None:
    """Real Pi answering from the local fake model (a tool's long output, then a long
    streamed answer), under the minimal relay and under ``cuewrap pi``, watched and away (the
    terminal reported its focus lost); with ``against``, also under that revision's cuewrap.
    All sessions are open at once and take their answers in turn (one answer each per round,
    the order rotated every round), so the machine's drift hits every configuration alike.
    Measured: the relay's CPU as a share of Pi's over the stretch the answer streams.
    Returns the line saying what passed the budget (percent of Pi's CPU, the medians of the
    code now), None when it holds."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))

    from fakemodel import FakeModel, text, tool_call
    from pirig import PiSession, child_pids, install_pi, make_pi_home, wrapped_pid

    # configuration: (code: "now" / "before" / "" for the minimal relay, away)
    configs: dict[str, tuple[str, bool]] = {"minimal relay": ("", False)}
    for away in (False, True):
        for code in ("now", "before") if against else ("now",):
            configs[f"{code}, {'away' if away else 'watched'}"] = (code, away)
    shares: dict[str, list[float]] = {k: [] for k in configs}
    ms: dict[str, list[float]] = {k: [] for k in configs}
    rss: dict[str, int] = {}
    sessions: dict[str, tuple[PiSession, int]] = {}
    with FakeModel() as fm, tempfile.TemporaryDirectory() as tmp:
        home = make_pi_home(pathlib.Path(tmp), fm.base_url, install_pi(pi_version))
        base_env = {k: v for k, v in home.env.items() if k != "PYTHONPATH"}
        codes = {"now": (cuewrap_copy(os.path.join(tmp, "now"), None), worktree_label())}
        if against:
            label = git_label(against)
            codes["before"] = (cuewrap_copy(os.path.join(tmp, "before"), against), label)
        envs = {code: dict(base_env, PYTHONPATH=path) for code, (path, _) in codes.items()}
        print(
            f"Pi {pi_version} streaming a tool's output and an answer, {rounds} per"
            f" configuration, taken in turn (load {os.getloadavg()[0]:.2f}); cuewrap as run:"
        )
        for code, (path, label) in codes.items():
            found = imported_from(PY, envs[code], home.cwd, path, code)
            print(f"  {code:6s} {found}  ({label})")
        try:
            for name, (code, away) in configs.items():
                argv = [PY, "-m", "cuewrap", "pi"] if code else [PY, "-c", MINIMAL_RELAY, "pi"]
                s = PiSession(
                    argv, env=envs.get(code, base_env), cwd=home.cwd, dimensions=(50, 160)
                )
                sessions[name] = (s, 0)
                s.wait_ready(timeout=60)
                pi = wrapped_pid(s.pid) if code else child_pids(s.pid)[0]
                assert pi is not None, name
                sessions[name] = (s, pi)
                if away:
                    s.send("\x1b[O")
            order = list(configs)
            for n in range(rounds):
                turn = n % len(order)
                for name in order[turn:] + order[:turn]:
                    s, pi = sessions[name]
                    words = " ".join(f"word{i % 97}" for i in range(60))
                    answer = "\n".join(f"{i}: {words}" for i in range(120)) + f"\nEND{n}X"
                    fm.push(
                        tool_call("bash", {"command": f"seq 1 20000; echo TOOL{n}"}),
                        text(answer, chunk_delay=0.002),
                    )
                    s.prompt(f"bench {n}")
                    s.wait_working(timeout=30)
                    c0, p0 = tree_cpu(s.pid, pi), cpu_ns([pi])
                    s.wait_for_screen(re.escape(f"END{n}X"), timeout=120)
                    c1, p1 = tree_cpu(s.pid, pi), cpu_ns([pi])
                    s.wait_idle(timeout=60)
                    shares[name].append(cpu_delta(c0, c1) / max(p1 - p0, 1))
                    ms[name].append(cpu_delta(c0, c1) / 1e6)
                    code = configs[name][0]
                    if code:
                        rss[code] = max(rss.get(code, 0), peak_rss_kb(s.pid))
        finally:
            for s, _ in sessions.values():
                s.close()
    med = {k: statistics.median(v) * 100 for k, v in shares.items()}
    floor = med["minimal relay"]
    print("  CPU of the relay's own processes as a share of Pi's: median (range), ms per answer")
    for name, v in shares.items():
        note = "the floor" if name == "minimal relay" else f"x{med[name] / floor:.2f} of the floor"
        print(
            f"  {name:16s} {med[name]:5.2f} % ({min(v) * 100:.2f}-{max(v) * 100:.2f})"
            f"  {statistics.median(ms[name]):6.1f} ms   {note}"
        )
    if against:
        ratios = ", ".join(
            f"{seen} x{med[f'now, {seen}'] / med[f'before, {seen}']:.3f}"
            for seen in ("watched", "away")
        )
        print(f"  now / before ({codes['before'][1]}): {ratios}")
    print(
        "  cuewrap peak RSS: "
        + ", ".join(f"{code} {kb / 1024:.1f} MB" for code, kb in rss.items())
        + (f" (x{rss['now'] / rss['before']:.3f})" if against and rss.get("before") else "")
    )
    print(f"  budget (now's median): watched {budget_watched:.1f} %, away {budget_away:.1f} %")
    passed = [
        f"{seen} {med[f'now, {seen}']:.2f} % > {budget:.1f} %"
        for seen, budget in (("watched", budget_watched), ("away", budget_away))
        if med[f"now, {seen}"] > budget
    ]
    if passed:
        return f"over budget: cuewrap pi's CPU as a share of Pi's, {'; '.join(passed)}"
    return None


CUE_CHILD = r"""
import os, tty
tty.setraw(0)
os.write(1, b"\x1b]2;child\x07READY\r\n")
while True:
    d = os.read(0, 64)
    if not d or b"q" in d:
        break
    if b"o" in d:
        os.write(1, b"output\r\n")
    if b"b" in d:
        os.write(1, b"\x07")
"""


def bench_cue(samples: int) -> None:
    """Fact to notification: generic mode, the user away (a focus-out report), the child rings
    its bell; from the BEL reaching this terminal to cuewrap's terminal notification (OSC 777)
    reaching it. Between samples the user returns and the child writes (its wait ends)."""
    env = dict(os.environ, TERM="xterm-256color")
    env = {k: v for k, v in env.items() if not k.startswith(("TMUX", "CUEWRAP_"))}
    pid, fd = run_in_pty([*CUEWRAP, PY, "-c", CUE_CHILD], env)
    buf = b""

    def wait_for(rx: re.Pattern[bytes], timeout: float) -> float | None:
        nonlocal buf
        end = time.monotonic() + timeout
        while not rx.search(buf):
            if time.monotonic() > end:
                return None
            if select.select([fd], [], [], 0.05)[0]:
                buf += os.read(fd, 65536)
        return time.perf_counter()

    wait_for(re.compile(rb"READY"), 10)
    notice = re.compile(rb"\x07.*\x1b\]777;notify;", re.S)
    lat: list[float] = []
    missed = 0
    for _ in range(samples):
        os.write(fd, b"\x1b[I")  # back
        time.sleep(0.1)
        os.write(fd, b"o")  # the child writes: its wait is over
        time.sleep(1.2)
        os.write(fd, b"\x1b[O")  # away
        time.sleep(0.15)
        buf = b""
        os.write(fd, b"b")
        t_bel = wait_for(re.compile(rb"\x07"), 5)
        t_note = wait_for(notice, 2)
        if t_bel is None or t_note is None:
            missed += 1
        else:
            lat.append(t_note - t_bel)
    os.write(fd, b"q")
    drain(fd)
    os.waitpid(pid, 0)
    os.close(fd)
    if not lat:
        print("fact -> notification: no notification seen")
        return
    print(
        f"fact -> notification (child's BEL while away -> OSC 777), {len(lat)} samples"
        f"{f', {missed} without one' if missed else ''}: p50 {pct(lat, 0.5) * 1e3:.1f} ms,"
        f" p99 {pct(lat, 0.99) * 1e3:.1f} ms"
    )


def cpu_ns(pids: list[int]) -> int:
    """CPU time (ns) of every thread of ``pids`` (/proc/PID/task/*/schedstat: exact, where
    the utime + stime ticks of /proc/PID/stat count in 10 ms steps)."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def bench_idle(seconds: float) -> None:
    pid, fd = run_in_pty([*CUEWRAP, "sleep", str(seconds + 5)])
    # a child that writes nothing: cuewrap builds its cue side 1 s after the start at the
    # latest (cuewrap/wiring/pending.py); idle is what comes after that
    time.sleep(2.5)
    while select.select([fd], [], [], 0)[0]:
        os.read(fd, 4096)
    before = cpu_ticks(pid)
    time.sleep(seconds)
    after = cpu_ticks(pid)
    os.kill(pid, signal.SIGTERM)
    drain(fd)
    os.waitpid(pid, 0)
    os.close(fd)
    print(f"idle cuewrap: {after - before} CPU ticks over {seconds:.0f} s")


def bench_startup(rounds: int) -> None:
    """Time from starting the interpreter to the child's first instruction (its exec)."""
    date = shutil.which("date")
    stamp = (
        [date, "+T%s.%N"]  # starts in about a millisecond
        if date
        else [PY, "-c", "import time,sys; sys.stdout.write('T%.6f\\n' % time.time())"]
    )

    def once(argv: list[str]) -> float:
        t0 = time.time()
        pid, fd = run_in_pty(argv)
        buf = b""
        while b"\n" not in buf.split(b"T", 1)[-1]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
        drain(fd)
        os.waitpid(pid, 0)
        os.close(fd)
        t_child = float(buf.split(b"T", 1)[1].split(b"\n")[0])
        return t_child - t0

    # cuewrap as this checkout's venv runs it (an editable install: an import hook runs at
    # every interpreter start) and as a user installs it (not editable, bytecode compiled)
    tmp = tempfile.mkdtemp()
    try:
        installed = install_copy(tmp)
        commands = {
            "editable": os.path.join(os.path.dirname(PY), "cuewrap"),
            "installed": installed,
        }
        direct = statistics.median(once(stamp) for _ in range(rounds))
        wrapped = {
            name: statistics.median(once([cmd, "--", *stamp]) for _ in range(rounds))
            for name, cmd in commands.items()
        }
        # Pi mode: the bridge channel is opened before the spawn; a stand-in `pi` stamps the time
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        fake = os.path.join(bindir, "pi")
        with open(fake, "w") as fh:
            fh.write(f"#!/bin/sh\nexec {shlex.join(stamp)}\n")
        os.chmod(fake, 0o755)
        old_path = os.environ["PATH"]
        os.environ["PATH"] = f"{bindir}:{old_path}"
        try:
            via_sh = statistics.median(once([fake]) for _ in range(rounds))
            pi_mode = {
                name: statistics.median(once([cmd, "pi"]) for _ in range(rounds))
                for name, cmd in commands.items()
            }
        finally:
            os.environ["PATH"] = old_path
        python = {"editable": PY, "installed": os.path.join(os.path.dirname(installed), "python")}
        bare = {
            name: statistics.median(
                _time(lambda py=py: subprocess.run([py, "-c", "pass"], check=True))
                for _ in range(rounds)
            )
            for name, py in python.items()
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"start-up, median of {rounds} (ms), load {os.getloadavg()[0]:.2f}:  editable  installed")
    print(f"  python -c pass                      {_pair(bare)}")
    print(f"  child's own start (direct)          {direct * 1e3:6.1f}")
    print(f"  same child under cuewrap            {_pair(wrapped)}")
    print(f"  cuewrap start -> child exec         {_pair(wrapped, minus=direct)}")
    print(f"  same, Pi mode (bridge channel)      {_pair(pi_mode, minus=via_sh)}")


def _pair(ms: dict[str, float], minus: float = 0.0) -> str:
    return f"{(ms['editable'] - minus) * 1e3:6.1f}   {(ms['installed'] - minus) * 1e3:8.1f}"


def _time(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--cpu-seconds", type=float, default=8.0)
    ap.add_argument("--pi-answers", type=int, default=3, help="answers per configuration")
    ap.add_argument("--pi-version", default="1.4.0", help="Pi's version (scripts/install-pi)")
    ap.add_argument(
        "--against",
        metavar="REV",
        help="also run REV's cuewrap (git archive into a temporary directory), in turn",
    )
    ap.add_argument(
        "--budget-watched",
        type=float,
        default=3.0,
        metavar="PCT",
        help="cuewrap's CPU while you watch, percent of Pi's (docs/benchmarks.md)",
    )
    ap.add_argument(
        "--budget-away",
        type=float,
        default=2.0,
        metavar="PCT",
        help="cuewrap's CPU while you are away, percent of Pi's",
    )
    ap.add_argument(
        "--only", choices=["throughput", "latency", "idle", "startup", "cpu", "pi", "cue"]
    )
    a = ap.parse_args()
    os.environ.pop("CUEWRAP_LOG", None)
    # an installed package has its bytecode compiled (pip does it); so should the one measured,
    # even where PYTHONDONTWRITEBYTECODE is set
    import cuewrap

    compileall.compile_dir(os.path.dirname(cuewrap.__file__), quiet=1)
    if a.only in (None, "startup"):
        bench_startup(10)
    if a.only in (None, "latency"):
        bench_latency(a.samples)
    if a.only in (None, "idle"):
        bench_idle(a.idle)
    if a.only in (None, "cpu"):
        bench_cpu(a.cpu_seconds, a.rounds)
    if a.only in (None, "throughput"):
        bench_throughput(a.mb, a.rounds)
    if a.only in (None, "cue"):
        bench_cue(30)
    if a.only in (None, "pi"):
        over = bench_pi(a.pi_answers, a.pi_version, a.against, a.budget_watched, a.budget_away)
        if over:
            sys.exit(over)  # one line on stderr, exit status 1


if __name__ == "__main__":
    main()
