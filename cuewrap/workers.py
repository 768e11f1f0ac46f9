"""Worker processes: the one place that spawns, watches, kills and reaps cuewrap's helpers —
desktop notifications, ``notify.command``, the keep-awake inhibitor and the screen worker.

- ``spawn()``: a plain fork/exec, never waited for. Every worker gets its own session (no
  controlling terminal, so no terminal signals; its own process group, so ``kill_group`` takes
  grandchildren too), no inherited fds, stderr on /dev/null unless asked (nothing reaches the
  user's screen), and optionally ``PR_SET_PDEATHSIG`` (Linux) so it dies with cuewrap.
- ``watch_exit()``: a pidfd on the ``Loop`` (Linux ≥ 5.3): the callback runs once the process
  has exited. No polling and no SIGCHLD handler (the relay's SIGCHLD is for the child only).
- ``Reaper``: reaps exiting workers off the loop, KILLs the group of one that outlives its
  deadline, and reports each exit status if asked. Only where there is no pidfd (macOS, old
  kernels) does it poll, with a timer that exists only while a reap is pending.

The child (Pi) is reaped by its session leader (relay/leader.py); nothing here touches it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from cuewrap.loop import Loop, Timer

POLL = 0.05  # reap poll, only while a reap is pending and only without pidfd
_PR_SET_PDEATHSIG = 1

Stream = int | IO[bytes] | None
"""What ``subprocess.Popen`` accepts for a standard stream (``subprocess.PIPE`` etc.)."""

OnExit = Callable[[int], None]
"""``on_exit(returncode)``: negative for a signal, as ``Popen.returncode``."""


def python_worker(python: str, module: str, lean: list[str] | None = None) -> list[str]:
    """The argv that runs ``main()`` of cuewrap's ``module`` in a fresh interpreter ``python``
    (the desktop workers): cuewrap's own root first on ``sys.path``, so the worker runs the
    same code as this process whether it is installed or not; its exit status is ``main``'s.

    ``lean``: run it without site (``-S``: no .pth files, no editable install's import hook,
    a few MB less), these directories (cuewrap's ``sys.path``) on its path instead, and
    without the current directory on it (``-P``, and not from ``lean``): a ``json.py`` of the
    project cuewrap runs in is never the worker's."""
    boot = f"import sys; sys.path[:0] = sys.argv[1:]; from {module} import main; sys.exit(main())"
    if lean is None:
        return [python, "-c", boot, _PACKAGE_ROOT]
    try:
        here = os.getcwd()
    except OSError:  # removed under us: nothing of it to leave out
        here = ""
    paths = [p for p in lean if p and os.path.isdir(p) and os.path.abspath(p) != here]
    return [python, "-S", "-P", "-c", boot, _PACKAGE_ROOT, *paths]


_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spawn(
    argv: Sequence[str],
    *,
    stdin: Stream = subprocess.DEVNULL,
    stdout: Stream = subprocess.DEVNULL,
    stderr: Stream = subprocess.DEVNULL,
    env: Mapping[str, str] | None = None,
    die_with_parent: bool = False,
) -> subprocess.Popen[bytes]:
    """Start a worker in its own session. Raises ``OSError`` / ``SubprocessError``.

    ``die_with_parent``: SIGKILL it when cuewrap dies (Linux; the kernel fires this when the
    *thread* that spawned it exits, so spawn from the loop thread)."""
    return subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=None if env is None else dict(env),
        close_fds=True,
        start_new_session=True,  # no terminal signals; its own group for kill_group
        preexec_fn=pdeathsig_preexec() if die_with_parent else None,
    )


def pdeathsig_preexec() -> Callable[[], None] | None:
    """A preexec_fn that asks the kernel to SIGKILL the child when cuewrap dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: nothing fancy
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # cuewrap already died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Signal the process group ``proc`` leads (spawned by ``spawn``: its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def watch_exit(loop: Loop, pid: int, callback: Callable[[], None]) -> int | None:
    """Run ``callback`` on the loop once ``pid`` exits (a pidfd, Linux ≥ 5.3); the pidfd, to
    give to ``unwatch``, or None where there is none (the caller must poll)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:
        return None
    loop.add_reader(fd, callback)
    return fd


