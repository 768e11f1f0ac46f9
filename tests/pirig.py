"""Test rig: real Pi (installed by scripts/install-pi) against the fake model, under a PTY.

Fixtures (registered by tests/conftest.py):

    pi_version   "1.4.0" | "latest" (parametrized over both; override with
                 ``@pytest.mark.parametrize("pi_version", ["1.4.0"])``)
    pi_bin       Path: bin dir holding ``pi`` and ``node`` for ``pi_version``
    fakemodel    a started FakeModel (stopped at teardown)
    pi_home      PiHome: isolated PI_CODING_AGENT_DIR + env for Pi, wired to ``fakemodel``
    pi_session   factory ``pi_session(*pi_args, **kw) -> PiSession``; all killed at teardown
    ask_ext      Path of the Ask package's extension entry (scripts/install-ask)

Sessions run under ``python -m cuewrap`` unless a test asks for Pi alone (``wrap=False``):
a cuewrap that does not start fails the tests that use it, it is never skipped or replaced.

Helpers: ``install_pi(version)``, ``install_ask(version)``, ``TEST_EXT``
(tests/pi-ext/cuewrap-test-ext.ts), ``ask_question_args(...)``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pexpect
import pyte
import pytest
from fakemodel import MODEL_ID, FakeModel, text, tool_call
from launch import default_signals
from termscan import notifications, titles
from waiting import wait_until

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
TEST_EXT = TESTS / "pi-ext" / "cuewrap-test-ext.ts"
NOTIFY_EXT = TESTS / "pi-ext" / "notify-ext.ts"  # Pi's notify example, reduced
PI_PINNED = "1.4.0"
PI_VERSIONS = (PI_PINNED, "latest")
ASK_VERSION = "2.11.0"
# Pi's own title for cwd ``work`` (docs/pi-facts.md#escape-sequences: OSC 0;π - <cwd basename>)
TITLE = "π - work"
NOTIFY_TITLE = "Pi — work"  # docs/design.md#privacy: the app and the cwd basename

# --------------------------------------------------------------------------------------------
# Installation (cached per test process)


def _installed(script: str, version: str) -> Path:
    """Run ``scripts/<script> <version>``; the path it prints last."""
    out = subprocess.run(
        [str(REPO / "scripts" / script), version], capture_output=True, text=True, timeout=600
    )
    if out.returncode != 0:
        raise RuntimeError(f"scripts/{script} {version} failed:\n{out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])


@functools.cache
def install_pi(version: str = "1.4.0") -> Path:
    """Run scripts/install-pi once per version and return the bin dir (``pi``, ``node``)."""
    bindir = _installed("install-pi", version)
    if not (bindir / "pi").exists():
        raise RuntimeError(f"scripts/install-pi {version}: no pi in {bindir}")
    return bindir


def under_ci() -> bool:
    """True in CI (``CI=true``, as CI services set it)."""
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def pi_missing(version: str, why: str) -> NoReturn:
    """Pi ``version`` could not be installed: a failure in CI and for the pinned version; a
    skip (listed with this reason by ``-ra``) only for "latest" outside CI (e.g. offline)."""
    msg = f"Pi {version} not installable here (scripts/install-pi): {why}"
    if under_ci() or version == PI_PINNED:
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


@functools.cache
def install_ask(version: str = ASK_VERSION) -> Path:
    """Run scripts/install-ask once and return the Ask extension entry (for ``pi -e``)."""
    return _installed("install-ask", version)


def ask_question_args(
    question: str = "Which color should the button be?",
    header: str = "Color",
    options: Sequence[tuple[str, str]] = (
        ("Blue", "The calm default"),
        ("Red", "Loud and urgent"),
    ),
    *,
    multi_select: bool = False,
) -> dict[str, Any]:
    """Arguments for an ``ask_user_question`` tool call (one question; 2-4 options;
    header <= 16 chars; labels <= 60 chars; "Other"/"Type something." are reserved)."""
    return {
        "questions": [
            {
                "question": question,
                "header": header,
                "options": [{"label": lb, "description": d} for lb, d in options],
                "multiSelect": multi_select,
            }
        ]
    }


# --------------------------------------------------------------------------------------------
# Isolated Pi home


_DROP_ENV = re.compile(
    r"^(PI_|CUEWRAP_|TMUX|STY$|DISPLAY$|WAYLAND_DISPLAY$|DBUS_SESSION_BUS_ADDRESS$|"
    r"KITTY_|WEZTERM_|TERM_PROGRAM|WT_SESSION$|ITERM_|VTE_VERSION$|COLORTERM$|SSH_|NODE_OPTIONS$)"
)


def pi_environment(bin_dir: Path, agent_dir: Path, home: Path) -> dict[str, str]:
    """The environment every Pi of the tests runs in (both rigs: ``make_pi_home`` here and
    tests/bridge_helpers.py): the test run's own, without what would tell Pi or cuewrap where
    they run or configure them (tmux, SSH, a display or bus, a terminal's own variables, Pi's
    and cuewrap's settings), plus an isolated Pi configuration (``agent_dir``), home and XDG
    directories, no network checks, ``bin_dir`` (``pi`` and ``node``) first on PATH."""
    env = {k: v for k, v in os.environ.items() if not _DROP_ENV.match(k)}
    env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        PI_TELEMETRY="0",
        TERM="xterm-256color",
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    return env


@dataclass
class PiHome:
    """An isolated Pi configuration: ``agent_dir`` is ``PI_CODING_AGENT_DIR``."""

    root: Path
    agent_dir: Path
    home: Path
    cwd: Path
    bin_dir: Path
    base_url: str
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def write_settings(self, **overrides: Any) -> None:
        """Merge ``overrides`` into settings.json (e.g. ``tuiMode="regular"``)."""
        self.settings.update(overrides)
        (self.agent_dir / "settings.json").write_text(json.dumps(self.settings, indent=2))

    def sessions(self) -> list[Path]:
        """Session files Pi wrote."""
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))


def fake_models(base_url: str, model: dict[str, Any], **provider: Any) -> dict[str, Any]:
    """Pi's ``models.json``: one provider, "fake" (OpenAI-compatible, at ``base_url``), with
    one model (``model``: its id, name, …), free and with a 128k context."""
    limits = {"contextWindow": 128000, "maxTokens": 4096}
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    fake = {"api": "openai-completions", "baseUrl": base_url, "apiKey": "fake-key", **provider}
    return {"providers": {"fake": {**fake, "models": [{**model, **limits, "cost": cost}]}}}


def make_pi_home(root: Path, base_url: str, bin_dir: Path) -> PiHome:
    agent_dir = root / "agent"
    home = root / "home"
    cwd = root / "work"
    for d in (agent_dir, home, cwd):
        d.mkdir(parents=True, exist_ok=True)
    models = fake_models(base_url, {"id": MODEL_ID, "name": MODEL_ID}, name="Fake")
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    env = pi_environment(bin_dir, agent_dir, home)
    ph = PiHome(
        root=root, agent_dir=agent_dir, home=home, cwd=cwd, bin_dir=bin_dir,
        base_url=base_url, env=env,
    )  # fmt: skip
    ph.write_settings(
        defaultProvider="fake",
        defaultModel=MODEL_ID,
        quietStartup=True,
        retry={"enabled": True, "maxRetries": 2, "baseDelayMs": 200},
    )
    return ph


# --------------------------------------------------------------------------------------------
# Process-tree cleanup


def _proc_stat(pid: int) -> tuple[int, str] | None:
    """(ppid, start time) of a live pid, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(")") + 2 :].split()
    return int(rest[1]), rest[19]


