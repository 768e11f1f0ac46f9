"""Signals for the one loop: handlers that do nothing, the signal numbers read from a pipe.

``signal.set_wakeup_fd`` writes each caught signal's number to a non-blocking pipe; the relay
reads it on its loop (asyncio's and asciinema's way), so no Python code runs inside a handler
and an idle relay blocks in ``poll`` with no periodic timer. ``SignalPipe.uninstall`` puts back
the handlers and the wake-up fd that were there before.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable


def _terminating_signals() -> tuple[int, ...]:
    """Every catchable signal whose default action ends the process
    (docs/design.md#real-environments), except: SIGPIPE and SIGXFSZ (Python ignores them so that
    writes fail with an error instead), and the fault signals SIGSEGV, SIGBUS, SIGILL, SIGFPE (a
    Python handler cannot run for a real fault). SIGKILL cannot be caught."""
    names = (
        "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGABRT",
        "SIGTRAP", "SIGSYS", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGIO", "SIGPWR", "SIGSTKFLT",
    )  # fmt: skip
    found = {int(getattr(signal, n)) for n in names if hasattr(signal, n)}
    if hasattr(signal, "SIGRTMIN"):
        found.update(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
    return tuple(sorted(found))


TERM_SIGNALS = _terminating_signals()


class SignalPipe:
    def __init__(self, signals: Iterable[int]) -> None:
        self.signals = tuple(signals)
        self._r = self._w = -1
        self._old_handlers: dict[int, signal._HANDLER] = {}
        self._old_wakeup = -1

    def install(self) -> int:
        """Catch ``signals`` (handlers that do nothing); returns the fd to read them from."""
        self._r, self._w = os.pipe()
        for fd in (self._r, self._w):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        self._old_wakeup = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        for sig in self.signals:
            self._old_handlers[sig] = signal.signal(sig, _noop)
        return self._r

    def __enter__(self) -> int:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def read(self) -> set[int]:
        """The signals caught since the last read (each once)."""
        try:
            return set(os.read(self._r, 512))
        except (BlockingIOError, InterruptedError):
            return set()

    def uninstall(self) -> None:
        """The handlers and the wake-up fd from before; the pipe closed."""
        for sig, old in self._old_handlers.items():
            try:
                signal.signal(sig, old)
            except (OSError, ValueError, TypeError):
                pass
        self._old_handlers.clear()
        signal.set_wakeup_fd(self._old_wakeup)
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._r = self._w = -1


def _noop(signum: int, frame: object) -> None:
    """Signals are read from the wake-up fd; the handler itself does nothing."""
