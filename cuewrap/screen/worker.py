"""The screen worker: ``python -m cuewrap.screen.worker COLS ROWS``.

pyte parses about 1 MB/s (docs/architecture.md#measured-baselines), far slower than the relay, so it
runs here, in a subprocess of its own, never on the relay path. The parent (``watcher.py``) writes
framed messages to our stdin; we answer on stdout with one line per change of state. Our stderr is
/dev/null (the parent's terminal is the user's screen).

stdin, frames of ``kind (1 byte) + payload length (4 bytes, big endian) + payload``:

``D`` data
    a chunk of the child's output, in order.
``S`` size
    ``b"COLS ROWS"``: the terminal was resized.
``R`` resync
    ``b"COLS ROWS"``: the parent dropped output here (its backlog was full). The parser is
    reset (the gap may have cut an escape sequence or a UTF-8 character); the screen cells are
    kept — Pi draws every changed line at an absolute position (``CSI row;1H CSI 2K …``), so a
    line redrawn after the gap is right again, and a stale line errs towards the state it
    showed. Until one complete synchronized-output frame (``CSI ?2026h … CSI ?2026l``, which
    wraps every Pi frame) or a full clear (``CSI 2J``) has been parsed after the marker, the
    state is ``unknown`` (reported at once). A child that never used synchronized output is
    trusted again after the first data chunk.

stdout, one line per change: ``working``, ``idle`` or ``unknown`` (a dialog, a resync, a
screen that does not show Pi's layout).

Cheap parsing: every byte goes through pyte (the screen must stay right), but the screen is
read at most every ``EVAL_INTERVAL`` seconds, never in the middle of a synchronized frame,
and only its bottom ``pi_screen.WINDOW`` lines. Debounce: ``working`` needs two consecutive
working reads or ``WORKING_HOLD`` seconds, ``idle`` and ``unknown`` ``IDLE_HOLD`` seconds of
the same read. Without input and without a pending decision the worker blocks in ``select``
(no periodic timer); while output flows it reads at most every ``READ_BATCH`` seconds, so
the relay's writes rarely have to wake it. EOF on stdin ends it.
"""

from __future__ import annotations

import math
import os
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from cuewrap.screen import pi_screen

HEADER = struct.Struct(">cI")
DATA, SIZE, RESYNC = b"D", b"S", b"R"
MAX_PAYLOAD = 1 << 22  # anything bigger is a broken stream: exit

EVAL_INTERVAL = 0.1  # read the screen at most this often
WORKING_PARSES = 2  # consecutive working reads that confirm working...
WORKING_HOLD = 0.2  # ...or this long
IDLE_HOLD = 0.5  # idle (and unknown) must hold this long
SYNC_STUCK = 1.0  # read anyway when a synchronized frame stays open this long
READ_SIZE = 1 << 18  # the whole pipe at once
READ_BATCH = 0.1  # at most 10 reads (and wake-ups) per second while output flows

SYNC_MODE = 2026  # CSI ? 2026 h/l: synchronized output (begin/end of a frame)
DECCOLM = 3  # CSI ? 3 h would make pyte resize to 132 columns; a real terminal ignores it


def encode(kind: bytes, payload: bytes = b"") -> bytes:
    """One frame (used by the parent and by tests)."""
    return HEADER.pack(kind, len(payload)) + payload


def size_payload(cols: int, rows: int) -> bytes:
    return f"{cols} {rows}".encode("ascii")


def parse_size(payload: bytes) -> tuple[int, int]:
    cols, rows = (int(x) for x in payload.split())
    return max(1, min(cols, 4096)), max(1, min(rows, 4096))


