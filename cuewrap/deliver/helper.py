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

import sys
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from cuewrap.loop import Loop
from cuewrap.workers import JsonWorker, Reaper, python_worker

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
        self._users: dict[str, tuple[OnMessage, OnEnd]] = {}
        self._reaper = Reaper(loop)
        self._worker = JsonWorker(
            loop, python_worker(self.python, MODULE, lean=sys.path), self.env, self._route,
            self._end, name="the desktop worker", reaper=self._reaper, max_line=MAX_LINE,
        )  # fmt: skip

    @property
    def running(self) -> bool:
        return self._worker.running

    def attach(self, name: str, on_message: OnMessage, on_end: OnEnd) -> str:
        """``name`` gets its lines from now on, the process started if it is not running;
        "" or why it cannot start."""
        if not self._worker.running:
            why = self._worker.start()
            if why:
                return why
        self._users[name] = (on_message, on_end)
        return ""

    def detach(self, name: str) -> None:
        """``name`` is done; the last one out stops the process."""
        self._users.pop(name, None)
        if not self._users:
            self._worker.stop()

    def write(self, msg: dict[str, Any]) -> bool:
        """One request line (a few hundred bytes into a pipe the worker drains: does not
        block); False when the process cannot be written to (it is then ended)."""
        return self._worker.write(msg)

    def close(self, timeout: float = 0.5) -> None:
        """cuewrap exits: the process goes (its notifications still shown stay)."""
        self._users.clear()
        self._worker.stop()
        self._reaper.close(timeout)

    # -- the process ---------------------------------------------------------------------
    def _route(self, msg: dict[str, Any]) -> None:
        name, body = ("dnd", msg["dnd"]) if isinstance(msg.get("dnd"), dict) else ("notify", msg)
        user = self._users.get(name)
        if user is not None:
            user[0](body)

    def _end(self, reason: str) -> None:
        """The process is unusable (it is stopped already): every user told."""
        users, self._users = self._users, {}
        for _, on_end in users.values():
            on_end(reason)
