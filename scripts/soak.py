"""Soak: hours without drift. Real Pi on the local fake model (tests/fakemodel.py) under
``cuewrap pi`` in an interactive bash, through a randomized session for N minutes: tasks with
long streamed answers and tool output, leaving and returning (focus reports), resizes, Ctrl-Z
and ``fg``, ``/new``, ``/reload`` (which reconnects the bridge). Beside it a generic-mode
``cuewrap --`` relays a known stream (escape-dense frames, UTF-8, writes cut anywhere) on
demand, resized and left/returned too; every stream is checked byte for byte. And a third
``cuewrap pi`` runs inside a real tmux (a private server, window 0; a client attached through a
PTY as the user's terminal): tasks typed through the client, window switches (to window 1 and
back, also while a run works),
client resizes, the client's terminal losing and regaining focus (also while a run works, so
that it settles with Pi's pane in front of an unfocused terminal), and tmux's ``focus-events``
and ``allow-passthrough`` turned on and off.
Every reminder is accounted for: a run that settles while the user is in window 1 must give one
cue delivered as a status-line message; one that settles in front of an unfocused terminal one
cue, with the terminal notification reaching the client's terminal exactly while
``allow-passthrough`` is on; a run that settles in front of the user none. At the end that Pi
quits: its window's ``@cuewrap_state`` option must be unset and its registry entry gone.

Printed at the start (after a warm-up) and at the end, for the three cuewraps: RSS, open fds,
threads, child processes (direct / all descendants) and internal-error records in the decision
log. Flat: RSS + < 3 MB, fds / threads / children unchanged, 0 internal errors, 0 bytes lost,
in tmux every reminder as expected and none other, the window option unset and the registry
entry gone after ``/quit``.
Exit status 0 when flat, 1 when not.

    scripts/soak [--minutes 30] [--seed N] [--pi 1.4.0|latest]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from fakemodel import MODEL_ID, FakeModel, text, tool_call  # noqa: E402
from pirig import PiSession, _descendants, child_pids, install_pi, make_pi_home  # noqa: E402
from tmuxrig import SESSION, TmuxRig  # noqa: E402
from waiting import wait_until  # noqa: E402

PY = sys.executable
OSC777 = re.compile(rb"\x1b\]777;notify;[^\x07\x1b]*(?:\x07|\x1b\\)")
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
    drawing and spinner characters, a title now and then, written between frames as a program
    writes its own (passed through by cuewrap; one inside a frame is content it removes under
    ``guard.sequences = own``)."""
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
        title = b"\x1b]2;soak %d\x07" % i if rng.random() < 0.05 else b""
        frames.append(b"\x1b[?2026h\x1b[?25l" + b"".join(rows) + b"\x1b[?25h\x1b[?2026l" + title)
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
        return wait_until(
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
        self.resizes = 0

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
        self.resizes += 1
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
        self.resizes = 0

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
        self.resizes += 1
        self.s.resize(self.rng.randrange(10, 60), self.rng.randrange(40, 200))

    def quit(self) -> None:
        self.s.send("q\r")


class LogTail:
    """The records of one kind a decision log gained, read from where the last look ended."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.kind = path, kind
        self.offset = 0
        self.records: list[dict[str, Any]] = []

    def read(self) -> list[dict[str, Any]]:
        if self.path.exists():
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
            whole = data.rfind(b"\n") + 1  # a line being written waits for the next look
            self.offset += whole
            needle = f'"kind": "{self.kind}"'.encode()
            for line in data[:whole].splitlines():
                if needle in line:
                    try:
                        self.records.append(json.loads(line))
                    except ValueError:
                        continue
        return self.records


class TmuxSide:
    """``cuewrap pi`` in window 0 of a real tmux (private socket; window 1 a sleep), with a
    user's client attached through a PTY; window switches seen through cuewrap's tmux view."""

    def __init__(self, home: Any, fm: FakeModel, rng: random.Random) -> None:
        self.fm, self.rng = fm, rng
        self.env = {k: v for k, v in home.env.items() if not k.startswith("TMUX")}
        self.focus_events = rng.random() < 0.5  # tmux's option at the start (then toggled)
        self.passthrough = rng.random() < 0.5  # allow-passthrough at the start (then toggled)
        self.rig = TmuxRig(
            home,
            server_options={"focus-events": self.on_off()},
            global_options={"allow-passthrough": "on" if self.passthrough else "off"},
        )
        self.log = self.rig.log_path
        argv = [PY, "-m", "cuewrap", "--log", str(self.log), "pi"]
        # under a shell that stays, so the window outlives the session (its option goes)
        self.views = LogTail(self.log, "tmux_view")
        self.cue_log = LogTail(self.log, "cue")
        self.delivery_log = LogTail(self.log, "delivery")
        try:
            self.rig.start(["/bin/sh", "-c", shlex.join(argv) + "; exec sleep 100000"])
            self.s = self.rig.attach()
            self.s.wait_ready(timeout=60)
            self.pid = find_pid(self.rig.pane_pid(f"{SESSION}:0"), "pi")
            wait_until(lambda: self.option() != "", 30, "cuewrap's @cuewrap_state on window 0",
                       detail=self.why)  # fmt: skip
        except BaseException:
            self.rig.close()  # the server with its windows and clients
            raise
        self.tasks = 0
        self.switches = 0
        self.toggles = 0
        self.passthrough_toggles = 0
        self.expected = 0  # reminders (cue records) expected so far
        self.messages = 0  # of them delivered as a status-line message on the client
        self.oscs = 0  # terminal notifications expected on the client's terminal
        self.unexpected: list[str] = []  # what went otherwise
        self.focus_changes = 0
        self.resizes = 0

    def on_off(self) -> str:
        return "on" if self.focus_events else "off"

    def option(self) -> str:
        out = self.rig.tmux("show-options", "-w", "-v", "-t", f"{SESSION}:0", "@cuewrap_state",
                            check=False)  # fmt: skip
        return out.strip()

    def pane_text(self) -> str:
        """Window 0 as tmux holds it, whatever size the client gave it."""
        return self.rig.tmux("capture-pane", "-p", "-t", f"{SESSION}:0")

    def why(self) -> str:
        views = [r.get("state") for r in self.views.read()[-10:]]
        return f"tmux views: {views}\n@cuewrap_state: {self.option()!r}\n{self.s.dump()}"

    def view(self, state: str, after: int) -> None:
        """cuewrap's tmux view of its pane: ``state`` in a record after the first ``after``."""
        wait_until(lambda: any(r.get("state") == state for r in self.views.read()[after:]),
                   30, f"cuewrap's tmux view {state}", detail=self.why)  # fmt: skip

    def away(self) -> None:
        """To window 1. cuewrap asks tmux only when a decision needs it (docs/tmux-and-ssh.md):
        nothing is waited for here; a run that settles meanwhile is judged by a fresh view."""
        self.switches += 1
        self.rig.tmux("select-window", "-t", f"{SESSION}:1")

    def back(self, seen: bool = False) -> None:
        """To window 0, Pi on the client's screen; ``seen``: a mark stands, so cuewrap asks
        tmux until it sees the pane active again (within seconds)."""
        mark = len(self.views.read())
        self.rig.tmux("select-window", "-t", f"{SESSION}:0")
        if seen:
            self.view("active", mark)
        wait_until(lambda: MODEL_ID in self.s.screen_text, 15, "Pi's screen on the client",
                   detail=self.why)  # fmt: skip

    def osc_count(self) -> int:
        with self.s._cond:
            return len(OSC777.findall(self.s._raw))

    def new_cue(self, before: int, what: str) -> dict[str, Any]:
        """The one cue record after the first ``before``."""

        def found() -> dict[str, Any] | None:
            cues = self.cue_log.read()
            return cues[before] if len(cues) > before else None

        cue = wait_until(found, 30, f"the reminder of {what}", detail=self.why)
        assert cue is not None  # wait_until returns a truthy value
        return cue

    def delivered(self, cue: dict[str, Any], channel: str) -> dict[str, Any]:
        """The last delivery record of ``cue`` on ``channel``, once a final one is there."""

        def last() -> dict[str, Any] | None:
            recs = [
                r
                for r in self.delivery_log.read()
                if r.get("cue") == cue.get("cue_id") and r.get("channel") == channel
            ]
            return recs[-1] if recs and recs[-1].get("state") != "requested" else None

        got = wait_until(last, 30, f"the {channel} delivery of cue {cue.get('cue_id')}",
                         detail=self.why)  # fmt: skip
        assert got is not None  # wait_until returns a truthy value
        return got

    def account(self, what: str) -> None:
        """No reminder beyond those expected (a missing one fails its wait)."""
        got = len(self.cue_log.read())
        if got != self.expected:
            self.unexpected.append(f"{what}: {got} reminders, {self.expected} expected")
            self.expected = got  # said once

    def task(self) -> None:
        self.tasks += 1
        n = self.tasks
        if n % 10 == 0:  # a fresh session now and then: Pi compacts a long one on its own
            self.s.submit("/new")
            time.sleep(0.5)
            self.s.wait_idle(timeout=30)
        token = f"TMUXDONE{n}X"
        lines = [f"line {i} of tmux answer {n}: " + "sit amet " * 8 for i in range(60)]
        steps = []
        if self.rng.random() < 0.4:  # tool output too
            steps.append(tool_call("bash", {"command": f"seq 1 3000; echo TTOOL{n}"}))
        steps.append(text("\n".join(lines) + f"\n{token}", chunk_delay=0.002))
        where = self.rng.choice(["front", "window", "unfocused"])
        if where == "unfocused" and not self.focus_events:
            where = "window"  # tmux tells the pane nothing of the terminal's focus
        if where != "front":  # the run lasts until the user is surely away
            steps.insert(0, tool_call("bash", {"command": f"sleep 1; echo TWAIT{n}"}))
        self.fm.push(*steps)
        self.account(f"before task {n}")
        before = len(self.cue_log.read())
        oscs = self.osc_count()
        self.s.prompt(f"tmux task {n}")
        if where == "window":  # to the other window while it works: the cue goes to tmux
            self.away()
            cue = self.new_cue(before, f"task {n}, settled while in window 1")
            self.expected += 1
            msg = self.delivered(cue, "tmux")
            if msg.get("state") != "delivered":
                self.unexpected.append(f"task {n}: tmux message {msg}")
            self.messages += 1
            time.sleep(self.rng.uniform(0.1, 1.0))
            self.back(seen=True)
        elif where == "unfocused":  # Pi in front of a terminal that lost focus
            self.s.wait_working()
            self.s.focus_out()
            self.focus_changes += 1
            cue = self.new_cue(before, f"task {n}, settled before an unfocused terminal")
            self.expected += 1
            term = self.delivered(cue, "terminal")
            want = "unconfirmable" if self.passthrough else "off"
            if term.get("state") != want:
                self.unexpected.append(f"task {n}: terminal {term}, {want} expected "
                                       f"(allow-passthrough {self.passthrough})")  # fmt: skip
            if self.passthrough:
                self.oscs += 1
                what = f"task {n}'s terminal notification on the client"
                wait_until(lambda: self.osc_count() > oscs, 15, what, detail=self.why)
            time.sleep(self.rng.uniform(0.1, 1.0))
            self.s.focus_in()
        self.s.wait_for_screen(re.escape(token), timeout=120)
        self.s.wait_idle(timeout=60)
        if self.osc_count() != oscs + (where == "unfocused" and self.passthrough):
            self.unexpected.append(f"task {n} ({where}): {self.osc_count() - oscs} "
                                   "terminal notifications")  # fmt: skip

    def switch(self) -> None:
        self.away()
        time.sleep(self.rng.uniform(0.05, 1.55))
        self.back()
        self.s.wait_idle(timeout=30)

    def focus(self) -> None:
        """The client's terminal loses the focus and gets it back (tmux passes that on to
        the pane only with ``focus-events on``; without, the reports are not sent)."""
        if not self.focus_events:
            return
        self.focus_changes += 1
        self.s.focus_out()
        time.sleep(self.rng.uniform(0.05, 1.0))
        self.s.focus_in()

    def resize(self) -> None:
        self.resizes += 1
        self.s.resize(self.rng.randrange(20, 60), self.rng.randrange(60, 200))
        time.sleep(0.3)
        self.s.wait_idle(timeout=30)

    def toggle(self) -> None:
        """tmux's ``focus-events`` the other way; a switch makes cuewrap read it again."""
        self.toggles += 1
        self.focus_events = not self.focus_events
        self.rig.tmux("set", "-s", "focus-events", self.on_off())
        # cuewrap reads the option with its next view
        self.switch()

    def toggle_passthrough(self) -> None:
        """tmux's ``allow-passthrough`` the other way: read by cuewrap at the next reminder."""
        self.passthrough_toggles += 1
        self.passthrough = not self.passthrough
        self.rig.tmux("set", "-g", "allow-passthrough", "on" if self.passthrough else "off")

    def registered(self) -> bool:
        done = subprocess.run([PY, "-m", "cuewrap", "ls", "--json"], env=self.env,
                              capture_output=True, timeout=30)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"cuewrap ls: {done.stderr.decode(errors='replace')}")
        return any(r.get("pid") == self.pid for r in json.loads(done.stdout))

    def quit(self) -> tuple[bool, str, bool]:
        """/quit: whether the registry lists the session before, then @cuewrap_state of
        window 0 ("" unset) and whether the entry remains."""
        before = self.registered()
        self.s.submit("/quit")
        wait_until(lambda: not Path(f"/proc/{self.pid}").exists(), 30, "cuewrap to end in tmux",
                   detail=self.why)  # fmt: skip
        return before, self.option(), self.registered()

    def close(self) -> None:
        self.rig.close()


