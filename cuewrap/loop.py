"""The one event loop: file descriptors and timers over ``poll(2)``, no asyncio.

``wiring/session.py`` makes one ``Loop`` per session and hands it to the relay and the controller;
every part registers its readers, writers and timers on it: the relay (the child's PTY,
stdin, the signal pipe, the focus-prefix flush, output gathering), the bridge server, the
tmux commands' output, the screen watcher's pipes, worker processes' exits (pidfds), the
engine's wake-ups. There is no periodic timer: ``poll`` blocks without a timeout unless a
timer is pending, so an idle cuewrap uses no CPU.

``select.poll`` is used directly, not through ``selectors``: a streaming child wakes the loop
~60 times a second, and each wake-up runs with cold caches, so every line of Python on that
path costs several times what it costs in a hot loop; the ``selectors`` layer (keys, event
mapping, a list per call) is Python code there (docs/architecture.md#an-output-chunk). Not epoll:
epoll refuses regular files and /dev/null (stdin may be one). Where there is no usable
``poll`` (macOS: it does not work on terminals) ``select`` is used.

Besides the timers there is one ``deadline``: a plain time the relay sets while a child's output
gathers (about a frame's time, ~55 times a second while Pi streams). It costs an attribute store per
frame where a timer costs a ``Timer`` object, a heap push and a heap pop, each Python work on the
cold path; ``on_deadline`` runs once the clock reaches it, before the timers due in that turn.

Every callback other than the relay's own runs under ``guard``: an exception is reported to
``on_error`` (the decision log) and the loop continues — cuewrap fails open.
"""

from __future__ import annotations

import heapq
import itertools
import math
import select
import sys
import time
from collections.abc import Callable
from math import inf

Callback = Callable[[], None]
HORIZON = 30 * 24 * 3600.0  # seconds: the latest a timer may be set for
MAX_WAIT = 24 * 3600.0  # seconds: the longest one wait lasts while a timer is pending
_USE_POLL = sys.platform.startswith("linux") and hasattr(select, "poll")
_POLLIN = select.POLLIN if _USE_POLL else 1
_POLLOUT = select.POLLOUT if _USE_POLL else 4
# like ``selectors``: a hang-up or an error wakes both the reader and the writer (their next
# read or write says what happened)
_NOT_READ = ~_POLLOUT  # any event but "writable" -> the reader runs
_NOT_WRITE = ~_POLLIN  # any event but "readable" -> the writer runs