def _descendants(root: int) -> list[tuple[int, str]]:
    """All live descendants of ``root`` as (pid, start time), parents first."""
    children: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _proc_stat(int(name))
            if st:
                children.setdefault(st[0], []).append((int(name), st[1]))
    out: list[tuple[int, str]] = []
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid[0])
    return out


def child_pids(pid: int) -> list[int]:
    """The live children of ``pid`` (all its threads'), from /proc."""
    kids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return kids
    for task in tasks:
        try:
            kids += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def wrapped_pid(cuewrap_pid: int) -> int | None:
    """The command cuewrap runs (Pi): the one child of cuewrap's session leader, which is
    cuewrap's child leading its own session (docs/job-control.md). None while not there."""
    for leader in child_pids(cuewrap_pid):
        try:
            with open(f"/proc/{leader}/stat", encoding="ascii", errors="replace") as f:
                sid = int(f.read().rsplit(")", 1)[1].split()[3])  # state ppid pgrp session
        except (OSError, ValueError, IndexError):
            continue
        if sid == leader:
            kids = child_pids(leader)
            if len(kids) == 1:
                return kids[0]
    return None


def pi_child(cuewrap_pid: int) -> int:
    """Pi: the command under cuewrap's session leader."""
    pid = wait_until(lambda: wrapped_pid(cuewrap_pid), 5, "Pi under cuewrap")
    return int(pid)


