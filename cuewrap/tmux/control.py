"""Short tmux commands on cuewrap's one loop.

``run_tmux`` — the questions and the messages. Each is one short ``tmux`` process (several
commands joined by ``;``) whose output is read on the loop and whose exit is reaped there
(``cuewrap.workers``: a pidfd where there is one); it never blocks the loop, and one that
hangs is killed. Each is an ordinary command client of the user's server, never a
control-mode client (``tmux -C``): tmux up to 3.5a crashes when a notification meets a
control client that is still identifying (docs/tmux-and-ssh.md#why-no-control-client).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Mapping

from cuewrap.loop import Loop
from cuewrap.tmux.command import tmux_argv
from cuewrap.workers import Reaper, spawn

READ_SIZE = 65536
RUN_TIMEOUT = 5.0  # seconds a tmux command may take before it is killed
MAX_OUTPUT = 1 << 20  # bytes of a command's output kept


def _child_env(env: Mapping[str, str]) -> dict[str, str]:
    # not nested (TMUX) and not speaking for a pane (TMUX_PANE): the socket is given with -S
    return {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}


def _spawn(argv: list[str], env: Mapping[str, str], stdin: int) -> subprocess.Popen[bytes] | None:
    try:  # its own session: job-control signals for cuewrap's group stay away
        return spawn(argv, env=_child_env(env), stdin=stdin, stdout=subprocess.PIPE)
    except (OSError, subprocess.SubprocessError):
        return None


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
