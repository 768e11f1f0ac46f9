"""The desktop's do-not-disturb (``quiet.follow_desktop``; docs/attention.md): the parent side
of ``dnd_worker``, which reads the notification server's ``Inhibited``, dunst's ``paused``
and GNOME's ``show-banners`` and says when they change (no polling). It runs inside the
session's one desktop worker (``helper.py``), beside the notifications.

Started once per session where a local graphical session is (not over SSH: that desktop is
not the user's); each change goes to ``on_change(quiet)`` and the decision log
(``desktop_dnd``: quiet, what says so, what could be read). Until the worker's first word
(about a tenth of a second) the desktop counts as not quiet. Fails open: a worker that cannot
start or ends says nothing more, and the desktop counts as not quiet.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

from cuewrap.decisionlog import DecisionLog
from cuewrap.deliver.desktop import desktop_available
from cuewrap.loop import Loop
from cuewrap.workers import kill_group, python_worker, spawn


class DesktopWatch:
    def __init__(
        self,
        loop: Loop,
        env: Mapping[str, str],
        log: DecisionLog,
        on_change: Callable[[bool], None],
        python: str | None = None,
    ) -> None:
        from cuewrap.deliver.helper import for_loop

        self.log = log
        self.on_change = on_change
        self.quiet = False
        self.readable: list[str] = []
        self._helper = for_loop(loop, env, python)
        why = self._helper.attach("dnd", self._message, self._ended)
        if why:
            log.write("desktop_dnd", state="failed", why=why)
        elif not self._helper.write({"op": "watch"}):
            log.write("desktop_dnd", state="failed", why="cannot talk to the desktop worker")

    def _ended(self, reason: str) -> None:
        self.log.write("desktop_dnd", state="ended", why="the watch ended")
        if self.quiet:
            self.quiet = False
            self.on_change(False)

    def _message(self, msg: dict[str, Any]) -> None:
        quiet = msg.get("quiet") is True
        via = [str(v) for v in msg.get("via", [])][:4] if isinstance(msg.get("via"), list) else []
        readable = msg.get("readable")
        self.readable = [str(r) for r in readable][:4] if isinstance(readable, list) else []
        self.log.write("desktop_dnd", quiet=quiet, via=via, readable=self.readable)
        if quiet != self.quiet:
            self.quiet = quiet
            self.on_change(quiet)

    def close(self) -> None:
        self._helper.detach("dnd")
        if not self._helper.running:
            self._helper.close(0.5)


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
            python_worker(sys.executable, "cuewrap.deliver.dbus_worker", lean=sys.path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"op": "watch"}\n')
        proc.stdin.flush()
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return None
        line = proc.stdout.readline()
        with contextlib.suppress(ValueError):
            msg = json.loads(line)
            if isinstance(msg, dict) and isinstance(msg.get("dnd"), dict):
                return dict(msg["dnd"])
        return None
    finally:
        kill_group(proc, signal.SIGKILL)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