def _kill_exact(procs: list[tuple[int, str]], sig: int) -> None:
    for pid, start in procs:
        st = _proc_stat(pid)
        if st and st[1] == start:  # still the same process
            with contextlib.suppress(OSError):
                os.kill(pid, sig)


# --------------------------------------------------------------------------------------------
# PiSession


_BORDER = re.compile(r"^─{8,}$")
_BUSY = re.compile(r"^──+ .*\S.*─+$")
_BUSY_WORDS = re.compile(r"Working|Retrying|[Cc]ompacting")
_DIALOG = re.compile(r"escape/ctrl\+c cancel|Esc to cancel|enter select|Enter to select")


class AnsweringTerminal:
    """The answers a terminal gives, played on the session's PTY: every DA1 query (``CSI c``,
    ``CSI 0 c``) answered, in order, as every terminal does; with ``speaks``, every Program
    Status query (``OSC 7501 ; ?`` ST or BEL) too, with the same body (ST), as a terminal that
    speaks the protocol does (docs/generic-mode.md). Queries split across reads are found.
    ``delay``: seconds every answer takes to arrive, in order (a terminal over a slow SSH link)."""

    _QUERY = re.compile(rb"\x1b\]7501;\?(?:\x1b\\|\x07)|\x1b\[0?c")
    DA1_ANSWER = b"\x1b[?62;22c"
    STATUS_ANSWER = b"\x1b]7501;?\x1b\\"

    def __init__(self, speaks: bool = True, delay: float = 0.0) -> None:
        self.speaks = speaks
        self.delay = delay
        self.status_queries = 0  # Program Status queries seen
        self.da1_queries = 0
        self._tail = b""

    def feed(self, data: bytes) -> bytes:
        """The command wrote ``data``: what the terminal answers (b"" for nothing)."""
        buf = self._tail + data
        reply, last = b"", 0
        for m in self._QUERY.finditer(buf):
            if m.group().startswith(b"\x1b]"):
                self.status_queries += 1
                reply += self.STATUS_ANSWER if self.speaks else b""
            else:
                self.da1_queries += 1
                reply += self.DA1_ANSWER
            last = m.end()
        # the start of a query, perhaps (one is at most 11 bytes): kept for the next read
        self._tail = buf[max(last, len(buf) - 10) :]
        return reply


