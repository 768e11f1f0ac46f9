"""The session's one desktop worker process (``dbus_worker.py``), shared by its two users:
the notifications (``dbus.DBusNotifier``) and the do-not-disturb watch (``dnd.DesktopWatch``).

One process instead of one each: every Python interpreter costs a few MB of memory of its own
(docs/benchmarks.md, the footprint). ``for_loop(loop, env)`` gives the loop's helper (one per
session); a user ``attach``es under its name (the process starts with the first), writes
requests, and gets the lines meant for it: the watch's are ``{"dnd": …}``, every other line
is the notifications'. When the process ends (or sends an overlong line) every user is told
(``on_end(reason)``) and detached; the next ``attach`` starts a new one. The last user to
``detach`` stops it (stdin closed, SIGTERM; KILLed a second later).

It runs as ``python -S -P`` with cuewrap's ``sys.path`` given on its command line (not the
current directory): no site (the editable install's import hook, .pth files), only what it
imports itself (``workers.python_worker``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from cuewrap.loop import Loop
from cuewrap.workers import Reaper, kill_group, python_worker, spawn

MAX_LINE = 8192
MODULE = "cuewrap.deliver.dbus_worker"

OnMessage = Callable[[dict[str, Any]], None]
OnEnd = Callable[[str], None]

_HELPERS: weakref.WeakKeyDictionary[Loop, DesktopHelper] = weakref.WeakKeyDictionary()


def for_loop(loop: Loop, env: Mapping[str, str], python: str | None = None) -> DesktopHelper:
    """The session's helper (one per loop: the first caller's ``env`` and ``python``)."""
    helper = _HELPERS.get(loop)
    if helper is None:
        helper = _HELPERS[loop] = DesktopHelper(loop, env, python)
    return helper


class DesktopHelper:
    def __init__(self, loop: Loop, env: Mapping[str, str], python: str | None = None) -> None:
        self.loop = loop
        self.env = dict(env)
        self.python = python or sys.executable
        self._proc: subprocess.Popen[bytes] | None = None
        self._fd = -1
        self._buf = b""
        self._users: dict[str, tuple[OnMessage, OnEnd]] = {}
        self._reaper = Reaper(loop)

    @property
    def running(self) -> bool:
        return self._proc is not None

    def attach(self, name: str, on_message: OnMessage, on_end: OnEnd) -> str:
        """``name`` gets its lines from now on, the process started if it is not running;
        "" or why it cannot start."""
        if self._proc is None:
            why = self._start()
            if why:
                return why
        self._users[name] = (on_message, on_end)
        return ""

    def detach(self, name: str) -> None:
        """``name`` is done; the last one out stops the process."""
        self._users.pop(name, None)
        if not self._users:
            self._stop()

    def write(self, msg: dict[str, Any]) -> bool:
        """One request line (a few hundred bytes into a pipe the worker drains: does not
        block); False when the process cannot be written to (it is then ended)."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        try:
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()
        except (OSError, ValueError):
            self._end("cannot talk to the desktop worker")
            return False
        return True

    def close(self, timeout: float = 0.5) -> None:
        """cuewrap exits: the process goes (its notifications still shown stay)."""
        self._users.clear()
        self._stop()
        self._reaper.close(timeout)

    # -- the process ---------------------------------------------------------------------
    def _start(self) -> str:
        try:
            proc = spawn(
                python_worker(self.python, MODULE, lean=sys.path),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=self.env,
                die_with_parent=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"cannot start: {exc}"
        assert proc.stdout is not None
        self._proc = proc
        self._fd = proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self.loop.add_reader(self._fd, self._on_readable)
        return ""

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self._end(f"desktop worker pipe: {exc}")
            return
        if not data:
            self._end("the desktop worker ended")
            return
        self._buf += data
        while b"\n" in self._buf and self._proc is not None:
            line, self._buf = self._buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            name, body = (
                ("dnd", msg["dnd"]) if isinstance(msg.get("dnd"), dict) else ("notify", msg)
            )
            user = self._users.get(name)
            if user is not None:
                user[0](body)
        if len(self._buf) > MAX_LINE:
            self._end("the desktop worker sent an overlong line")

    def _end(self, reason: str) -> None:
        """The process is unusable: every user told, the process stopped."""
        users, self._users = self._users, {}
        self._stop()
        for _, on_end in users.values():
            on_end(reason)

    def _stop(self) -> None:
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
        self._reaper.add(proc, kill_after=1.0)
