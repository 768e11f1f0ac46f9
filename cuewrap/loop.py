"""The one event loop: file descriptors and timers over ``selectors``, no asyncio.

``session.py`` makes one ``Loop`` per session and hands it to the relay and the controller;
every part registers its readers, writers and timers on it: the relay (the child's PTY,
stdin, the signal pipe, the focus-prefix flush, output gathering), the bridge server, the
tmux control client, the screen watcher's pipes, worker processes' exits (pidfds), the
engine's wake-ups. There is no periodic timer: ``select`` blocks without a timeout unless a
timer is pending, so an idle cuewrap uses no CPU.

Every callback other than the relay's own runs under ``guard``: an exception is reported to
``on_error`` (the decision log) and the loop continues — cuewrap fails open.
"""

from __future__ import annotations

import heapq
import itertools
import selectors
import sys
import time
from collections.abc import Callable

Callback = Callable[[], None]
HORIZON = 30 * 24 * 3600.0  # seconds: the latest a timer may be set for
MAX_WAIT = 24 * 3600.0  # seconds: the longest one select() waits while a timer is pending
_READ = selectors.EVENT_READ
_WRITE = selectors.EVENT_WRITE


class Timer:
    """A pending callback; ``cancel()`` keeps it from running. Ordered by (when, seq)."""

    __slots__ = ("callback", "cancelled", "seq", "when")

    def __init__(self, when: float, seq: int, callback: Callback) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.cancelled = False

    def __lt__(self, other: Timer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    def __init__(self, on_error: Callable[[str, BaseException], None] | None = None) -> None:
        # poll/select, not epoll: epoll refuses regular files and /dev/null (stdin may be one)
        self.selector: selectors.BaseSelector = (
            selectors.PollSelector()
            if sys.platform.startswith("linux")
            else selectors.SelectSelector()
        )
        self._timers: list[Timer] = []
        self._seq = itertools.count()
        self.on_error = on_error
        self.clock: Callable[[], float] = time.monotonic

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

    def has_writer(self, fd: int) -> bool:
        return self._get(fd)[1] is not None

    def _get(self, fd: int) -> tuple[Callback | None, Callback | None]:
        try:
            pair: tuple[Callback | None, Callback | None] = self.selector.get_key(fd).data
            return pair
        except (KeyError, ValueError):
            return (None, None)

    def _set(self, fd: int, slot: int, cb: Callback | None) -> None:
        pair = list(self._get(fd))
        registered = pair != [None, None]
        pair[slot] = cb
        events = selectors.EVENT_READ if pair[0] else 0
        events |= selectors.EVENT_WRITE if pair[1] else 0
        if not events:
            if registered:
                self.selector.unregister(fd)
        elif registered:
            self.selector.modify(fd, events, tuple(pair))
        else:
            self.selector.register(fd, events, tuple(pair))

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
        """Seconds until the next live timer, or None (block forever)."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        if not self._timers:
            return None
        # capped: poll() refuses timeouts beyond ~24 days; waking once a day costs nothing
        return min(MAX_WAIT, max(0.0, self._timers[0].when - self.clock()))

    def run_due_timers(self) -> None:
        now = self.clock()
        while self._timers and (self._timers[0].cancelled or self._timers[0].when <= now):
            t = heapq.heappop(self._timers)
            if not t.cancelled:
                t.callback()

    # -- one iteration ----------------------------------------------------------------------
    def run_once(self, max_timeout: float | None = None) -> None:
        timeout = self.timeout()
        if max_timeout is not None:
            timeout = max_timeout if timeout is None else min(timeout, max_timeout)
        ready = self.selector.select(timeout)
        if len(ready) == 1:  # the common case: one fd, its callbacks are current
            key, events = ready[0]
            pair: tuple[Callback | None, Callback | None] = key.data
            reader, writer = pair
            if events & _READ and reader is not None:
                reader()
            if events & _WRITE and writer is not None and self._get(key.fd)[1] is writer:
                writer()
        else:
            for key, events in ready:  # an earlier callback may have removed a later one
                if events & _READ:
                    reader = self._get(key.fd)[0]
                    if reader is not None:
                        reader()
                if events & _WRITE:
                    writer = self._get(key.fd)[1]
                    if writer is not None:
                        writer()
        if self._timers:
            self.run_due_timers()

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
        self.selector.close()