class PiSession:
    """A command (by default ``cuewrap --log LOG pi …``, else ``pi …``) under a PTY.

    A reader thread drains the PTY continuously into ``raw_output`` and a pyte screen.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        cwd: Path | str,
        log_path: Path | None = None,
        dimensions: tuple[int, int] = (40, 120),
        terminal: AnsweringTerminal | None = None,
    ) -> None:
        self.argv = list(argv)
        #: answers what the command asks its terminal (None: nothing is answered)
        self.terminal = terminal
        self._answers: queue.Queue[tuple[float, bytes]] | None = None  # delayed answers
        #: True when running under ``python -m cuewrap`` (raw_output then includes what
        #: cuewrap itself writes to the terminal, e.g. ``CSI ?1004h``).
        self.wrapped = self.argv[1:3] == ["-m", "cuewrap"]
        self.log_path = log_path
        self.rows, self.cols = dimensions
        self._cond = threading.Condition()
        self._raw = bytearray()
        self._screen = pyte.Screen(self.cols, self.rows)
        self._stream = pyte.ByteStream(self._screen)
        self._eof = False
        self._last_output = time.monotonic()
        self._exitstatus: int | None = None
        self._signalstatus: int | None = None
        self.child = pexpect.spawn(
            self.argv[0],
            self.argv[1:],
            env=env,
            cwd=str(cwd),
            dimensions=dimensions,
            echo=False,
            preexec_fn=default_signals,  # tests signal it and its children
        )
        self.pid: int = self.child.pid
        # pexpect reaps the child in isalive(), which read_nonblocking() also calls: from two
        # threads, one of them reaps it and the other gets ECHILD ("no child process. Did
        # someone else call waitpid()?"). Every call into the child holds this lock.
        self._proc = threading.Lock()
        # the terminal the process under test runs in (its stdin), as os.ttyname names it
        self.tty_name = os.readlink(f"/proc/{self.pid}/fd/0")
        self._reader = threading.Thread(
            target=self._read_loop, name="pisession-reader", daemon=True
        )
        self._reader.start()

    # -- reading ---------------------------------------------------------------------------
    def _read_loop(self) -> None:
        while True:
            try:  # wait for output without the lock; then read, or see the end, with it
                select.select([self.child.child_fd], [], [], 0.1)
                with self._proc:
                    data = self.child.read_nonblocking(65536, timeout=0)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                break
            if not data:
                continue
            if self.terminal is not None:
                reply = self.terminal.feed(data)
                if reply:
                    self._answer(reply)
            with self._cond:
                self._raw += data
                try:
                    self._stream.feed(data)
                except Exception:  # pyte must never kill the reader
                    pass
                self._last_output = time.monotonic()
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _answer(self, reply: bytes) -> None:
        """The terminal's answer, written now or, with a delay, by one thread in order."""
        assert self.terminal is not None
        if not self.terminal.delay:
            with contextlib.suppress(OSError):
                os.write(self.child.child_fd, reply)
            return
        if self._answers is None:
            self._answers = queue.Queue()
            threading.Thread(target=self._answer_loop, daemon=True).start()
        self._answers.put((time.monotonic() + self.terminal.delay, reply))

    def _answer_loop(self) -> None:
        assert self._answers is not None
        while True:
            due, reply = self._answers.get()
            time.sleep(max(0.0, due - time.monotonic()))
            with contextlib.suppress(OSError):
                os.write(self.child.child_fd, reply)

    @property
    def raw_output(self) -> bytes:
        """Every byte the command wrote to its terminal so far."""
        with self._cond:
            return bytes(self._raw)

    @property
    def screen_lines(self) -> list[str]:
        with self._cond:
            return [line.rstrip() for line in self._screen.display]

    @property
    def screen_text(self) -> str:
        """The pyte screen, one line per row, trailing blanks stripped."""
        return "\n".join(self.screen_lines)

    @property
    def eof(self) -> bool:
        with self._cond:
            return self._eof

    def _wait(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        """``wait_until`` on the reader's condition: woken by every chunk of output; fails
        at once when the terminal closes (the command exited) before ``check`` holds."""

        def check_or_eof() -> Any:
            result = check()
            if not result and self._eof:
                raise AssertionError(f"the terminal closed while waiting for {what}\n{self.dump()}")
            return result

        with self._cond:
            return wait_until(check_or_eof, timeout, what, interval=0.1, sleep=self._cond.wait,
                              detail=self.dump)  # fmt: skip

    def dump(self) -> str:
        """Screen contents and status, for failure messages."""
        tail = self.raw_output[-600:]
        return (
            f"--- argv: {self.argv}\n--- alive: {self.isalive()}  eof: {self.eof}\n"
            f"--- screen:\n{self.screen_text}\n--- last raw bytes:\n{tail!r}"
        )

    def wait_for_screen(
        self, pattern: str | re.Pattern[str], timeout: float = 10.0
    ) -> re.Match[str]:
        """Wait until ``pattern`` matches the screen text (rows joined with newlines)."""
        rx = re.compile(pattern, re.M) if isinstance(pattern, str) else pattern

        def check() -> re.Match[str] | None:
            text = "\n".join(line.rstrip() for line in self._screen.display)
            return rx.search(text)

        return self._wait(check, timeout, f"screen /{rx.pattern}/")

    def wait_for_output(
        self, pattern: bytes | re.Pattern[bytes], timeout: float = 10.0
    ) -> re.Match[bytes]:
        """Wait until ``pattern`` matches the raw output (bytes)."""
        rx = re.compile(pattern) if isinstance(pattern, bytes) else pattern
        return self._wait(lambda: rx.search(self._raw), timeout, f"output /{rx.pattern!r}/")

    def _state(self) -> str:
        """Return "dialog", "working", "idle" or "unknown", read from the screen: a dialog
        shows its key hints (native ``ctx.ui`` dialogs and the Ask questionnaire; a dialog
        replaces the editor, so the working border is hidden), a run shows a status in the
        editor's top border, idle is two plain border lines."""
        lines = [line.strip() for line in self._screen.display]
        if any(_DIALOG.search(ln) for ln in lines):
            return "dialog"
        if any(_BUSY.match(ln) and _BUSY_WORDS.search(ln) for ln in lines):
            return "working"
        borders = sum(1 for ln in lines if _BORDER.match(ln))
        return "idle" if borders >= 2 else "unknown"

    @property
    def state(self) -> str:
        with self._cond:
            return self._state()

    def wait_working(self, timeout: float = 10.0) -> None:
        """Wait until the editor border shows a status (``⠋ Working``, ``Retrying``…)."""
        self._wait(lambda: self._state() == "working", timeout, "working")

    def wait_dialog(self, timeout: float = 10.0) -> None:
        """Wait until a dialog (confirm/select/input or the Ask questionnaire) is shown."""
        self._wait(lambda: self._state() == "dialog", timeout, "a dialog")

    def wait_idle(self, timeout: float = 15.0, settle: float = 0.3) -> None:
        """Wait until the editor border is plain (no ``Working``) and Pi wrote nothing for
        ``settle`` seconds (while working Pi redraws every ~80 ms)."""

        def check() -> bool:
            return self._state() == "idle" and time.monotonic() - self._last_output >= settle

        self._wait(check, timeout, "idle")

    def wait_ready(self, timeout: float = 15.0) -> None:
        """Wait for Pi's first frame (editor and footer with the model name)."""
        self.wait_for_screen(re.escape(MODEL_ID), timeout)
        self.wait_idle(timeout)

    # -- writing ---------------------------------------------------------------------------
    def send(self, data: bytes | str) -> None:
        """Write ``data`` to the terminal in ONE write."""
        b = data.encode() if isinstance(data, str) else data
        n = os.write(self.child.child_fd, b)
        assert n == len(b), f"short write {n}/{len(b)}"

    def type(self, text: str) -> None:
        self.send(text)

    def enter(self) -> None:
        self.send(b"\r")

    def escape(self) -> None:
        self.send(b"\x1b")

    def ctrl_c(self) -> None:
        self.send(b"\x03")

    def focus_out(self) -> None:
        self.send(b"\x1b[O")

    def focus_in(self) -> None:
        self.send(b"\x1b[I")

    def submit(self, text: str, pause: float = 0.15) -> None:
        """Type ``text``, pause (so it is not one paste-like chunk), press Enter."""
        self.type(text)
        time.sleep(pause)
        self.enter()

    def prompt(self, text: str, timeout: float = 10.0) -> None:
        """Submit a prompt and wait until it shows on screen."""
        self.submit(text)
        self.wait_for_screen(re.escape(text[:40]), timeout)

    def quit(self) -> None:
        """``/quit`` + Enter."""
        self.submit("/quit")

    def resize(self, rows: int, cols: int) -> None:
        with self._cond:
            self.rows, self.cols = rows, cols
            self._screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)

    # -- process ---------------------------------------------------------------------------
    def isalive(self) -> bool:
        with self._proc:
            return bool(self.child.isalive())

    def wait_exit(self, timeout: float = 10.0) -> int | None:
        """Wait for the process to exit; return its exit status (None if killed by a signal)."""
        wait_until(lambda: not self.isalive(), timeout, "the process to exit",
                   detail=self.dump)  # fmt: skip
        self._reader.join(timeout=2)
        self._collect_status()
        return self._exitstatus

    def _collect_status(self) -> None:
        if self._exitstatus is None and self._signalstatus is None:
            with self._proc:
                self._exitstatus = self.child.exitstatus
                self._signalstatus = self.child.signalstatus

    def _statuses(self) -> tuple[int | None, int | None]:
        """(exit status, signal) once the process has exited; (None, None) while alive."""
        if self.isalive():
            return None, None
        self._collect_status()
        return self._exitstatus, self._signalstatus

    @property
    def exitstatus(self) -> int | None:
        """Exit status once the process has exited (None while alive or if signalled)."""
        return self._statuses()[0]

    @property
    def signalstatus(self) -> int | None:
        return self._statuses()[1]

    def close(self, grace: float = 2.0) -> None:
        """Terminate the process and all its descendants (SIGTERM, then SIGKILL)."""
        tree = _descendants(self.pid)
        root_st = _proc_stat(self.pid)
        everything = ([(self.pid, root_st[1])] if root_st else []) + tree
        if self.isalive():
            _kill_exact(everything[:1], signal.SIGTERM)
            with contextlib.suppress(TimeoutError):  # then SIGKILL below
                wait_until(lambda: not self.isalive(), grace, "SIGTERM to end it")
        # Late children (spawned while shutting down) too.
        everything += [p for p in _descendants(self.pid) if p not in everything]
        _kill_exact(everything, signal.SIGKILL)
        with contextlib.suppress(Exception), self._proc:
            self.child.close(force=True)
        self._reader.join(timeout=2)
        self._collect_status()

    # -- decision log ------------------------------------------------------------------------
    def log_records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Records of the JSON-lines decision log (``--log``), optionally only one ``kind``."""
        if self.log_path is None or not self.log_path.exists():
            return []
        out: list[dict[str, Any]] = []
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line being written
            if isinstance(rec, dict) and (kind is None or rec.get("kind") == kind):
                out.append(rec)
        return out

    def wait_log(
        self, predicate: Callable[[dict[str, Any]], bool] | str, timeout: float = 10.0
    ) -> dict[str, Any]:
        """Wait for a log record matching ``predicate`` (a callable, or a ``kind`` string)."""
        pred = (lambda r: r.get("kind") == predicate) if isinstance(predicate, str) else predicate
        what = (
            f"a log record of kind {predicate!r}" if isinstance(predicate, str) else "a log record"
        )

        def found() -> dict[str, Any] | None:
            return next((rec for rec in self.log_records() if pred(rec)), None)

        def kinds() -> str:
            return f"kinds seen: {[r.get('kind') for r in self.log_records()][-30:]}"

        return wait_until(found, timeout, what, detail=kinds)


# --------------------------------------------------------------------------------------------
# Helpers the Pi tests share


def explain(s: PiSession) -> str:
    """What a failed wait shows: the last titles, the notifications, the log, the screen."""
    kinds = [
        (r.get("kind"), r.get("type") or r.get("cue") or r.get("mark"))
        for r in s.log_records()
        if r.get("kind") not in ("child_mode",)
    ][-40:]
    return (
        f"titles: {titles(s.raw_output)[-6:]}\n"
        f"notifications: {notifications(s.raw_output)}\nlog: {kinds}\n{s.dump()}"
    )


def ready_away(s: PiSession) -> None:
    """Report focus out and wait until cuewrap recorded it."""
    s.focus_out()
    s.wait_log(lambda r: r.get("kind") == "presence" and r.get("presence") == "away")


def started_run(
    pi_session: SessionFactory,
    fm: FakeModel,
    command: str,
    reply: str | None = None,
    *,
    prompt: str,
    away: bool = False,
) -> PiSession:
    """A new session whose prompt (sent now) makes the fake model run bash ``command`` and
    then, if given, say ``reply``; with ``away``, the user has left before the prompt."""
    fm.push(tool_call("bash", {"command": command}), *([text(reply)] if reply else []))
    s: PiSession = pi_session()
    if away:
        ready_away(s)
    s.prompt(prompt)
    return s


def open_dialog(s: PiSession, fm: FakeModel, tool: str, args: dict[str, Any]) -> None:
    """Have the fake model call the test extension's dialog ``tool`` (then say "after the
    dialog"); wait until Pi shows the dialog."""
    fm.push(tool_call(tool, args), text("after the dialog"))
    s.prompt(f"run {tool}")
    s.wait_dialog()


