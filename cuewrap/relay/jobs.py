"""Job control (docs/design.md#real-environments): the child and cuewrap stop together and continue
together.

The child runs under cuewrap's own session leader (``relay/leader.py``), so its stops are real and
reported. Three ways in:

- **The child stopped** (Pi's Ctrl-Z, ``kill -TSTP``/``-STOP`` of Pi): what it wrote before
  stopping is relayed, the terminal is given back as the user had it (the child's leftover
  modes undone, cuewrap's modes off, title restored, cooked settings), and cuewrap stops its
  own job with ``kill(0, SIGTSTP)`` — the user's shell prints "Stopped" and its prompt. When
  the shell continues it (``fg``), cuewrap takes the terminal again (settings saved anew, raw,
  focus reporting, title stack, the child's modes and title), sets the size, and continues the
  child's group; a child that did not restore the terminal itself before stopping is made to
  redraw (its width is nudged and set back).
- **SIGTSTP to cuewrap** (``kill -TSTP``): the child's group is told first (Pi 1.6 then stops
  its UI cleanly like Ctrl-Z); if it has not stopped after ``STOP_WAIT`` it gets SIGSTOP. Its
  stop then goes the way above.
- **SIGCONT to cuewrap** that it did not stop for itself (a SIGSTOP, which cannot be caught):
  if the shell changed the terminal meanwhile, raw mode and cuewrap's modes come back and the
  child redraws.

If cuewrap's own group is orphaned (no shell with job control above it), its stop is discarded
by the kernel and everything continues at once: the child is never left stopped.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Protocol

from cuewrap.host import HostTerminal, get_size
from cuewrap.loop import Loop, Timer
from cuewrap.relay.leader import ChildContinued, ChildEvent, ChildStopped

STOP_WAIT = 1.0  # seconds the child has to stop after SIGTSTP before it gets SIGSTOP
NUDGE = 0.15  # seconds the child's width stays one column narrower to make it redraw


class Stoppable(Protocol):
    def signal_group(self, sig: int) -> None: ...
    def setwinsize(self, rows: int, cols: int) -> None: ...


class RelaySide(Protocol):
    """What job control needs from the relay."""

    def drain_output(self) -> None: ...
    def resize(self) -> None: ...


class Sequences(Protocol):
    """What the terminal needs at a stop and after it (``relay/reactions.py``, from the
    output path)."""

    def restore_sequence(self) -> bytes: ...
    def resume_sequence(self) -> bytes: ...


class JobControl:
    def __init__(
        self,
        loop: Loop,
        host: HostTerminal,
        child: Stoppable,
        relay: RelaySide,
        *,
        sequences: Sequences,
        on_change: Callable[[str], None],
    ) -> None:
        self.loop = loop
        self.host = host
        self.child = child
        self.relay = relay
        self.sequences = sequences
        self.on_change = on_change  # "stopped" / "continued" (the cue side re-applies marks)
        self._stop_timer: Timer | None = None
        self._nudge_timer: Timer | None = None

    # -- ways in ------------------------------------------------------------------------------
    def child_event(self, event: ChildEvent) -> None:
        if isinstance(event, ChildStopped):
            self._stop_pair()
        elif isinstance(event, ChildContinued):
            pass  # we continued it (or someone else did): nothing to undo

    def tstp(self) -> None:
        """SIGTSTP to cuewrap: the child first (it may restore its UI), then the pair."""
        self.child.signal_group(signal.SIGTSTP)
        if self._stop_timer is None:
            self._stop_timer = self.loop.call_later(STOP_WAIT, self._force_stop)

    def cont(self) -> None:
        """SIGCONT to cuewrap: after a stop it could not see, take the terminal back."""
        if not self.host.lost_raw():
            return  # our own continue (already handled), or nothing changed
        self.host.reassert()
        self._nudge()
        self.on_change("continued")

    def close(self) -> None:
        for timer in (self._stop_timer, self._nudge_timer):
            if timer is not None:
                timer.cancel()

    # -- the pair ---------------------------------------------------------------------------
    def _force_stop(self) -> None:
        self._stop_timer = None
        self.child.signal_group(signal.SIGSTOP)

    def _stop_pair(self) -> None:
        if self._stop_timer is not None:
            self._stop_timer.cancel()
            self._stop_timer = None
        self.relay.drain_output()  # what the child wrote before it stopped comes first
        leftover = self.sequences.restore_sequence()  # empty if it restored the terminal itself
        self.on_change("stopped")
        self.host.suspend(leftover)
        _stop_own_job(self.host.stdin_fd)  # returns in the foreground (or if orphaned)
        self.host.resume()
        self.host.write(self.sequences.resume_sequence())
        self.relay.resize()
        self.child.signal_group(signal.SIGCONT)
        if leftover:
            self._nudge()
        self.on_change("continued")

    def _nudge(self) -> None:
        """Make the child redraw: one column narrower for a moment, then the real size (a
        full-screen program redraws on a width change; the same size again would not)."""
        size = get_size(self.host.stdout_fd, self.host.stdin_fd)
        if size is None or size[1] < 2:
            return
        try:
            self.child.setwinsize(size[0], size[1] - 1)
        except OSError:
            return
        if self._nudge_timer is not None:
            self._nudge_timer.cancel()
        self._nudge_timer = self.loop.call_later(NUDGE, self._nudged)

    def _nudged(self) -> None:
        self._nudge_timer = None
        self.relay.resize()


def _stop_own_job(fd: int) -> None:
    """Stop cuewrap's process group (the user's job) as a stopped program does, and return
    once it is continued in the foreground. Continued in the background (``bg``), the terminal
    is not cuewrap's to take: it stops again as a program that needs the terminal does
    ("Stopped (tty output)"), until ``fg``. (Taking it from the background would stop cuewrap
    inside ``tcsetattr``, which ``fg`` then interrupts: the terminal stayed cooked.)"""
    sig = signal.SIGTSTP
    while True:
        old = signal.signal(sig, signal.SIG_DFL)
        try:
            os.kill(0, sig)
        finally:
            signal.signal(sig, old)
        if _in_foreground(fd) or _orphaned():
            return
        sig = signal.SIGTTOU


def _in_foreground(fd: int) -> bool:
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return True  # no terminal to wait for


def _orphaned() -> bool:
    """No shell with job control above cuewrap's group: its stops are discarded."""
    try:
        parent = os.getppid()
        return os.getsid(parent) != os.getsid(0) or os.getpgid(parent) == os.getpgrp()
    except OSError:
        return True
