"""The desktop's do-not-disturb (``quiet.follow_desktop``; docs/attention.md): the parent side
of ``dnd_worker``, which reads the notification server's ``Inhibited``, dunst's ``paused``
and GNOME's ``show-banners`` and says when they change (no polling).

Started once per session where a local graphical session is (not over SSH: that desktop is
not the user's); each change goes to ``on_change(quiet)`` and the decision log
(``desktop_dnd``: quiet, what says so, what could be read). Until the worker's first word
(about a tenth of a second) the desktop counts as not quiet. Fails open: a worker that cannot
start or ends says nothing more, and the desktop counts as not quiet.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

from cuewrap.decisionlog import DecisionLog
from cuewrap.deliver.desktop import desktop_available
from cuewrap.loop import Loop
from cuewrap.workers import Reaper, kill_group, python_worker, spawn

_MAX_LINE = 4096


class DesktopWatch:
    def __init__(
        self,
        loop: Loop,
        env: Mapping[str, str],
        log: DecisionLog,
        on_change: Callable[[bool], None],
        python: str | None = None,
    ) -> None:
        self.loop = loop
        self.log = log
        self.on_change = on_change
        self.quiet = False
        self.readable: list[str] = []
        self._buf = b""
        self._reaper = Reaper(loop)
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = spawn(
                python_worker(python or sys.executable, "cuewrap.deliver.dnd_worker"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                die_with_parent=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.write("desktop_dnd", state="failed", why=f"cannot start: {exc}")
            return
        assert self._proc.stdout is not None
        self._fd = self._proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.log.write("desktop_dnd", state="ended", why="the watch ended")
            self._stop()
            if self.quiet:
                self.quiet = False
                self.on_change(False)
            return
        self._buf += data
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            with contextlib.suppress(ValueError):
                msg = json.loads(line)
                if isinstance(msg, dict):
                    self._message(msg)
        if len(self._buf) > _MAX_LINE:
            self._buf = b""

    def _message(self, msg: dict[str, Any]) -> None:
        quiet = msg.get("quiet") is True
        via = [str(v) for v in msg.get("via", [])][:4] if isinstance(msg.get("via"), list) else []
        readable = msg.get("readable")
        self.readable = [str(r) for r in readable][:4] if isinstance(readable, list) else []
        self.log.write("desktop_dnd", quiet=quiet, via=via, readable=self.readable)
        if quiet != self.quiet:
            self.quiet = quiet
            self.on_change(quiet)

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(Exception):
            self.loop.remove_reader(self._fd)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        kill_group(proc, signal.SIGTERM)
        self._reaper.add(proc, kill_after=1.0)

    def close(self) -> None:
        self._stop()
        self._reaper.close(0.5)


def watch_desktop(
    loop: Loop, env: Mapping[str, str], log: DecisionLog, on_change: Callable[[bool], None]
) -> DesktopWatch | None:
    """The watch, where a local graphical session is (else None, logged)."""
    local, why = desktop_available(env, "auto")
    if not local:
        log.write("desktop_dnd", state="not watched", why=why)
        return None
    return DesktopWatch(loop, env, log, on_change)


def read_once(env: Mapping[str, str], timeout: float = 3.0) -> dict[str, Any] | None:
    """What the watch reads first (``quiet``, ``via``, ``readable``), for ``cuewrap doctor``:
    the worker run once, blocking, bounded; None when it said nothing in time."""
    try:
        proc = spawn(
            python_worker(sys.executable, "cuewrap.deliver.dnd_worker"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        assert proc.stdout is not None
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return None
        line = proc.stdout.readline()
        with contextlib.suppress(ValueError):
            msg = json.loads(line)
            return msg if isinstance(msg, dict) else None
        return None
    finally:
        kill_group(proc, signal.SIGKILL)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
