"""Soak: hours without drift. Real Pi on the local fake model (tests/fakemodel.py) under
``cuewrap pi`` in an interactive bash, through a randomized session for N minutes: tasks with
long streamed answers and tool output, leaving and returning (focus reports), resizes, Ctrl-Z
and ``fg``, ``/new``, ``/reload`` (which reconnects the bridge). Beside it a generic-mode
``cuewrap --`` relays a known stream (escape-dense frames, UTF-8, writes cut anywhere) on
demand, resized and left/returned too; every stream is checked byte for byte.

Printed at the start (after a warm-up) and at the end, for both cuewraps: RSS, open fds,
threads, child processes (direct / all descendants) and internal-error records in the decision
log. Flat: RSS + < 3 MB, fds / threads / children unchanged, 0 internal errors, 0 bytes lost.
Exit status 0 when flat, 1 when not.

    scripts/soak [--minutes 30] [--seed N] [--pi 1.4.0|latest]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fakemodel import MODEL_ID, FakeModel, text, tool_call  # noqa: E402
from pirig import PiSession, _descendants, child_pids, install_pi, make_pi_home  # noqa: E402
from waiting import wait_until  # noqa: E402

PY = sys.executable
PROMPT = "SOAK$"
RSS_LIMIT_KB = 3 * 1024

# The generic-mode child: on "g<seed>;<n>\r" it writes n frames made from the seed, each cut
# into two writes at a point chosen by the seed (inside escape sequences and characters too),
# then "END<seed>\r\n"; "q" ends it.
STREAM_CHILD = r"""
import os, random, sys, tty
sys.path.insert(0, sys.argv[1])
from soak import stream_frames
tty.setraw(0)
os.write(1, b"READY\r\n")
buf = b""
while True:
    d = os.read(0, 4096)
    if not d:
        break
    buf += d
    while b"\r" in buf:
        line, buf = buf.split(b"\r", 1)
        if line == b"q":
            raise SystemExit(0)
        if line.startswith(b"g"):
            seed, n = (int(x) for x in line[1:].split(b";"))
            rng = random.Random(seed)
            for frame in stream_frames(seed, n):
                cut = rng.randrange(len(frame) + 1)
                os.write(1, frame[:cut])
                os.write(1, frame[cut:])
            os.write(1, b"END%d\r\n" % seed)
