"""The screen model an answer is checked against: Pi's recent output, read by pyte in a
worker process while an answerable dialog is open (docs/answering.md).

With the bridge live the screen worker does not run (docs/architecture.md), so in Pi mode the
relay keeps handing every output chunk to an ``OutputRing``: the last 96-128 KB, as the
chunks themselves (no copy). When an answerable dialog opens, a ``DialogReader`` starts a
worker (``cuewrap.answer.worker``), replays the ring into it and feeds it the output from then
on. Pi (fullscreen) writes each changed row whole at its absolute position, so every row drawn
since the ring's start is right on that screen — the dialog's rows, drawn when it opened, are.
``query(on_lines)`` asks for the screen after everything fed so far; the answer comes back on
the loop. The worker is killed when the dialog closes.
"""

from __future__ import annotations

import json
import os
import sys
from collections import deque
from collections.abc import Callable

from cuewrap.answer.worker import QUERY
from cuewrap.facts import Fact
from cuewrap.loop import Loop
from cuewrap.screen.watcher import ScreenWatcher
from cuewrap.screen.worker import encode

RING = 128 << 10  # output bytes kept for the dialog reader
MAX_REPLY = 4 << 20  # a screen's lines as JSON: rows x cols x a few bytes


class OutputRing:
    """The last 3/4 ``RING`` to ``RING`` bytes of the child's output (whole chunks, the last one
    whatever its size), and where the output goes while a reader runs. The relay's output tap in
    Pi mode once the screen gate is done: ``feed`` runs once per frame Pi draws, on cold caches,
    so it appends and counts, and trims only once more than ``RING`` gathered, to 3/4 of it
    (once per ~150 of Pi's frames; docs/benchmarks.md, "Where the CPU goes")."""

    def __init__(self, rows: int, cols: int, size: int = RING) -> None:
        self.size = (rows, cols)
        self._limit = size
        self._keep = size - size // 4
        self._chunks: list[bytes] = []
        self._len = 0
        self.reader: DialogReader | None = None

    def feed(self, data: bytes) -> None:
        self._chunks.append(data)
        self._len += len(data)
        if self._len > self._limit:
            self._trim()
        reader = self.reader
        if reader is not None:
            reader.feed(data)

    def _trim(self) -> None:
        """Keep the fewest last chunks that hold 3/4 ``RING`` bytes (the last one at least)."""
        chunks = self._chunks
        total, start = 0, len(chunks)
        while start > 0 and total < self._keep:
            start -= 1
            total += len(chunks[start])
        if total > self._limit and start < len(chunks) - 1:
            total -= len(chunks[start])  # the oldest one kept would pass RING: not kept
            start += 1
        del chunks[:start]
        self._len = total

    def resize(self, *, rows: int, cols: int) -> None:
        self.size = (rows, cols)
        if self.reader is not None:
            self.reader.resize(rows=rows, cols=cols)

    def kept(self) -> list[bytes]:
        return list(self._chunks)

    def read_by(self, reader: DialogReader | None) -> None:
        """From now on the output also goes to ``reader`` (None: to no reader)."""
        self.reader = reader


def _no_fact(_fact: Fact) -> None:
    pass


class DialogReader(ScreenWatcher):
    """The dialog reader's worker, on the loop (the screen watcher's queue and lifecycle)."""

    def __init__(
        self,
        loop: Loop,
        cols: int,
        rows: int,
        on_error: Callable[[str, BaseException], None] | None = None,
        worker: str = "cuewrap.answer.worker",
    ) -> None:
        """``worker``: the worker's module (a program's reader may read more of the screen
        than its lines: ``answer/opencode.py``)."""
        super().__init__(loop, cols, rows, _no_fact, on_error,
                         argv=[sys.executable, "-m", worker])  # fmt: skip
        self._reply = bytearray()
        self._waiting: deque[Callable[[list[str] | None], None]] = deque()

    def query(self, on_lines: Callable[[list[str] | None], None]) -> None:
        """``on_lines(lines)`` with the screen after all the output fed so far; None if the
        worker is gone."""
        if not self.alive:
            on_lines(None)
            return
        self._waiting.append(on_lines)
        self._enqueue(encode(QUERY), control=True)

    def stop(self) -> None:
        super().stop()
        self._fail_waiting()

    def _fail_waiting(self) -> None:
        waiting, self._waiting = self._waiting, deque()
        for cb in waiting:
            cb(None)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._out, 1 << 16)
        except BlockingIOError:
            return
        except OSError as exc:
            self._died(exc)
            self._fail_waiting()
            return
        if not data:
            self._died(None)
            self._fail_waiting()
            return
        self._reply += data
        while b"\n" in self._reply:
            line, _, rest = bytes(self._reply).partition(b"\n")
            self._reply = bytearray(rest)
            lines = _lines(line)
            if self._waiting:
                self._waiting.popleft()(lines)
        if len(self._reply) > MAX_REPLY:
            self._died(RuntimeError("dialog reader: reply too long"))
            self._fail_waiting()


def _lines(line: bytes) -> list[str] | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if isinstance(obj, list) and all(isinstance(x, str) for x in obj):
        return obj
    return None
