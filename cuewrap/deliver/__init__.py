"""Effectors: what performs the engine's effects at the edge (SPEC 7).

- ``title``: title marks composed onto the child's own title (pure: returns bytes).
- ``terminal``: terminal notifications (OSC 777 / 9 / 99, tmux passthrough; pure build).
- ``desktop``: desktop notifications through notify-py, off the loop, results via a pipe.
- ``keepawake``: the idle/sleep inhibitor process.

Nothing here writes to stdout/stderr: the bytes go to the relay, which injects them at safe
points; every state goes to a callback for the decision log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from cuewrap.loop import Loop, Timer

_POLL = 0.05  # reap poll, only while a reap is pending and only without pidfd


def open_pidfd(loop: Loop, pid: int, callback: Callable[[], None]) -> int | None:
    """Register ``callback`` for when ``pid`` exits (a pidfd, Linux ≥ 5.3); None elsewhere."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:
        return None
    loop.add_reader(fd, callback)
    return fd


def close_pidfd(loop: Loop, fd: int | None) -> None:
    if fd is not None:
        loop.remove_reader(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


def kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Signal the process group ``proc`` leads (spawned with ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


@dataclass
class _Pending:
    proc: subprocess.Popen[bytes]
    pidfd: int | None
    deadline: float
    timer: Timer | None = None


class Reaper:
    """Reaps exiting children off the loop; KILLs the group of one that outlives its deadline.

    Uses a pidfd reader where there is one, else a short poll timer that exists only while a
    reap is pending (no timer while idle). ``close()`` finishes synchronously (at exit).
    """

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self._pending: dict[int, _Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, proc: subprocess.Popen[bytes], kill_after: float) -> None:
        if proc.poll() is not None or proc.pid in self._pending:
            return
        pid = proc.pid
        entry = _Pending(proc, None, self.loop.clock() + kill_after)
        self._pending[pid] = entry
        entry.pidfd = open_pidfd(self.loop, pid, lambda: self._check(pid))
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
            entry.timer = self.loop.call_later(_POLL, lambda: self._check(pid))
        elif now < entry.deadline:
            entry.timer = self.loop.call_later(entry.deadline - now, lambda: self._check(pid))
        else:  # already KILLed: the pidfd turns readable when it is gone
            entry.timer = None

    def _check(self, pid: int) -> None:
        entry = self._pending.get(pid)
        if entry is None:
            return
        if entry.proc.poll() is not None:
            self._forget(pid)
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
        close_pidfd(self.loop, entry.pidfd)
        return entry
