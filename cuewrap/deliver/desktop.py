"""Desktop notifications through notify-py, off the relay loop (docs/design.md#delivery).

Each notification runs in a short-lived worker process (``desktop_worker.py``, started as
``workers.python_worker``, which imports it from cuewrap's own root) with stderr on /dev/null, so
nothing notify-py, loguru, D-Bus or a helper binary prints can reach the user's screen, a hung
call can be killed, and the relay process never imports notify-py (+120 ms) nor shares its GIL
with it. This module is the parent side. The talk is JSON lines over pipes:

    parent -> worker   {"title": …, "body": …}        (stdin; never argv, which ps shows)
    worker -> parent   {"ready": true}                (notify-py imported)
    parent -> worker   "go" | "abort"                 (eligibility checked right then)
    worker -> parent   {"state": …, "reason": …}      (delivered | failed | unconfirmable)

The parent reads the worker's stdout through ``loop.add_reader``; a timer bounds the whole
exchange. States reported through ``on_state(cue_id, state, reason)``: requested, then
delivered / failed / unconfirmable, or dropped-ineligible (no call made).

How the worker sends (notify-py, a checked D-Bus call, no sound) is in ``desktop_worker.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cuewrap.deliver import DeliveryState
from cuewrap.loop import Loop, Timer
from cuewrap.workers import Reaper, kill_group, python_worker, spawn

OnState = Callable[[int, DeliveryState, str], None]
"""``on_state(cue_id, state, reason)``."""

TIMEOUT = 8.0  # the whole exchange; D-Bus itself gives up after 1 s (auth) + 2 s (reply)
MAX_PENDING = 4
MAX_TEXT = 1000  # characters of title / body passed on (the engine's text is far shorter)
_MAX_LINE = 8192


# -- when to use it ---------------------------------------------------------------------------
def desktop_available(
    env: Mapping[str, str], setting: str, platform: str = sys.platform
) -> tuple[bool, str]:
    """Whether desktop notifications should be sent, and why (for doctor and the log)."""
    if setting == "off":
        return False, "notify.desktop is off"
    if setting == "on":
        return True, "notify.desktop is on"
    for var in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT"):
        if env.get(var):
            return False, f"over SSH ({var} is set): it would show on the remote machine"
    if platform == "darwin":
        return True, "macOS session"
    for var in ("WAYLAND_DISPLAY", "DISPLAY"):
        if env.get(var):
            return True, f"local graphical session ({var}={env[var]})"
    return False, "no graphical session (neither DISPLAY nor WAYLAND_DISPLAY is set)"


# -- the parent side --------------------------------------------------------------------------
@dataclass
class _Job:
    cue_id: int
    proc: subprocess.Popen[bytes]
    fd: int
    still_eligible: Callable[[], bool]
    timer: Timer | None = None
    buf: bytearray = field(default_factory=bytearray)
    requested: bool = False  # "go" was sent


class DesktopNotifier:
    def __init__(
        self,
        loop: Loop,
        on_state: OnState,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float = TIMEOUT,
        python: str | None = None,
    ) -> None:
        self.loop = loop
        self.on_state = on_state
        self.env = dict(os.environ if env is None else env)
        self.timeout = timeout
        self.python = python or sys.executable
        self._jobs: dict[int, _Job] = {}  # by stdout fd
        self._reaper = Reaper(loop)

    @property
    def pending(self) -> int:
        return len(self._jobs) + len(self._reaper)

    def send(self, cue_id: int, title: str, body: str, still_eligible: Callable[[], bool]) -> None:
        """Start one notification; the result arrives later through ``on_state``."""
        if not _eligible(still_eligible):
            self.on_state(cue_id, "dropped-ineligible", "no longer eligible before the call")
            return
        if len(self._jobs) >= MAX_PENDING:
            self.on_state(cue_id, "failed", f"{MAX_PENDING} desktop notifications still pending")
            return
        if not self.python:
            self.on_state(cue_id, "failed", "no Python interpreter to run the worker")
            return
        payload = json.dumps({"title": title[:MAX_TEXT], "body": body[:MAX_TEXT]}) + "\n"
        try:
            proc = spawn(
                python_worker(self.python, "cuewrap.deliver.desktop_worker"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self.env,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.on_state(cue_id, "failed", f"cannot start the worker: {exc}")
            return
        assert proc.stdin is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        job = _Job(cue_id, proc, fd, still_eligible)
        self._jobs[fd] = job
        # a few hundred bytes into an empty pipe: never blocks
        if not self._write(job, payload):
            self._finish(job, "failed", "cannot talk to the worker")
            return
        job.timer = self.loop.call_later(self.timeout, lambda: self._on_timeout(fd))
        self.loop.add_reader(fd, lambda: self._on_readable(fd))

    def close(self, timeout: float = 0.5) -> None:
        """Stop every worker (cuewrap is exiting) and reap them, bounded."""
        for job in list(self._jobs.values()):
            if job.requested:
                self._finish(job, "unconfirmable", "cuewrap exited before the result")
            else:
                self._finish(job, "dropped-ineligible", "cuewrap exited")
        self._reaper.close(timeout)

    # -- internals ------------------------------------------------------------------------
    def _on_readable(self, fd: int) -> None:
        job = self._jobs.get(fd)
        if job is None:
            return
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError as exc:
            self._finish(job, "failed", f"worker pipe: {exc}")
            return
        if not data:
            status = job.proc.poll()  # may not be reapable yet: EOF can come first
            how = f" (status {status})" if status is not None else ""
            self._finish(job, "failed", f"worker ended without a result{how}")
            return
        job.buf += data
        while fd in self._jobs and b"\n" in job.buf:
            line, _, rest = bytes(job.buf).partition(b"\n")
            job.buf = bytearray(rest)
            self._on_line(job, line)
        if fd in self._jobs and len(job.buf) > _MAX_LINE:
            self._finish(job, "failed", "worker sent an overlong line")

    def _on_line(self, job: _Job, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            self._finish(job, "failed", "worker sent garbage")
            return
        if not isinstance(msg, dict):
            self._finish(job, "failed", "worker sent garbage")
        elif msg.get("ready") is True and not job.requested:
            # the last moment before the call: is the cue still wanted?
            if not _eligible(job.still_eligible):
                self._write(job, "abort\n")
                self._finish(job, "dropped-ineligible", "no longer eligible before the call")
                return
            if not self._write(job, "go\n"):
                self._finish(job, "failed", "cannot talk to the worker")
                return
            job.requested = True
            self.on_state(job.cue_id, "requested", "")
        elif (state := _WORKER_STATES.get(str(msg.get("state")))) is not None:
            self._finish(job, state, str(msg.get("reason", ""))[:300], done=True)
        else:
            self._finish(job, "failed", "worker sent an unexpected message")

    def _on_timeout(self, fd: int) -> None:
        job = self._jobs.get(fd)
        if job is None:
            return
        job.timer = None
        stage = "waiting for the notification service" if job.requested else "starting"
        self._finish(job, "failed", f"timed out after {self.timeout:g} s {stage}")

    def _write(self, job: _Job, text: str) -> bool:
        assert job.proc.stdin is not None
        try:
            job.proc.stdin.write(text.encode())
            job.proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def _finish(self, job: _Job, state: DeliveryState, reason: str, *, done: bool = False) -> None:
        """End ``job``. ``done``: the worker sent its result and exits by itself."""
        self._jobs.pop(job.fd, None)
        self.loop.remove_reader(job.fd)
        if job.timer is not None:
            job.timer.cancel()
        for pipe in (job.proc.stdin, job.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if not done:
            kill_group(job.proc, signal.SIGKILL)
        self._reaper.add(job.proc, kill_after=1.0)
        self.on_state(job.cue_id, state, reason)


# the final states a worker may report, as the states they are
_WORKER_STATES: dict[str, DeliveryState] = {
    "delivered": "delivered",
    "failed": "failed",
    "unconfirmable": "unconfirmable",
}


def _eligible(check: Callable[[], bool]) -> bool:
    try:
        return bool(check())
    except Exception:  # a broken check must not send a cue that may be stale
        return False
