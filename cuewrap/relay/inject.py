"""cuewrap's own bytes for the host terminal (title marks, terminal notifications).

They are written only where the child's output stream is between escape sequences and UTF-8
characters (``safe``, which the relay sets after each chunk it writes: ``set_safe``), however long
that takes (docs/design.md#delivery): never inside a UTF-8 character or an open DCS/OSC string, not
even after a quiet time. How long the bytes waited is told to ``on_waited`` (the decision log). The
child's output ending (``flush``) releases them: nothing of the child's can follow. While they wait,
a title replaces the title still waiting (only the last one counts: a child that sets its title in
every frame while a mark is up would otherwise queue one per frame). The controller injects; the
relay says where the stream stands. Neither knows the other.
"""

from __future__ import annotations

from collections.abc import Callable

from cuewrap.loop import Loop
from cuewrap.term.sequences import is_title


class Injector:
    def __init__(
        self,
        loop: Loop,
        write: Callable[[bytes], None],
        on_waited: Callable[[float], None] | None = None,
    ) -> None:
        self._loop = loop
        self._write = write
        self._on_waited = on_waited
        # plain attributes, not properties: the relay sets ``safe`` and reads ``queue`` after
        # every output chunk (its hot path); only the injector changes ``queue``
        self.queue: list[bytes] = []  # what waits for a safe point
        self._since: float | None = None  # when the first queued bytes started waiting
        self.safe = True  # the output stream is at a point where cuewrap may inject

    @property
    def pending(self) -> bool:
        return bool(self.queue)

    def set_safe(self, safe: bool) -> None:
        """Where the output stream now stands (after each chunk written). Writes nothing:
        ``flush_if_safe`` does, once the chunk's events are handled."""
        self.safe = safe

    def inject(self, data: bytes) -> None:
        """Queue ``data``; written now if the stream is at a safe point, else at the next."""
        if not data:
            return
        if self.queue and is_title(data):
            self.queue = [d for d in self.queue if not is_title(d)]
        self.queue.append(data)
        if self.safe:
            self.flush()
        elif self._since is None:
            self._since = self._loop.clock()

    def flush_if_safe(self) -> None:
        if self.queue and self.safe:
            self.flush()

    def flush(self) -> None:
        """Write what waits, now (a safe point, or the child's output ended)."""
        if not self.queue:
            return
        data, self.queue = b"".join(self.queue), []
        self._write(data)
        since, self._since = self._since, None
        if since is not None and self._on_waited is not None:
            self._on_waited(self._loop.clock() - since)

    def close(self) -> None:
        self._since = None
