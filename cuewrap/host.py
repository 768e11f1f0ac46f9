"""The host terminal: raw mode, size, blocking writes that survive EAGAIN, and restore.

Every mode cuewrap turns on is recorded here and turned off again by ``restore()``, which is
safe to call more than once and on every exit path.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import struct
import termios
import tty
from collections.abc import Mapping

from cuewrap.records import TYPE_CHECKING
from cuewrap.term.sequences import TITLE_PUSH

if TYPE_CHECKING:
    from typing import Any


def is_tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def get_size(*fds: int) -> tuple[int, int] | None:
    """(rows, cols) of the first fd that is a terminal with a known size."""
    for fd in fds:
        try:
            packed = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
        except OSError:
            continue
        rows, cols = struct.unpack("HHHH", packed)[:2]
        if rows and cols:
            return rows, cols
    return None


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write everything, waiting out EAGAIN (someone may have set the tty non-blocking)."""
    try:
        n = os.write(fd, data)  # the common case: all of it, no memoryview needed
    except (BlockingIOError, InterruptedError):
        n = 0
    if n == len(data):
        return
    view = memoryview(data)[n:]
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [], 1.0)
            continue
        except InterruptedError:
            continue
        view = view[n:]


class HostTerminal:
    """Owns the host side: termios state and the modes cuewrap enabled."""

    def __init__(self, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.stdin_tty = is_tty(stdin_fd)
        self.stdout_tty = is_tty(stdout_fd)
        self._saved_attrs: list[Any] | None = None  # termios.tcgetattr's value
        self._undo: list[bytes] = []  # sequences to write at restore, in order
        self._redo: list[bytes] = []  # the ``on`` sequences, in order (written again at resume)
        self._raw_attrs: list[Any] | None = None  # what raw mode looked like when we set it
        self.out_dead = False  # the host terminal went away (EIO/EPIPE): stop writing

    def enter_raw(self) -> None:
        if not self.stdin_tty:
            return
        try:
            self._saved_attrs = termios.tcgetattr(self.stdin_fd)
            tty.setraw(self.stdin_fd, termios.TCSANOW)
            self._raw_attrs = termios.tcgetattr(self.stdin_fd)
        except termios.error:
            self._saved_attrs = None

    def enable(self, on: bytes, off: bytes) -> None:
        """Write ``on`` now and remember ``off`` for restore (last enabled, first undone)."""
        self.write(on)
        self._undo.insert(0, off)
        self._redo.append(on)

    # -- job control (docs/design.md#real-environments)
    # --------------------------------------------------------------
    def suspend(self, extra: bytes = b"") -> None:
        """Give the terminal back as the user had it (before a stop): like ``restore`` but
        every mode is remembered for ``resume``."""
        self.write(extra + b"".join(self._undo))
        if self._saved_attrs is not None:
            try:
                termios.tcsetattr(self.stdin_fd, termios.TCSADRAIN, self._saved_attrs)
            except termios.error:
                pass

    def resume(self) -> None:
        """After a continue: the user's settings saved again (they may have changed them),
        raw mode, and every mode cuewrap enabled, in the order first enabled."""
        if self._saved_attrs is not None:
            self.enter_raw()
        self.write(b"".join(self._redo))

    def lost_raw(self) -> bool:
        """True when someone else (the shell, after a SIGSTOP cuewrap could not see) changed
        the terminal's settings since cuewrap set raw mode."""
        if self._saved_attrs is None or self._raw_attrs is None:
            return False
        try:
            return termios.tcgetattr(self.stdin_fd) != self._raw_attrs
        except termios.error:
            return False

    def reassert(self) -> None:
        """Raw mode and cuewrap's modes again, keeping the settings saved at start."""
        if self._raw_attrs is not None:
            try:
                termios.tcsetattr(self.stdin_fd, termios.TCSANOW, self._raw_attrs)
            except termios.error:
                pass
        self.write(b"".join(seq for seq in self._redo if not _is_stack_push(seq)))

    def undo_at_restore(self, off: bytes) -> None:
        """Remember ``off`` for restore without writing anything now (once per sequence):
        for a mode turned on later, through the injector (the progress indicator)."""
        if off not in self._undo:
            self._undo.insert(0, off)

    def write(self, data: bytes | memoryview) -> None:
        if self.out_dead or not data:
            return
        try:
            write_all(self.stdout_fd, data)
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EPIPE, errno.EBADF, errno.ENXIO):
                self.out_dead = True
            else:
                raise

    def restore(self, extra: bytes = b"") -> None:
        """Undo everything: the child's leftover modes (``extra``), ours, then termios."""
        try:
            self.write(extra + b"".join(self._undo))
        except OSError:
            pass
        self._undo = []
        self._redo = []
        if self._saved_attrs is not None:
            try:
                termios.tcsetattr(self.stdin_fd, termios.TCSADRAIN, self._saved_attrs)
            except termios.error:
                pass
            self._saved_attrs = None


def _is_stack_push(data: bytes) -> bool:
    """A push onto a terminal stack (the title stack): writing it twice would need two pops."""
    return data == TITLE_PUSH


def term_allows_cues(env: Mapping[str, str]) -> bool:
    """docs/design.md#guard, the part about the terminal type: TERM is set and not ``dumb``."""
    term = env.get("TERM", "")
    return bool(term) and term != "dumb"


def guard_holds(host: HostTerminal, env: Mapping[str, str]) -> bool:
    """docs/design.md#guard: cues only with a TTY on both sides and a real TERM."""
    return host.stdin_tty and host.stdout_tty and term_allows_cues(env)