"""


def stream_frames(seed: int, n: int) -> list[bytes]:
    """``n`` TUI-like frames from ``seed``: synchronized output, cursor moves, colours, box
    drawing and spinner characters, a title now and then (passed through by cuewrap)."""
    rng = random.Random(seed)
    frames = []
    for i in range(n):
        rows = []
        for _ in range(rng.randrange(1, 12)):
            r = rng.randrange(1, 30)
            word = "".join(rng.choice("abc ─│⠋✓é") for _ in range(rng.randrange(0, 40)))
            rows.append(
                b"\x1b[%d;1H\x1b[2K\x1b[38;5;%dm%s\x1b[0m %d:%d"
                % (r, rng.randrange(256), word.encode(), seed, i)
            )
        if rng.random() < 0.05:
            rows.append(b"\x1b]2;soak %d\x07" % i)
        frames.append(b"\x1b[?2026h\x1b[?25l" + b"".join(rows) + b"\x1b[?25h\x1b[?2026l")
    return frames


# -- resources ------------------------------------------------------------------------------


def resources(pid: int, log: Path) -> dict[str, int]:
    with open(f"/proc/{pid}/status") as fh:
        rss = int(re.search(r"^VmRSS:\s+(\d+)", fh.read(), re.M).group(1))  # type: ignore[union-attr]
    errors = 0
    if log.exists():
        errors = log.read_text(errors="replace").count('"kind": "internal_error"')
    return {
        "rss_kb": rss,
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": len(os.listdir(f"/proc/{pid}/task")),
        "children": len(child_pids(pid)),
        "descendants": len(_descendants(pid)),
        "internal_errors": errors,
    }


def show(title: str, res: dict[str, int]) -> None:
    print(f"  {title:28s} " + "  ".join(f"{k} {v}" for k, v in res.items()), flush=True)


# -- the two sessions -------------------------------------------------------------------------


class Raw:
    """The bytes a PiSession read, searched from a mark without copying all of them."""

    def __init__(self, s: PiSession) -> None:
        self.s = s

    def mark(self) -> int:
        with self.s._cond:
            return len(self.s._raw)

    def find(self, needle: bytes, start: int) -> int:
        with self.s._cond:
            return self.s._raw.find(needle, start)

    def since(self, start: int, end: int | None = None) -> bytes:
        with self.s._cond:
            return bytes(self.s._raw[start:end])

    def wait(self, needle: bytes, start: int, timeout: float, what: str) -> int:
        return wait_until(  # type: ignore[no-any-return]
            lambda: (i := self.find(needle, start)) >= 0 and i + 1,
            timeout, what, detail=self.s.dump,
        ) - 1  # fmt: skip


def find_pid(root: int, marker: str) -> int:
    for pid, _ in _descendants(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "-m cuewrap" in cmd and marker in cmd:
            return pid
    raise RuntimeError(f"no cuewrap {marker!r} under {root}")


class PiSide:
    """``cuewrap pi`` in ``bash -i`` (so Ctrl-Z / fg work as for a user)."""

    def __init__(self, home: object, fm: FakeModel, tmp: Path, rng: random.Random) -> None:
        self.fm, self.rng = fm, rng
        self.log = tmp / "pi-cuewrap.log"
        env = dict(home.env)  # type: ignore[attr-defined]
        env.update(PS1=f"{PROMPT} ", HISTFILE="/dev/null", PROMPT_COMMAND="")
        self.s = PiSession(["bash", "--norc", "--noprofile", "-i"], env=env,
                           cwd=home.cwd, log_path=self.log, dimensions=(40, 120))  # type: ignore[attr-defined]  # fmt: skip
        self.raw = Raw(self.s)
        self.raw.wait(PROMPT.encode(), 0, 10, "bash's prompt")
        cmd = shlex.join([PY, "-m", "cuewrap", "--log", str(self.log), "pi"])
        self.s.send(cmd + "\r")
        self.s.wait_ready(timeout=60)
        self.pid = find_pid(self.s.pid, "pi")
        self.tasks = 0
        self.reloads = 0
        self.stops = 0

    def task(self) -> None:
        self.tasks += 1
        n = self.tasks
        token = f"SOAKDONE{n}X"
        lines = [f"line {i} of answer {n}: " + "lorem ipsum dolor " * 4 for i in range(60)]
        steps = []
        if self.rng.random() < 0.4:  # tool output too
            steps.append(tool_call("bash", {"command": f"seq 1 3000; echo TOOL{n}"}))
        steps.append(text("\n".join(lines) + f"\n{token}", chunk_delay=0.002))
        self.fm.push(*steps)
        away = self.rng.random() < 0.5
        self.s.prompt(f"soak task {n}")
        if away:  # leave while it works: the cue fires
            self.s.focus_out()
        self.s.wait_for_screen(re.escape(token), timeout=120)
        self.s.wait_idle(timeout=60)
        if away:
            time.sleep(self.rng.uniform(0.1, 1.0))
            self.s.focus_in()

    def leave_return(self) -> None:
        self.s.focus_out()
        time.sleep(self.rng.uniform(0.05, 2.0))
        self.s.focus_in()

    def resize(self) -> None:
        self.s.resize(self.rng.randrange(20, 60), self.rng.randrange(60, 200))
        time.sleep(0.3)
        self.s.wait_idle(timeout=30)

    def stop_fg(self) -> None:
        self.stops += 1
        mark = self.raw.mark()
        self.s.send(b"\x1a")
        self.raw.wait(b"Stopped", mark, 15, "Stopped")
        self.raw.wait(PROMPT.encode(), mark, 15, "the prompt after the stop")
        time.sleep(self.rng.uniform(0.1, 1.0))
        mark = self.raw.mark()
        self.s.send("fg\r")
        self.raw.wait(b"\x1b[?1004h", mark, 15, "focus reporting on again after fg")
        wait_until(lambda: MODEL_ID in self.s.screen_text, 15, "Pi's screen after fg",
                   detail=self.s.dump)  # fmt: skip
        self.s.wait_idle(timeout=30)

    def new(self) -> None:
        self.s.submit("/new")
        time.sleep(0.5)
        self.s.wait_idle(timeout=30)

    def reload(self) -> None:
        self.reloads += 1
        before = self.hellos()
        self.s.submit("/reload")
        wait_until(lambda: self.hellos() > before, 30, "the bridge's hello after /reload",
                   detail=self.s.dump)  # fmt: skip
        self.s.wait_idle(timeout=30)

    def hellos(self) -> int:
        if not self.log.exists():
            return 0
        return self.log.read_text(errors="replace").count("BridgeHello")

    def quit(self) -> int | None:
        mark = self.raw.mark()
        self.s.submit("/quit")
        self.raw.wait(PROMPT.encode(), mark, 20, "the prompt after /quit")
        return None


class StreamSide:
    """``cuewrap -- <stream child>``: a known stream, checked byte for byte."""

    def __init__(self, tmp: Path, rng: random.Random) -> None:
        self.rng = rng
        self.log = tmp / "stream-cuewrap.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "CUEWRAP_"))}
        env["TERM"] = "xterm-256color"
        argv = [PY, "-m", "cuewrap", "--log", str(self.log), "--",
                PY, "-c", STREAM_CHILD, str(REPO / "scripts")]  # fmt: skip
        self.s = PiSession(argv, env=env, cwd=tmp, dimensions=(30, 100))
        self.raw = Raw(self.s)
        self.raw.wait(b"READY\r\n", 0, 30, "the stream child")
        self.pid = self.s.pid
        self.streams = 0
        self.bytes = 0
        self.lost = 0

    def stream(self) -> None:
        self.streams += 1
        seed = self.rng.randrange(1 << 30)
        n = self.rng.randrange(50, 800)
        mark = self.raw.mark()
        self.s.send(f"g{seed};{n}\r")
        end = self.raw.wait(b"END%d\r\n" % seed, mark, 120, f"stream {seed}")
        got = self.raw.since(mark, end)
        want = b"".join(stream_frames(seed, n))
        start = got.find(want[:64])
        body = got[start:] if start >= 0 else got
        self.bytes += len(want)
        if body != want:
            self.lost += 1
            digest = hashlib.sha256(body).hexdigest()[:12]
            print(f"  stream {seed}: {len(body)} bytes, not the {len(want)} sent ({digest})")

    def leave_return(self) -> None:
        self.s.focus_out()
        time.sleep(self.rng.uniform(0.05, 0.5))
        self.s.focus_in()

    def resize(self) -> None:
        self.s.resize(self.rng.randrange(10, 60), self.rng.randrange(40, 200))

    def quit(self) -> None:
        self.s.send("q\r")


# -- the run ------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--pi", default="1.4.0")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"soak: {a.minutes:g} min, seed {seed}, Pi {a.pi}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="cuewrap-soak-"))
    with FakeModel() as fm:
        home = make_pi_home(tmp, fm.base_url, install_pi(a.pi))
        pi = PiSide(home, fm, tmp, rng)
        st = StreamSide(tmp, rng)
        try:
            # warm-up: one of each, so start-up imports are not counted as growth
            pi.task()
            pi.reload()
            st.stream()
            pi.stop_fg()
            start = {"pi": resources(pi.pid, pi.log), "stream": resources(st.pid, st.log)}
            print("start (after a warm-up):")
            show("cuewrap pi", start["pi"])
            show("cuewrap -- (stream)", start["stream"])
            actions = [
                (pi.task, 6), (pi.leave_return, 3), (pi.resize, 2), (pi.stop_fg, 1),
                (pi.new, 1), (pi.reload, 1), (st.stream, 6), (st.leave_return, 2),
                (st.resize, 2),
            ]  # fmt: skip
            funcs, weights = zip(*actions, strict=True)
            deadline = time.monotonic() + a.minutes * 60
            last_print = time.monotonic()
            while time.monotonic() < deadline:
                rng.choices(funcs, weights)[0]()
                if time.monotonic() - last_print > 300:
                    last_print = time.monotonic()
                    show("... cuewrap pi", resources(pi.pid, pi.log))
            # settle: what the session does after quiet is part of the state measured
            pi.s.wait_idle(timeout=30)
            st.stream()
            time.sleep(2)
            end = {"pi": resources(pi.pid, pi.log), "stream": resources(st.pid, st.log)}
            print("end:")
            show("cuewrap pi", end["pi"])
            show("cuewrap -- (stream)", end["stream"])
            print(
                f"done: {pi.tasks} tasks, {pi.reloads} reloads, {pi.stops} stops; "
                f"{st.streams} streams, {st.bytes / 1e6:.1f} MB, {st.lost} not intact"
            )
        finally:
            for side in (pi, st):
                try:
                    side.quit()
                except Exception:
                    pass
            for side in (pi, st):
                side.s.close()
    flat = st.lost == 0
    for name in ("pi", "stream"):
        b, e = start[name], end[name]
        growth = e["rss_kb"] - b["rss_kb"]
        same = all(b[k] == e[k] for k in ("fds", "threads", "children", "descendants"))
        ok = growth < RSS_LIMIT_KB and same and e["internal_errors"] == 0
        print(f"  {name}: RSS {growth:+d} kB, fds/threads/children "
              f"{'unchanged' if same else 'CHANGED'}, {e['internal_errors']} internal errors"
              f" -> {'flat' if ok else 'NOT FLAT'}")  # fmt: skip
        flat = flat and ok
    print("FLAT" if flat else "NOT FLAT")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