def dialog_finished(s: PiSession, fm: FakeModel, result: str) -> None:
    """The dialog ``open_dialog`` opened was answered: the run went on, Pi is idle, and the
    tool's result sent to the model is ``result``."""
    s.wait_for_screen(r"after the dialog")
    s.wait_idle()
    assert fm.content_text(fm.tool_results()[-1]) == result


def answered(s: PiSession, prompt: str, shown: str, timeout: float = 15.0) -> None:
    """Submit ``prompt`` and wait until ``shown`` is on the screen, the run settled (the
    bridge's AgentSettled fact) and Pi is idle."""
    s.prompt(prompt)
    s.wait_for_screen(shown, timeout)
    s.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "AgentSettled", timeout)
    s.wait_idle()


def pi_argv(
    pi_args: Sequence[str],
    *,
    wrap: bool,
    log_path: Path,
    cuewrap_args: Sequence[str] = (),
) -> list[str]:
    """The command line for a session: ``python -m cuewrap [ARGS] --log LOG pi …``, or
    ``pi …`` alone when ``wrap`` is False."""
    if wrap:
        return [
            sys.executable,
            "-m",
            "cuewrap",
            *cuewrap_args,
            "--log",
            str(log_path),
            "pi",
            *pi_args,
        ]
    return ["pi", *pi_args]