class FrameDecoder:
    """Incremental decoder of the stdin frames."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> Iterator[tuple[bytes, bytes]]:
        self._buf += data
        pos = 0
        buf = self._buf
        while len(buf) - pos >= HEADER.size:
            kind, size = HEADER.unpack_from(buf, pos)
            if size > MAX_PAYLOAD or kind not in (DATA, SIZE, RESYNC):
                raise ValueError(f"bad frame {kind!r} {size}")
            end = pos + HEADER.size + size
            if end > len(buf):
                break
            yield kind, bytes(buf[pos + HEADER.size : end])
            pos = end
        del buf[:pos]


def _make_screen(cols: int, rows: int) -> Any:
    """A pyte screen that tracks synchronized-output frames and full clears."""
    import pyte

    class TrackingScreen(pyte.Screen):
        def __init__(self, columns: int, lines: int) -> None:
            super().__init__(columns, lines)
            self.sync_open = False  # inside CSI ?2026h … l
            self.sync_frames = 0  # complete frames seen (h then l)
            self.uses_sync = False
            self.clears = 0  # CSI 2J / 3J

        def set_mode(self, *modes: int, **kwargs: Any) -> None:
            if kwargs.get("private"):
                if SYNC_MODE in modes:
                    self.sync_open = self.uses_sync = True
                modes = tuple(m for m in modes if m != DECCOLM)
            super().set_mode(*modes, **kwargs)

        def reset_mode(self, *modes: int, **kwargs: Any) -> None:
            if kwargs.get("private"):
                if SYNC_MODE in modes and self.sync_open:
                    self.sync_open = False
                    self.sync_frames += 1
                modes = tuple(m for m in modes if m != DECCOLM)
            super().reset_mode(*modes, **kwargs)

        def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
            if how in (2, 3):
                self.clears += 1
            super().erase_in_display(how, *args, **kwargs)

    return TrackingScreen(cols, rows)


class ScreenReader:
    """pyte screen + the debounced verdict. No I/O: the caller passes the clock."""

    def __init__(self, cols: int, rows: int) -> None:
        import pyte

        self._pyte = pyte
        self.screen = _make_screen(cols, rows)
        self._stream = pyte.ByteStream(self.screen)
        self._dirty = False
        self._last_eval = -math.inf
        self._sync_since = 0.0
        self._candidate: str | None = None
        self._since = 0.0
        self._count = 0
        self.reported: str | None = None
        self._resync_mark: tuple[int, int] | None = None  # (frames, clears) at the marker

    # -- input ------------------------------------------------------------------------------
    def data(self, payload: bytes, now: float) -> list[str]:
        """Parse a chunk of output. Returns a report to send at once, if any (only when pyte
        failed on it: then the chunk counts as a gap, as after a resync)."""
        was_open = self.screen.sync_open
        try:
            self._stream.feed(payload)
        except Exception:  # a pyte bug on odd input: start over as after a gap
            return self.resync(self.screen.columns, self.screen.lines, now)
        self._dirty = True
        if self.screen.sync_open and not was_open:
            self._sync_since = now
        if self._resync_mark is not None:
            frames, clears = self._resync_mark
            if (
                self.screen.sync_frames > frames
                or self.screen.clears > clears
                or not self.screen.uses_sync
            ):
                self._resync_mark = None
        return []

    def resize(self, *, rows: int, cols: int) -> None:
        if (cols, rows) != (self.screen.columns, self.screen.lines):
            self.screen.resize(lines=rows, columns=cols)
        self._dirty = True

    def resync(self, cols: int, rows: int, now: float) -> list[str]:
        """Output was dropped before this point: reset the parser, keep the cells. Returns
        the report to send at once (``unknown``), if any."""
        self.resize(rows=rows, cols=cols)
        self._stream = self._pyte.ByteStream(self.screen)
        self.screen.sync_open = False
        self._resync_mark = (self.screen.sync_frames, self.screen.clears)
        self._candidate, self._since, self._count = "unknown", now, 1
        if self.reported != "unknown":
            self.reported = "unknown"
            return ["unknown"]
        return []

    # -- reading ----------------------------------------------------------------------------
    def lines(self) -> list[str]:
        """The bottom ``WINDOW`` lines as text."""
        scr = self.screen
        cols = scr.columns
        out = []
        for y in range(max(0, scr.lines - pi_screen.WINDOW), scr.lines):
            row = scr.buffer[y]
            out.append("".join(row[x].data for x in range(cols)))
        return out

    def _eval_due(self) -> float | None:
        if not self._dirty:
            return None
        due = self._last_eval + EVAL_INTERVAL
        if self.screen.sync_open:
            due = max(due, self._sync_since + SYNC_STUCK)
        return due

    def _decision_due(self) -> float | None:
        if self._candidate is None or self._candidate == self.reported:
            return None
        if self._candidate == "working":
            return self._since + WORKING_HOLD
        return self._since + IDLE_HOLD

    def deadline(self) -> float | None:
        """When ``tick`` next has something to do (None: only new input matters)."""
        dues = [d for d in (self._eval_due(), self._decision_due()) if d is not None]
        return min(dues) if dues else None

    def tick(self, now: float) -> list[str]:
        """Read the screen if due, and return the state changes to report."""
        due = self._eval_due()
        if due is not None and now >= due:
            self._dirty = False
            self._last_eval = now
            if self._resync_mark is not None:
                state = "unknown"
            else:
                verdict = pi_screen.classify(self.lines())
                state = verdict if verdict in ("working", "idle") else "unknown"
            if state == self._candidate:
                self._count += 1
            else:
                self._candidate, self._since, self._count = state, now, 1
        cand = self._candidate
        if cand is None or cand == self.reported:
            return []
        if cand == "working":
            ready = self._count >= WORKING_PARSES or now - self._since >= WORKING_HOLD
        else:
            ready = now - self._since >= IDLE_HOLD
        if not ready:
            return []
        self.reported = cand
        return [cand]


def run(in_fd: int, out_fd: int, cols: int, rows: int) -> int:
    reader = ScreenReader(cols, rows)
    decoder = FrameDecoder()

    def emit(states: list[str]) -> None:
        if states:
            os.write(out_fd, "".join(f"{s}\n" for s in states).encode("ascii"))

    while True:
        deadline = reader.deadline()
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([in_fd], [], [], timeout)
        if ready:
            started = time.monotonic()
            chunk = os.read(in_fd, READ_SIZE)
            if not chunk:
                return 0
            for kind, payload in decoder.feed(chunk):
                now = time.monotonic()
                if kind == DATA:
                    emit(reader.data(payload, now))
                elif kind == SIZE:
                    cols, rows = parse_size(payload)
                    reader.resize(rows=rows, cols=cols)
                else:
                    emit(reader.resync(*parse_size(payload), now))
                emit(reader.tick(time.monotonic()))  # a long backlog still gets read
            # Batch: let the next chunks pile up in the pipe rather than be woken for each
            # one (waking us is what a write costs the relay most).
            pause = READ_BATCH - (time.monotonic() - started)
            if pause > 0:
                time.sleep(pause)
        emit(reader.tick(time.monotonic()))


def main(argv: list[str] | None = None) -> int:
    return serve(run, argv, nice=10)  # a heuristic may lag; the relay and Pi may not


def serve(
    run: Callable[[int, int, int, int], int], argv: list[str] | None, *, nice: int = 0
) -> int:
    """A screen worker's process: ``COLS ROWS`` from its argv (2 when they are not a size),
    Ctrl-C ignored (it is the user's, for Pi), ``nice`` added, then ``run(stdin, stdout,
    cols, rows)`` until its input ends; the parent gone counts as an end."""
    args = sys.argv[1:] if argv is None else argv
    try:
        cols, rows = parse_size(" ".join(args[:2]).encode("ascii"))
    except ValueError:
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    try:
        return run(0, 1, cols, rows)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
