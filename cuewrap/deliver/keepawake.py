"""Keep-awake: hold an idle/sleep inhibitor while Pi works (docs/design.md#delivery, opt-in).

``Inhibitor.hold()`` starts an inhibitor process that runs until killed; ``release()`` kills
its whole process group. Nothing here blocks the loop: spawning, noticing the exit (a pidfd on
the ``Loop``) and reaping are ``cuewrap.workers``'.

Default inhibitor (system sleep only — display sleep and screen lock are never blocked):
- Linux: ``systemd-inhibit --what=sleep --mode=block … sleep infinity``. Not ``idle``: a
  logind *idle* lock keeps the session from ever counting as idle, and KDE (PowerDevil),
  swayidle and others then never blank or lock the screen (elogind#247, systemd#29129).
  A ``sleep`` lock still refuses logind's idle-triggered suspend (IdleAction) and suspend
  requests made through logind.
- macOS: ``caffeinate -i -w <cuewrap pid>`` (idle system sleep only, no ``-d``/``-s``;
  caffeinate itself exits with cuewrap).
- otherwise, or to replace these: ``keep_awake.command`` (e.g. add ``idle`` there).

The inhibitor dies with cuewrap, even on SIGKILL, two ways at once:
1. the direct child gets ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (Linux; ``workers.spawn``'s
   ``die_with_parent``, unless ``die_with_parent=False`` is given here);
2. the command runs under a small ``/bin/sh`` watcher, in its own process group, whose stdin
   is a pipe from cuewrap: when cuewrap goes away (any way) the pipe reaches EOF and the
   watcher takes the whole group down — TERM, then KILL a second later — so grandchildren
   (``sleep infinity`` under systemd-inhibit) go too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence

from cuewrap.loop import Loop, Timer
from cuewrap.workers import Reaper, kill_group, spawn, unwatch, watch_exit

OnState = Callable[[str, str], None]
"""``on_state(state, detail)``: state is requested | held | released | failed."""

HELD_AFTER = 0.3  # still running this long after spawn = acquired
KILL_AFTER = 1.0  # TERM, then KILL the group if it is still there

# $@ = the inhibitor command. fd 0 is the pipe from cuewrap; only the watcher keeps it.
WATCHER = r"""
exec 3<&0 </dev/null
"$@" 3<&- &
child=$!
{ trap '' TERM; read -r _ <&3; kill -TERM 0; sleep 1; kill -KILL 0; } &
watcher=$!
exec 3<&-
wait "$child"
status=$?
kill -KILL "$watcher" 2>/dev/null
exit "$status"
"""


def default_inhibitor(
    platform: str = sys.platform,
    which: Callable[[str], str | None] = shutil.which,
    pid: int | None = None,
) -> list[str] | None:
    """The platform's inhibitor command, or None when there is none."""
    if platform.startswith("linux") and which("systemd-inhibit"):
        return [
            "systemd-inhibit",
            "--what=sleep",
            "--mode=block",
            "--who=cuewrap",
            "--why=Pi is working",
            "sleep",
            "infinity",
        ]
    if platform == "darwin" and which("caffeinate"):
        return ["caffeinate", "-i", "-w", str(pid if pid is not None else os.getpid())]
    return None


class Inhibitor:
    def __init__(
        self,
        loop: Loop,
        command: Sequence[str] | None,
        on_state: OnState,
        *,
        platform: str = sys.platform,
        which: Callable[[str], str | None] = shutil.which,
        die_with_parent: bool = True,
    ) -> None:
        self.loop = loop
        self.on_state = on_state
        self.die_with_parent = die_with_parent
        self.command: list[str] | None = (
            list(command) if command else default_inhibitor(platform, which)
        )
        self._proc: subprocess.Popen[bytes] | None = None
        self._pidfd: int | None = None
        self._held_timer: Timer | None = None
        self._reaper = Reaper(loop)  # released inhibitors not yet reaped

    # -- public ---------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """An inhibitor is running (requested or held)."""
        return self._proc is not None

    @property
    def pid(self) -> int | None:
        """The watcher's pid (= the inhibitor's process group), for doctor and tests."""
        return self._proc.pid if self._proc is not None else None

    @property
    def reaping(self) -> int:
        """Released inhibitors not yet reaped."""
        return len(self._reaper)

    def hold(self) -> None:
        """Start the inhibitor unless one is already running."""
        if self._proc is not None:
            return
        if not self.command:
            self.on_state("failed", "no inhibitor available (set keep_awake.command)")
            return
        try:
            proc = spawn(
                ["/bin/sh", "-c", WATCHER, "cuewrap-keepawake", *self.command],
                stdin=subprocess.PIPE,
                stderr=subprocess.PIPE,  # read only when it fails, for the reason
                die_with_parent=self.die_with_parent,  # spawned from the loop thread
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.on_state("failed", f"cannot start {self.command[0]}: {exc}")
            return
        if proc.stderr is not None:
            os.set_blocking(proc.stderr.fileno(), False)
        self._proc = proc
        self._pidfd = watch_exit(self.loop, proc.pid, self._on_exit)
        self._held_timer = self.loop.call_later(HELD_AFTER, self._on_held_timer)
        self.on_state("requested", " ".join(self.command))

    def release(self) -> None:
        """Kill the inhibitor's process group at once (also one still being acquired)."""
        proc = self._detach()
        if proc is None:
            return
        if proc.stderr is not None:
            with contextlib.suppress(OSError):
                proc.stderr.close()
        kill_group(proc, signal.SIGTERM)
        self._reaper.add(proc, kill_after=KILL_AFTER)
        self.on_state("released", "")

    def close(self, timeout: float = 0.5) -> None:
        """Release and reap synchronously (cuewrap is exiting; bounded wait)."""
        self.release()
        self._reaper.close(timeout)

    # -- internals ------------------------------------------------------------------------
    def _detach(self) -> subprocess.Popen[bytes] | None:
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if self._held_timer is not None:
            self._held_timer.cancel()
            self._held_timer = None
        unwatch(self.loop, self._pidfd)
        self._pidfd = None
        if proc.stdin is not None:  # EOF for the watcher: it takes the group down too
            with contextlib.suppress(OSError):
                proc.stdin.close()
        return proc

    @staticmethod
    def _last_words(proc: subprocess.Popen[bytes]) -> str:
        """The last line the inhibitor wrote to stderr (for the reason), closing the pipe."""
        if proc.stderr is None:
            return ""
        try:
            data = proc.stderr.read(4096) or b""
        except OSError:
            data = b""
        finally:
            with contextlib.suppress(OSError):
                proc.stderr.close()
        lines = data.decode("utf-8", "replace").strip().splitlines()
        text = "".join(ch for ch in (lines[-1] if lines else "") if ch.isprintable())
        return text[:200]

    def _on_held_timer(self) -> None:
        self._held_timer = None
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            self.on_state("held", "")
        else:
            self._on_exit()

    def _on_exit(self) -> None:
        """The running inhibitor exited without being released: it failed."""
        if self._proc is None or self._proc.poll() is None:
            return
        proc = self._detach()
        assert proc is not None
        kill_group(proc, signal.SIGKILL)  # leftovers of the group, if any
        said = self._last_words(proc)
        reason = f"inhibitor exited ({_describe(proc.returncode)})"
        self.on_state("failed", f"{reason}: {said}" if said else reason)


def _describe(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"status {returncode}"