# --------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(params=PI_VERSIONS)
def pi_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def pi_bin(pi_version: str) -> Path:
    try:
        return install_pi(pi_version)
    except RuntimeError as e:
        pi_missing(pi_version, str(e))


@pytest.fixture(scope="session")
def ask_ext() -> Path:
    return install_ask()


@pytest.fixture
def fakemodel() -> Iterator[FakeModel]:
    with FakeModel() as fm:
        yield fm


@pytest.fixture
def pi_home(tmp_path: Path, fakemodel: FakeModel, pi_bin: Path) -> PiHome:
    return make_pi_home(tmp_path, fakemodel.base_url, pi_bin)


SessionFactory = Callable[..., PiSession]


@pytest.fixture
def pi_session(pi_home: PiHome) -> Iterator[SessionFactory]:
    """Factory: ``pi_session(*pi_args, argv=None, wrap=True, test_ext=True, extensions=(),
    cuewrap_args=(), env=None, dimensions=(40, 120), ready=True, terminal=None) -> PiSession``.

    ``pi_args`` go to Pi; ``test_ext`` adds ``-e tests/pi-ext/cuewrap-test-ext.ts``,
    ``extensions`` more ``-e`` paths. ``argv`` replaces the whole command line. ``wrap``:
    under cuewrap (default) or Pi alone (False). ``ready`` waits for the first idle frame.
    ``terminal``: an :class:`AnsweringTerminal` that answers the command's queries.
    Every session is killed at teardown."""
    sessions: list[PiSession] = []

    def make(
        *pi_args: str,
        argv: Sequence[str] | None = None,
        wrap: bool = True,
        test_ext: bool = True,
        extensions: Sequence[Path | str] = (),
        cuewrap_args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        dimensions: tuple[int, int] = (40, 120),
        ready: bool = True,
        terminal: AnsweringTerminal | None = None,
    ) -> PiSession:
        log_path = pi_home.root / f"cuewrap-{len(sessions)}.log"
        if argv is None:
            exts: list[str] = []
            for e in ([TEST_EXT] if test_ext else []) + list(extensions):
                exts += ["-e", str(e)]
            argv = pi_argv([*exts, *pi_args], wrap=wrap, log_path=log_path,
                           cuewrap_args=cuewrap_args)  # fmt: skip
        full_env = dict(pi_home.env)
        if env:
            full_env.update(env)
        s = PiSession(argv, env=full_env, cwd=pi_home.cwd, log_path=log_path,
                      dimensions=dimensions, terminal=terminal)  # fmt: skip
        sessions.append(s)
        if ready:
            s.wait_ready()
        return s

    yield make
    for s in sessions:
        s.close()