# -- the run ------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--pi", default="1.4.0")
    a = ap.parse_args()
    if shutil.which("tmux") is None:
        print("soak: tmux is not installed (scripts/install-test-deps)", file=sys.stderr)
        return 2
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"soak: {a.minutes:g} min, seed {seed}, Pi {a.pi}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="cuewrap-soak-"))
    # the soak's own registry of sessions (read back by `cuewrap ls` at the end)
    (tmp / "run").mkdir(mode=0o700)
    with FakeModel() as fm:
        home = make_pi_home(tmp, fm.base_url, install_pi(a.pi))
        home.env["XDG_RUNTIME_DIR"] = str(tmp / "run")
        pi = PiSide(home, fm, tmp, rng)
        st = StreamSide(tmp, rng)
        try:
            tx = TmuxSide(home, fm, rng)
        except BaseException:
            for side in (pi, st):
                side.s.close()
            raise
        sides: dict[str, PiSide | StreamSide | TmuxSide] = {"pi": pi, "stream": st, "tmux": tx}
        titles = {"pi": "cuewrap pi", "stream": "cuewrap -- (stream)", "tmux": "cuewrap pi (tmux)"}
        start_focus_events = tx.focus_events
        tmux_end: tuple[bool, str, bool] | None = None
        try:
            # warm-up: one of each, so start-up imports are not counted as growth
            pi.task()
            pi.reload()
            st.stream()
            pi.stop_fg()
            tx.task()
            tx.switch()
            time.sleep(2)  # the tmux side's questions to tmux answered and reaped
            start = {name: resources(side.pid, side.log) for name, side in sides.items()}
            print(f"start (after a warm-up; tmux focus-events {tx.on_off()}):")
            for name in sides:
                show(titles[name], start[name])
            actions = [
                (pi.task, 6), (pi.leave_return, 3), (pi.resize, 2), (pi.stop_fg, 1),
                (pi.new, 1), (pi.reload, 1), (st.stream, 6), (st.leave_return, 2),
                (st.resize, 2), (tx.task, 4), (tx.switch, 4), (tx.focus, 1), (tx.resize, 1),
                (tx.toggle, 1), (tx.toggle_passthrough, 1),
            ]  # fmt: skip
            funcs, weights = zip(*actions, strict=True)
            deadline = time.monotonic() + a.minutes * 60
            last_print = time.monotonic()
            while time.monotonic() < deadline:
                rng.choices(funcs, weights)[0]()
                if time.monotonic() - last_print > 300:
                    last_print = time.monotonic()
                    show("... cuewrap pi", resources(pi.pid, pi.log))
                    show("... cuewrap pi (tmux)", resources(tx.pid, tx.log))
            # settle: what the session does after quiet is part of the state measured; tmux's
            # focus-events as at the start, so cuewrap's control client is of the same kind
            pi.s.wait_idle(timeout=30)
            if tx.focus_events != start_focus_events:
                tx.toggle()
            tx.switch()
            st.stream()
            time.sleep(2)
            end = {name: resources(side.pid, side.log) for name, side in sides.items()}
            print("end:")
            for name in sides:
                show(titles[name], end[name])
            print(
                f"done: {pi.tasks} tasks, {pi.reloads} reloads, {pi.stops} stops (Ctrl-Z/fg), "
                f"{pi.resizes} resizes; {st.streams} streams, {st.bytes / 1e6:.1f} MB, "
                f"{st.lost} not intact, {st.resizes} resizes; tmux: {tx.tasks} tasks, "
                f"{tx.switches} window switches, {tx.resizes} client resizes, "
                f"{tx.focus_changes} focus out/in, {tx.toggles} focus-events changes, "
                f"{tx.passthrough_toggles} allow-passthrough changes; reminders in tmux: "
                f"{tx.expected} ({tx.messages} status-line messages, {tx.oscs} terminal "
                f"notifications), {len(tx.unexpected)} otherwise"
            )
            tx.account("at the end")
            tmux_end = tx.quit()
        finally:
            for side in (pi, st):
                try:
                    side.quit()
                except Exception:
                    pass
            for side in (pi, st):
                side.s.close()
            tx.close()
    flat = st.lost == 0
    for name in sides:
        b, e = start[name], end[name]
        growth = e["rss_kb"] - b["rss_kb"]
        same = all(b[k] == e[k] for k in ("fds", "threads", "children", "descendants"))
        ok = growth < RSS_LIMIT_KB and same and e["internal_errors"] == 0
        print(f"  {name}: RSS {growth:+d} kB, fds/threads/children "
              f"{'unchanged' if same else 'CHANGED'}, {e['internal_errors']} internal errors"
              f" -> {'flat' if ok else 'NOT FLAT'}")  # fmt: skip
        flat = flat and ok
    before, option, listed = tmux_end if tmux_end is not None else (False, "?", True)
    gone = before and option == "" and not listed
    shown = "unset" if option == "" else repr(option)
    print(f"  tmux: registry entry {'listed' if before else 'NOT listed'} while running; "
          f"after /quit @cuewrap_state {shown}, entry {'still listed' if listed else 'gone'}"
          f" -> {'clean' if gone else 'NOT CLEAN'}")  # fmt: skip
    flat = flat and gone
    for line in tx.unexpected:
        print(f"  tmux reminder: {line}")
    print(f"  tmux: reminders {'as expected' if not tx.unexpected else 'NOT as expected'}")
    flat = flat and not tx.unexpected
    print("FLAT" if flat else "NOT FLAT")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