def unwatch(loop: Loop, fd: int | None) -> None:
    if fd is not None:
        loop.remove_reader(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


@dataclass
class _Pending:
    proc: subprocess.Popen[bytes]
    pidfd: int | None
    deadline: float
    on_exit: OnExit | None
    timer: Timer | None = None


class Reaper:
    """Reaps exiting workers off the loop; KILLs the group of one that outlives its deadline.

    ``add(proc, kill_after, on_exit)``: the process was told to end (or is ending by itself);
    it is reaped when it exits (pidfd), its group KILLed ``kill_after`` seconds from now if it
    has not, and ``on_exit(returncode)`` called once it is reaped. ``close()`` finishes
    synchronously (at exit, bounded).
    """

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self._pending: dict[int, _Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(
        self, proc: subprocess.Popen[bytes], kill_after: float, on_exit: OnExit | None = None
    ) -> None:
        code = proc.poll()
        if code is not None:
            if on_exit is not None:
                on_exit(code)
            return
        if proc.pid in self._pending:
            return
        pid = proc.pid
        entry = _Pending(proc, None, self.loop.clock() + kill_after, on_exit)
        self._pending[pid] = entry
        entry.pidfd = watch_exit(self.loop, pid, lambda: self._check(pid))
        self._schedule(entry, pid)

    def close(self, timeout: float = 0.5) -> None:
        """Reap everything now (bounded), and KILL what is left of each group."""
        for pid in list(self._pending):
            entry = self._forget(pid)
            try:
                entry.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            # leftovers of the group (grandchildren, a watcher) go now, not a second later
            kill_group(entry.proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                entry.proc.wait(timeout=timeout)

    def _schedule(self, entry: _Pending, pid: int) -> None:
        now = self.loop.clock()
        if entry.pidfd is None:
            entry.timer = self.loop.call_later(POLL, lambda: self._check(pid))
        elif now < entry.deadline:
            entry.timer = self.loop.call_at(entry.deadline, lambda: self._check(pid))
        else:  # already KILLed: the pidfd turns readable when it is gone
            entry.timer = None

    def _check(self, pid: int) -> None:
        entry = self._pending.get(pid)
        if entry is None:
            return
        code = entry.proc.poll()
        if code is not None:
            self._forget(pid)
            if entry.on_exit is not None:
                entry.on_exit(code)
            return
        if entry.timer is not None:
            entry.timer.cancel()
        if self.loop.clock() >= entry.deadline:
            kill_group(entry.proc, signal.SIGKILL)
        self._schedule(entry, pid)

    def _forget(self, pid: int) -> _Pending:
        entry = self._pending.pop(pid)
        if entry.timer is not None:
            entry.timer.cancel()
        unwatch(self.loop, entry.pidfd)
        return entry


class JsonWorker:
    """A long-lived Python worker that talks JSON lines: requests written to its stdin, each
    line of its stdout handed to ``on_message`` (a dict; anything else skipped), on the loop.
    ``on_end(reason)`` once it ended or became unusable (an error, EOF, a line over
    ``max_line``); it is then stopped. ``stop()`` closes its pipes (it exits at EOF), TERMs its
    group and has it reaped (KILLed a second later)."""

    def __init__(
        self,
        loop: Loop,
        argv: Sequence[str],
        env: Mapping[str, str],
        on_message: Callable[[dict[str, object]], None],
        on_end: Callable[[str], None],
        *,
        name: str,
        reaper: Reaper,
        max_line: int = 1 << 16,
    ) -> None:
        self.loop = loop
        self.argv = list(argv)
        self.env = dict(env)
        self.on_message = on_message
        self.on_end = on_end
        self.name = name  # "the desktop worker": its reasons say it
        self.reaper = reaper
        self.max_line = max_line
        self._proc: subprocess.Popen[bytes] | None = None
        self._fd = -1
        self._buf = b""

    @property
    def running(self) -> bool:
        return self._proc is not None

    def start(self) -> str:
        """ "" once it runs, or why it cannot start."""
        try:
            proc = spawn(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=self.env, die_with_parent=True)  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot start: {exc}"
        assert proc.stdout is not None
        self._proc = proc
        self._fd = proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self.loop.add_reader(self._fd, self._on_readable)
        return ""

    def write(self, msg: Mapping[str, object]) -> bool:
        """One request line (a few hundred bytes into a pipe the worker drains: does not
        block); False when it cannot be written to (it is then ended)."""
        import json

        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        try:
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()
        except (OSError, ValueError):
            self._end(f"cannot talk to {self.name}")
            return False
        return True

    def _on_readable(self) -> None:
        import json

        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self._end(f"{self.name} pipe: {exc}")
            return
        if not data:
            self._end(f"{self.name} ended")
            return
        self._buf += data
        while b"\n" in self._buf and self._proc is not None:
            line, self._buf = self._buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                self.on_message(msg)
        if len(self._buf) > self.max_line:
            self._end(f"{self.name} sent an overlong line")

    def _end(self, reason: str) -> None:
        self.stop()
        self.on_end(reason)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        self._buf = b""
        if proc is None:
            return
        self.loop.remove_reader(self._fd)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        kill_group(proc, signal.SIGTERM)  # stdin closed already: it exits by itself
        self.reaper.add(proc, kill_after=1.0)
