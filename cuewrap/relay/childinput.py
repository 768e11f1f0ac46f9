"""The child's input: what goes into its PTY, written in order (the relay's I/O on that side).

What the host's keys become on the way (focus reports taken out, the terminal's answers) is the
input path's (``relay/inputpath.py``, sans I/O), which this object holds for the relay and its
controls; here they are written. Each unit is written whole or, when the PTY takes only part
of it, the rest first at the next chance: a focus report is one unit, never split (a split
``ESC [O`` reads as the Escape key in Pi). While more than ``INPUT_BACKLOG`` bytes wait, the
host's stdin is not read (the child is not reading: backpressure instead of a growing queue).
cuewrap's own keys (an answer to a dialog) go in only in one write, at a safe point of the input
and when nothing else waits (:meth:`ChildInput.write_whole`).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable

from cuewrap.loop import Loop
from cuewrap.relay.inputpath import InputPath

INPUT_BACKLOG = 1 << 20  # stop reading stdin while this much input waits for the child
NOT_READING = "the child is not reading its input"


class ChildInput:
    def __init__(
        self,
        loop: Loop,
        master_fd: int,
        input: InputPath,
        stdin: tuple[int, Callable[[], None]],
    ) -> None:
        """``stdin``: the host's input fd and the relay's reader of it (taken off the loop
        while the child is not reading, put back once it is)."""
        self.loop = loop
        self.master_fd = master_fd
        self.input = input  # the host's input on its way here (its safe points: write_whole)
        self._stdin_fd, self._on_stdin = stdin
        self._stdin_open = True
        self.open = True  # the PTY's master: False once the child's side closed
        self.waiting: deque[bytes] = deque()  # write units; a focus report is one unit
        self._waiting_len = 0
        self._writer_on = False  # the loop watches the master for writability
        self._stdin_paused = False  # stdin not read: too much input waits for the child

    def queue(self, data: bytes) -> None:
        """``data`` for the child, after what waits (as one unit)."""
        if not self.open:
            return
        self.waiting.append(data)
        self._waiting_len += len(data)
        self._write()

    def typed(self, data: bytes) -> bool:
        """One read of the host's input, written now if it passes as it came (the usual
        keystroke: ``InputPath.passes``), before anything else is done with it; whether it
        did (then ``InputPath.typed`` says what it sets off; otherwise nothing was done)."""
        if self.input.passes(data):
            self.send(data)
            return True
        return False

    def send(self, data: bytes) -> None:
        """:meth:`queue`, its usual case first: nothing waits, so ``data`` is written now,
        without the queue (the user's keystroke, before anything else is done with it); what
        the PTY does not take waits, as :meth:`queue` leaves it."""
        if self.waiting or not self.open:
            self.queue(data)
            return
        try:
            n = os.write(self.master_fd, data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError:
            return  # as ``_write``: input the PTY refuses is dropped
        if n != len(data):
            self.queue(data[n:] if n else data)

    def write_whole(self, data: bytes) -> str | None:
        """cuewrap's own keys: one write, only at a safe point of the input (not in the middle
        of a key sequence or a paste) and when nothing of the user's waits. None once written
        (a part the PTY did not take is queued, in order); otherwise why not, and nothing was
        written."""
        busy = self.input.busy
        if busy:
            return busy
        if self.waiting or not self.open:
            return NOT_READING
        try:
            n = os.write(self.master_fd, data)
        except OSError:
            return NOT_READING
        if n != len(data):  # a PTY takes a few bytes whole; keep the rest in order anyway
            self.queue(data[n:])
        return None

    def _write(self) -> None:
        waiting = self.waiting
        while waiting:
            unit = waiting[0]
            try:
                n = os.write(self.master_fd, unit)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                waiting.clear()
                self._waiting_len = 0
                break
            self._waiting_len -= n
            if n < len(unit):
                waiting[0] = unit[n:]
                break
            waiting.popleft()
        # flags, not selector look-ups: this runs for every keystroke
        more = bool(waiting)
        if more != self._writer_on:
            self._writer_on = more
            if more:
                self.loop.add_writer(self.master_fd, self._write, guarded=False)
            else:
                self.loop.remove_writer(self.master_fd)
        # backpressure: stop reading the host while the child is not reading
        if self._stdin_open:
            full = self._waiting_len > INPUT_BACKLOG
            if full != self._stdin_paused:
                self._stdin_paused = full
                if full:
                    self.loop.remove_reader(self._stdin_fd)
                else:
                    self.loop.add_reader(self._stdin_fd, self._on_stdin, guarded=False)

    def stdin_ended(self) -> None:
        """The host's input ended: never watched again (no backpressure to lift)."""
        self._stdin_open = False

    def eof(self) -> None:
        """The host's input (a pipe or /dev/null) ended: the child is told, as a terminal user
        would with ^D (its PTY's VEOF character)."""
        try:
            self.queue(termios_veof(self.master_fd))
        except OSError:
            pass

    def close(self) -> None:
        """The master closed (the child's output ended): nothing more is written."""
        self.loop.remove_writer(self.master_fd)
        self._writer_on = False
        self.open = False


def termios_veof(fd: int) -> bytes:
    import termios

    cc = termios.tcgetattr(fd)[6]
    veof = cc[termios.VEOF]
    return veof if isinstance(veof, bytes) else bytes([veof])