class Timer:
    """A pending callback; ``cancel()`` keeps it from running. Ordered by (when, seq)."""

    __slots__ = ("callback", "cancelled", "seq", "when")

    def __init__(self, when: float, seq: int, callback: Callback) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.cancelled = False

    def __lt__(self, other: Timer) -> bool:
        when = self.when
        return when < other.when or (when == other.when and self.seq < other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    def __init__(self, on_error: Callable[[str, BaseException], None] | None = None) -> None:
        # fd -> [reader, writer]: mutated in place, so a callback that removes another one
        # (or itself) is seen by the rest of the same wake-up
        self._fds: dict[int, list[Callback | None]] = {}
        self._poll = select.poll() if _USE_POLL else None
        self._timers: list[Timer] = []
        self._seq = itertools.count()
        self.on_error = on_error
        self.clock: Callable[[], float] = time.monotonic
        # the relay's gathering deadline (see the module docstring): ``on_deadline`` runs once,
        # unguarded, when the clock reaches ``deadline``; ``inf``: none. Set by assigning.
        self.deadline = inf
        self.on_deadline: Callback | None = None

    # -- readers and writers ------------------------------------------------------------------
    def add_reader(self, fd: int, callback: Callback, *, guarded: bool = True) -> None:
        cb = self.guard(callback, f"reader:{fd}") if guarded else callback
        self._set(fd, 0, cb)

    def remove_reader(self, fd: int) -> None:
        self._set(fd, 0, None)

    def add_writer(self, fd: int, callback: Callback, *, guarded: bool = True) -> None:
        cb = self.guard(callback, f"writer:{fd}") if guarded else callback
        self._set(fd, 1, cb)

    def remove_writer(self, fd: int) -> None:
        self._set(fd, 1, None)

    def watching(self) -> list[int]:
        """The file descriptors that have a reader or a writer now."""
        return list(self._fds)

    def has_writer(self, fd: int) -> bool:
        pair = self._fds.get(fd)
        return pair is not None and pair[1] is not None

    def _set(self, fd: int, slot: int, cb: Callback | None) -> None:
        pair = self._fds.get(fd)
        if pair is None:
            if cb is None:
                return
            if fd < 0:
                raise ValueError(f"invalid file descriptor {fd}")
            pair = self._fds[fd] = [None, None]
        pair[slot] = cb
        reader, writer = pair
        if reader is None and writer is None:
            del self._fds[fd]
            if self._poll is not None:
                self._poll.unregister(fd)
        elif self._poll is not None:  # (re)registering replaces the mask
            self._poll.register(
                fd, (_POLLIN if reader is not None else 0) | (_POLLOUT if writer is not None else 0)
            )

    # -- timers ---------------------------------------------------------------------------
    def call_later(self, delay: float, callback: Callback, *, guarded: bool = True) -> Timer:
        if delay != delay:  # NaN: never due (call_at puts it at the horizon)
            delay = HORIZON
        return self.call_at(self.clock() + max(0.0, delay), callback, guarded=guarded)

    def call_at(self, when: float, callback: Callback, *, guarded: bool = True) -> Timer:
        """Run ``callback`` at ``when``; any value is accepted (no timer may raise): one
        beyond ``HORIZON`` (or not a number) runs at the horizon."""
        cb = self.guard(callback, "timer") if guarded else callback
        latest = self.clock() + HORIZON
        if not when <= latest:  # also NaN
            when = latest
        t = Timer(when, next(self._seq), cb)
        heapq.heappush(self._timers, t)
        return t

    def timeout(self) -> float | None:
        """Seconds until the next live timer or the deadline, or None (block forever)."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        when = self._timers[0].when if self._timers else inf
        if self.deadline < when:
            when = self.deadline
        if when == inf:
            return None
        # capped: poll() refuses timeouts beyond ~24 days; waking once a day costs nothing
        return min(MAX_WAIT, max(0.0, when - self.clock()))

    def run_due_timers(self) -> None:
        """Run the deadline's callback if it is due, then the timers that are due."""
        now = self.clock()
        if self.deadline <= now:
            self._run_deadline()
        while self._timers and (self._timers[0].cancelled or self._timers[0].when <= now):
            t = heapq.heappop(self._timers)
            if not t.cancelled:
                t.callback()

    def _run_deadline(self) -> None:
        self.deadline = inf
        if self.on_deadline is not None:
            self.on_deadline()

    # -- one iteration ----------------------------------------------------------------------
    def run_once(self, max_timeout: float | None = None) -> None:
        timers = self._timers
        if timers or max_timeout is not None:
            timeout = self.timeout()
            if max_timeout is not None:
                timeout = max_timeout if timeout is None else min(timeout, max_timeout)
        elif self.deadline != inf:  # the relay gathers: the one case per frame, kept short
            timeout = self.deadline - self.clock()
            if timeout < 0.0:
                timeout = 0.0
            elif timeout > MAX_WAIT:
                timeout = MAX_WAIT
        else:
            timeout = None
        poll = self._poll
        if poll is not None:  # _wait's first lines, without the call
            ready = poll.poll(None if timeout is None else math.ceil(timeout * 1e3))
        else:
            ready = self._wait(timeout)
        fds = self._fds
        for fd, events in ready:
            pair = fds.get(fd)  # an earlier callback may have removed this one
            if pair is None:
                continue
            if events & _NOT_READ:
                reader = pair[0]
                if reader is not None:
                    reader()
            if events & _NOT_WRITE:
                writer = pair[1]
                if writer is not None:
                    writer()
        deadline = self.deadline
        if deadline != inf and deadline <= self.clock():
            self.deadline = inf
            callback = self.on_deadline
            if callback is not None:
                callback()
        if timers:
            self.run_due_timers()

    def _wait(self, timeout: float | None) -> list[tuple[int, int]]:
        """The ready file descriptors and their events, waiting at most ``timeout`` seconds
        (None: until one is ready)."""
        if self._poll is not None:
            # rounded up, as ``selectors`` does: a timer due in 0.4 ms is waited for, not
            # polled for without waiting until it is due
            return self._poll.poll(None if timeout is None else math.ceil(timeout * 1e3))
        readers = [fd for fd, pair in self._fds.items() if pair[0] is not None]
        writers = [fd for fd, pair in self._fds.items() if pair[1] is not None]
        r, w, _ = select.select(readers, writers, [], timeout)
        ready = {fd: _POLLIN for fd in r}
        for fd in w:
            ready[fd] = ready.get(fd, 0) | _POLLOUT
        return list(ready.items())

    # -- fail-open wrapper ------------------------------------------------------------------
    def guard(self, callback: Callback, where: str) -> Callback:
        def guarded() -> None:
            try:
                callback()
            except Exception as exc:  # fail open: report and carry on
                if self.on_error is not None:
                    try:
                        self.on_error(where, exc)
                    except Exception:
                        pass

        return guarded

    def close(self) -> None:
        for fd in list(self._fds):
            if self._poll is not None:
                self._poll.unregister(fd)
        self._fds.clear()
        self.deadline = inf
