"""cuewrap's own bytes for the host terminal (title marks, terminal notifications).

They are written only where the child's output stream is between escape sequences and UTF-8
characters (``safe``, which the relay sets after each chunk it writes), or once the output has
been quiet for ``INJECT_QUIET`` seconds. The controller injects; the relay says where the
stream stands (``set_safe``). Neither knows the other.
"""

from __future__ import annotations

from collections.abc import Callable

from cuewrap.loop import Loop, Timer

INJECT_QUIET = 0.25  # inject anyway when the output has been quiet this long


class Injector:
    def __init__(self, loop: Loop, write: Callable[[bytes], None]) -> None:
        self._loop = loop
        self._write = write
        self._queue: list[bytes] = []
        self._timer: Timer | None = None
        self._safe = True  # the output stream is at a point where cuewrap may inject

    @property
    def pending(self) -> bool:
        return bool(self._queue)

    @property
    def safe(self) -> bool:
        return self._safe

    def set_safe(self, safe: bool) -> None:
        """Where the output stream now stands (after each chunk written). Writes nothing:
        ``flush_if_safe`` does, once the chunk's events are handled."""
        self._safe = safe

    def inject(self, data: bytes) -> None:
        """Queue ``data``; written now if the stream is at a safe point, else later."""
        if not data:
            return
        self._queue.append(data)
        if self._safe:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(INJECT_QUIET, self._quiet)

    def flush_if_safe(self) -> None:
        if self._queue and self._safe:
            self.flush()

    def flush(self) -> None:
        """Write what waits, now (a safe point, quiet output, or the child's output ended)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._queue:
            data, self._queue = b"".join(self._queue), []
            self._write(data)

    def _quiet(self) -> None:
        self._timer = None
        self.flush()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
