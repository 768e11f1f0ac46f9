"""The parent side of the screen source: feeds the worker subprocess, turns its reports into
``ScreenActivity`` facts. Runs on the relay's ``Loop`` and never blocks it.

pyte is too slow for the relay path and, under the GIL, for a thread of the relay process
(docs/architecture.md#measured-baselines), so it runs in ``python -m cuewrap.screen.worker`` (see
its docstring for the wire format). This module imports no pyte.

``feed(data)`` is called by the relay for every output chunk. The common case is ONE
``writev`` of a 5-byte frame header plus the chunk into the worker's non-blocking stdin pipe,
enlarged to 256 KiB (``F_SETPIPE_SZ``) so that a 64 KiB chunk fits in one call. What the pipe
does not take waits in a queue in the parent, written when the pipe is writable
(``add_writer``). Pipe plus queue hold at most ``backlog`` bytes (1 MiB: about one second of
pyte); the worker is never further behind than that.

Resynchronization: when a chunk does not fit in the queue, the queue is DROPPED (the oldest
output, which the worker has not parsed yet; a frame already partly written is completed, so
the framing survives), the drop is counted, and a ``R`` (resync) frame carrying the current
size goes in front of the new chunk. The worker thus skips to the present instead of falling
further behind; it resets its parser, keeps its screen cells (Pi redraws changed lines at
absolute positions) and says ``unknown`` until a whole synchronized frame has been parsed.
A lost resize needs no care: the resync frame carries the size.

The worker reports ``working`` / ``idle`` / ``unknown`` on change. ``working`` and ``idle``
become ``ScreenActivity(working=True/False)`` facts — only when they differ from the last fact
sent, so ``working → unknown → working`` (a resync, a dialog) makes one fact. ``unknown``
makes no fact: it is visible as ``state`` (the screen is the weakest source; it claims nothing
it cannot see).

If the worker cannot start or dies, the watcher stops quietly, reports once through
``on_error`` and stays off (fail open); ``feed`` is then a no-op. The worker is spawned, watched
and reaped by ``cuewrap.workers``: a dead worker is reaped when its pidfd turns readable (its
group KILLed if it closed its pipes but lingers), with no polling.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from cuewrap.facts import Fact, ScreenActivity
from cuewrap.loop import Loop
from cuewrap.screen.worker import DATA, HEADER, RESYNC, SIZE, encode, size_payload
from cuewrap.workers import Reaper, kill_group, spawn

BACKLOG = 1 << 20  # bytes that may wait for the worker: the pipe plus the parent's queue
PIPE_SIZE = 256 << 10  # asked for the worker's stdin pipe (Linux default: 64 KiB)
READ_SIZE = 4096
MAX_LINE = 64  # worker lines are one word; anything longer is garbage
LINGER = 0.1  # seconds a worker that closed its pipes may take to exit before it is KILLed
STOP_WAIT = 1.0  # seconds stop() waits for a KILLed worker (a few ms in practice)
WORKER = "cuewrap.screen.worker"

State = Literal["working", "idle", "unknown", "off"]
_REPORTS: dict[str, State] = {"working": "working", "idle": "idle", "unknown": "unknown"}


@dataclass
class WatcherStats:
    fed_bytes: int = 0  # output bytes handed to feed()
    dropped_bytes: int = 0  # output bytes dropped (backlog full)
    drops: int = 0  # times the backlog overflowed (= resync markers sent)
    max_queued: int = 0  # high-water mark of the parent-side backlog
    reports: int = 0  # state lines received from the worker


class ScreenWatcher:
    """Runs the screen worker and turns its reports into facts.

    ``on_fact(ScreenActivity(working=...))`` on each change; ``on_error("screen", exc)`` at
    most once, when the worker cannot start or dies. ``argv`` replaces the worker command
    (tests, benchmarks); COLS and ROWS are appended to it.
    """

    def __init__(
        self,
        loop: Loop,
        cols: int,
        rows: int,
        on_fact: Callable[[Fact], None],
        on_error: Callable[[str, BaseException], None] | None = None,
        *,
        backlog: int = BACKLOG,
        argv: Sequence[str] | None = None,
    ) -> None:
        self.loop = loop
        self.cols, self.rows = cols, rows
        self.on_fact = on_fact
        self.on_error = on_error
        self.backlog = backlog
        self.argv = list(argv) if argv is not None else [sys.executable, "-m", WORKER]
        self.stats = WatcherStats()
        self.state: State = "off"
        self._proc: subprocess.Popen[bytes] | None = None
        self._in = -1  # worker's stdin (we write)
        self._out = -1  # worker's stdout (we read)
        self._queue: deque[bytes] = deque()  # whole frames; the head may be partly written
        self._head_off = 0
        self._queued = 0
        self._limit = backlog  # the parent's share of the backlog (set by start)
        self._line = bytearray()
        self._writing = False  # a writer is registered on the worker's stdin
        self._last_fact: bool | None = None
        self._errored = False
        self._reaper = Reaper(loop)

    @property
    def alive(self) -> bool:
        return self._proc is not None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> bool:
        """Spawn the worker. False (after one ``on_error``) if it cannot be started."""
        if self._proc is not None:
            return True
        in_r = in_w = out_r = out_w = -1
        try:
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            # its own session: no terminal signals; it ends on EOF
            self._proc = spawn(
                [*self.argv, str(self.cols), str(self.rows)], stdin=in_r, stdout=out_w
            )
        except Exception as exc:
            for fd in (in_r, in_w, out_r, out_w):
                if fd >= 0:
                    os.close(fd)
            self._report(exc)
            return False
        os.close(in_r)
        os.close(out_w)
        self._in, self._out = in_w, out_r
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._limit = max(0, self.backlog - self._grow_pipe())
        self.state = "unknown"
        self.loop.add_reader(self._out, self._on_readable)
        return True

    def stop(self) -> None:
        """Kill and reap the worker (quietly), and one that died before. Safe to call twice."""
        proc = self._shutdown()
        if proc is not None:
            kill_group(proc, signal.SIGKILL)
            self._reaper.add(proc, kill_after=0.0)
        with contextlib.suppress(Exception):
            self._reaper.close(STOP_WAIT)  # SIGKILL: the wait is a few ms

    # -- the relay's side ---------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        """Hand one output chunk to the worker; never blocks, never raises."""
        if self._in < 0 or not data:
            return
        self.stats.fed_bytes += len(data)
        header = HEADER.pack(DATA, len(data))
        if not self._queue:
            try:
                n = os.writev(self._in, (header, data))
            except BlockingIOError:
                n = 0
            except OSError as exc:
                self._died(exc)
                return
            if n == HEADER.size + len(data):
                return
            self._queue.append(header + bytes(data))
            self._head_off = n
            self._queued = HEADER.size + len(data) - n
            self._note_queued()
            self._want_writable()
            return
        self._enqueue(header + bytes(data))

    def resize(self, *, rows: int, cols: int) -> None:
        if (cols, rows) == (self.cols, self.rows):
            return
        self.cols, self.rows = cols, rows
        if self._in >= 0:
            self._enqueue(encode(SIZE, size_payload(cols, rows)), control=True)

    # -- queue --------------------------------------------------------------------------------
    def _enqueue(self, frame: bytes, *, control: bool = False) -> None:
        if not control and self._queued + len(frame) > self._limit:
            self._overflow()
            if self._queued + len(frame) > self._limit:  # a chunk bigger than the backlog
                self.stats.dropped_bytes += len(frame) - HEADER.size
                return
        self._queue.append(frame)
        self._queued += len(frame)
        self._note_queued()
        if len(self._queue) == 1 and self._head_off == 0:
            self._on_writable()  # nothing was waiting: try at once
        if self._queue:
            self._want_writable()

    def _overflow(self) -> None:
        """Drop every frame not yet started; put a resync marker in their place."""
        keep = self._queue.popleft() if self._queue and self._head_off > 0 else None
        for frame in self._queue:
            if frame[:1] == DATA:
                self.stats.dropped_bytes += len(frame) - HEADER.size
        self._queue.clear()
        self._queued = 0
        if keep is not None:
            self._queue.append(keep)
            self._queued = len(keep) - self._head_off
        else:
            self._head_off = 0
        self.stats.drops += 1
        marker = encode(RESYNC, size_payload(self.cols, self.rows))
        self._queue.append(marker)
        self._queued += len(marker)

    def _grow_pipe(self) -> int:
        """Let the kernel hold part of the backlog, so one ``writev`` takes a whole chunk;
        returns the pipe's capacity."""
        try:
            import fcntl

            want = min(PIPE_SIZE, self.backlog // 4)
            if hasattr(fcntl, "F_SETPIPE_SZ") and want > 0:
                with contextlib.suppress(OSError):
                    fcntl.fcntl(self._in, fcntl.F_SETPIPE_SZ, want)
            if hasattr(fcntl, "F_GETPIPE_SZ"):
                return int(fcntl.fcntl(self._in, fcntl.F_GETPIPE_SZ))
        except OSError:
            pass
        return 65536

    def _want_writable(self) -> None:
        if not self._writing:
            self._writing = True
            self.loop.add_writer(self._in, self._on_writable)

    def _note_queued(self) -> None:
        if self._queued > self.stats.max_queued:
            self.stats.max_queued = self._queued

    def _on_writable(self) -> None:
        while self._queue and self._in >= 0:
            bufs: list[bytes | memoryview] = [memoryview(self._queue[0])[self._head_off :]]
            bufs += itertools.islice(self._queue, 1, 64)
            try:
                n = os.writev(self._in, bufs)
            except BlockingIOError:
                break
            except OSError as exc:
                self._died(exc)
                return
            self._queued -= n
            while n:
                left = len(self._queue[0]) - self._head_off
                if n >= left:
                    n -= left
                    self._queue.popleft()
                    self._head_off = 0
                else:
                    self._head_off += n
                    n = 0
        if not self._queue and self._writing:
            self._writing = False
            self.loop.remove_writer(self._in)

    # -- reports ------------------------------------------------------------------------------
    def _on_readable(self) -> None:
        try:
            data = os.read(self._out, READ_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            self._died(exc)
            return
        if not data:
            self._died(None)
            return
        self._line += data
        *lines, rest = self._line.split(b"\n")
        self._line = bytearray(rest[-MAX_LINE:])
        for raw in lines:
            self._on_report(raw.strip().decode("ascii", "replace"))

    def _on_report(self, word: str) -> None:
        self.stats.reports += 1
        state = _REPORTS.get(word)
        if state is None:
            return
        self.state = state
        if word == "unknown":
            return
        working = word == "working"
        if working != self._last_fact:
            self._last_fact = working
            self.on_fact(ScreenActivity(working=working))

    # -- failure ------------------------------------------------------------------------------
    def _shutdown(self) -> subprocess.Popen[bytes] | None:
        if self._in >= 0:
            if self._writing:
                self._writing = False
                self.loop.remove_writer(self._in)
            os.close(self._in)
            self._in = -1
        if self._out >= 0:
            self.loop.remove_reader(self._out)
            os.close(self._out)
            self._out = -1
        self._queue.clear()
        self._queued = self._head_off = 0
        self.state = "off"
        proc, self._proc = self._proc, None
        return proc

    def _died(self, exc: BaseException | None) -> None:
        """The worker's pipes broke or closed: reap it off the loop (KILLed if it lingers),
        then report once."""
        proc = self._shutdown()
        if proc is None:
            return

        def reaped(code: int) -> None:
            self._report(exc or RuntimeError(f"screen worker exited (status {code})"))

        self._reaper.add(proc, kill_after=LINGER, on_exit=reaped)

    def _report(self, exc: BaseException) -> None:
        if self._errored or self.on_error is None:
            self._errored = True
            return
        self._errored = True
        with contextlib.suppress(Exception):
            self.on_error("screen", exc)
