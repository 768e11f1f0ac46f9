"""tmux on cuewrap's one loop: a control-mode client that only listens, and short commands.

``ControlClient`` — the event source, a control-mode client (``tmux -C``) in one of two kinds:

- ``listen``: ``tmux -S <socket> -C wait-for <channel>`` attaches to no session: its one
  command waits on a channel nobody signals, and meanwhile tmux sends it the notifications
  that go to every control client (``%session-window-changed``, ``%window-pane-changed``,
  ``%client-detached``, ``%sessions-changed``, …). The user cannot see it: it is not in
  ``list-clients``, makes no session count as attached, takes no part in sizes or focus.
  But tmux tells only *attached* control clients when a client attaches or switches session
  (``%client-session-changed``).
- ``attach``: ``tmux -S <socket> -C attach-session -t <session> -f no-output,ignore-size,read-only``
  also gets ``%client-session-changed``. ``no-output`` keeps the panes' output out of the
  pipe, ``ignore-size`` keeps it out of window sizing, ``read-only`` from acting on anything.
  It is still a client of Pi's session: ``tmux ls`` shows the session attached, and tmux
  counts it as a focused client of Pi's window, so with ``focus-events on`` Pi's pane would
  never be told that the user's terminal lost focus.

``cuewrap.tmux.side`` uses ``listen`` with ``focus-events on`` (tmux's own focus reports then
say attach, switch and detach) and ``attach`` without (nothing else would say them).
Its stdout is one more reader on the relay loop; closing its stdin ends it. A new client's
first line (tmux answers its start with an empty ``%begin``/``%end`` block) says tmux has it
among its clients: from then on it is told of every change (``on_up``).

``run_tmux`` — the questions and the messages. Each is one short ``tmux`` process (several
commands joined by ``;``) whose output is read on the loop and whose exit is reaped there
(``cuewrap.workers``: a pidfd where there is one); it never blocks the loop, and one that
hangs is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from collections.abc import Callable, Mapping
from typing import Literal

from cuewrap.loop import Loop
from cuewrap.tmux.command import socket_of, tmux_argv
from cuewrap.tmux.protocol import ControlReader, Notification
from cuewrap.workers import Reaper, spawn

Kind = Literal["listen", "attach"]
ATTACH_FLAGS = "no-output,ignore-size,read-only"
READ_SIZE = 65536
RUN_TIMEOUT = 5.0  # seconds a tmux command may take before it is killed
MAX_OUTPUT = 1 << 20  # bytes of a command's output kept


def session_of(env: Mapping[str, str]) -> str | None:
    """The session of ``$TMUX`` as a target (``$N``: its third field is the session's id).
    Attaching with a pane or window as the target would make that window the session's
    current one: a cuewrap in a background window would pull the user's view to it."""
    fields = env.get("TMUX", "").split(",")
    return f"${fields[2]}" if len(fields) >= 3 and fields[2].isdigit() else None


def _child_env(env: Mapping[str, str]) -> dict[str, str]:
    # not nested (TMUX) and not speaking for a pane (TMUX_PANE): the socket is given with -S
    return {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}


def _spawn(argv: list[str], env: Mapping[str, str], stdin: int) -> subprocess.Popen[bytes] | None:
    try:  # its own session: job-control signals for cuewrap's group stay away
        return spawn(argv, env=_child_env(env), stdin=stdin, stdout=subprocess.PIPE)
    except (OSError, subprocess.SubprocessError):
        return None


class ControlClient:
    """Notifications from tmux, read on the loop; ``on_exit`` when the client ends."""

    def __init__(
        self,
        loop: Loop,
        env: Mapping[str, str],
        kind: Kind,
        target: str,
        *,
        on_notification: Callable[[Notification], None],
        on_exit: Callable[[], None],
        reap: Callable[[subprocess.Popen[bytes]], None],
        on_up: Callable[[], None] | None = None,
    ) -> None:
        self.loop = loop
        self.env = env
        self.kind: Kind = kind
        self.target = target
        self.on_notification = on_notification
        self.on_exit = on_exit
        self.reap = reap
        self.on_up = on_up  # once per start, at the client's first line
        self._up = False
        self.proc: subprocess.Popen[bytes] | None = None
        self.reader = ControlReader()
        self._fd = -1

    @property
    def running(self) -> bool:
        return self.proc is not None

    def start(self) -> bool:
        socket = socket_of(self.env)
        if not socket:
            return False
        if self.kind == "listen":
            channel = f"cuewrap-{os.getpid()}-{secrets.token_hex(4)}"  # never signalled
            command = ["wait-for", channel]
        else:
            target = session_of(self.env) or self.target
            command = ["attach-session", "-t", target, "-f", ATTACH_FLAGS]
        proc = _spawn(["tmux", "-S", socket, "-C", *command], self.env, subprocess.PIPE)
        if proc is None:
            return False
        self.reader = ControlReader()  # nothing of an earlier client's partial line
        self._up = False
        assert proc.stdout is not None
        self.proc = proc
        self._fd = proc.stdout.fileno()
        os.set_blocking(self._fd, False)
        self.loop.add_reader(self._fd, self._on_readable)
        return True

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._stop()
            self.on_exit()
            return
        items = self.reader.feed(data)
        if items and not self._up:
            self._up = True
            if self.on_up is not None:
                self.on_up()
        for item in items:
            if isinstance(item, Notification) and item.name != "exit":
                self.on_notification(item)

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self.loop.remove_reader(self._fd)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()  # EOF on its stdin ends a control client
        self.reap(proc)

    def close(self) -> None:
        self._stop()


class _Run:
    """One short tmux command: its output read on the loop, its exit from the reaper (which
    KILLs it after RUN_TIMEOUT); ``done`` once both are in."""

    def __init__(
        self,
        loop: Loop,
        proc: subprocess.Popen[bytes],
        reaper: Reaper,
        done: Callable[[int | None, str], None],
    ) -> None:
        assert proc.stdout is not None
        self.loop = loop
        self.stdout = proc.stdout
        self.done = done
        self.out = bytearray()
        self.fd = proc.stdout.fileno()
        self.eof = False
        self.code: int | None = None
        self.exited = False
        os.set_blocking(self.fd, False)
        loop.add_reader(self.fd, self._on_readable)
        reaper.add(proc, RUN_TIMEOUT, self._on_exit)

    def _on_readable(self) -> None:
        try:
            data = os.read(self.fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            if len(self.out) < MAX_OUTPUT:
                self.out += data
            return
        self.loop.remove_reader(self.fd)
        with contextlib.suppress(OSError):
            self.stdout.close()
        self.eof = True
        self._finish()

    def _on_exit(self, code: int) -> None:
        self.code, self.exited = code, True
        self._finish()

    def _finish(self) -> None:
        if self.eof and self.exited:
            self.done(self.code, self.out.decode("utf-8", "replace"))


def run_tmux(
    loop: Loop,
    reaper: Reaper,
    env: Mapping[str, str],
    args: list[str],
    done: Callable[[int | None, str], None],
) -> bool:
    """Run ``tmux -S <socket> ARGS…`` off the loop; ``done(status, stdout)`` when it ended.
    False when it could not be started (then ``done`` is never called)."""
    argv = tmux_argv(env, args)
    if argv is None:
        return False
    proc = _spawn(argv, env, subprocess.DEVNULL)
    if proc is None:
        return False
    _Run(loop, proc, reaper, done)
    return True
