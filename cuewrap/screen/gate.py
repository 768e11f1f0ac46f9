"""The gate of the screen source (docs/design.md#fact-sources (the screen)): pyte runs only while
nothing stronger does.

The relay hands the gate every output chunk (``feed``) and every new size (``resize``). For
the first ``DECIDE`` seconds the gate keeps the child's output (at most ``KEEP`` bytes); then,
unless a stronger source is live (the Pi bridge said hello, or OSC 7501 was trusted), it starts
the screen watcher and replays what it kept. ``check()`` (after each engine step) decides at
once when a stronger source is live before then (Pi's bridge says hello well within the
``DECIDE`` seconds: nothing more is kept, and no timer wakes an idle session later), and stops
the watcher for good once a stronger source becomes live. pyte never runs while one is.

From then on (no watcher, and none will start) the gate needs no more output: it tells
``on_done`` (given by the cue side: the relay stops handing it chunks, one call less per chunk
while Pi streams).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from cuewrap.decisionlog import DecisionLog
from cuewrap.facts import Fact
from cuewrap.loop import Loop, Timer

if TYPE_CHECKING:
    from cuewrap.screen.watcher import ScreenWatcher

DECIDE = 2.0  # seconds after start to decide whether the screen source is needed
KEEP = 1 << 20  # bytes of early output kept for it meanwhile


class Watcher(Protocol):
    """The part of ``ScreenWatcher`` the gate uses."""

    def start(self) -> bool: ...
    def feed(self, data: bytes) -> None: ...
    def resize(self, *, rows: int, cols: int) -> None: ...
    def stop(self) -> None: ...


class OutputTap(Protocol):
    def feed(self, data: bytes) -> None: ...
    def resize(self, *, rows: int, cols: int) -> None: ...


MakeWatcher = Callable[[int, int], Watcher]
"""``make(cols, rows)``: a watcher, not started yet."""


class ScreenGate:
    def __init__(
        self,
        loop: Loop,
        rows: int,
        cols: int,
        *,
        stronger_live: Callable[[], bool],
        on_fact: Callable[[Fact], None],
        log: DecisionLog,
        ring: OutputTap | None = None,
        on_done: Callable[[], None] | None = None,
        make_watcher: MakeWatcher | None = None,
    ) -> None:
        """``ring``: sees the output too while the gate does (the answerer's ring, or the
        ``blocked`` check's: docs/answering.md); ``on_done``: told once when the gate needs
        no more output (the relay then feeds the ring itself)."""
        self._loop = loop
        self._stronger_live = stronger_live
        self._on_fact = on_fact
        self._log = log
        self._make = make_watcher or self._screen_watcher
        self._size = (rows, cols)
        self._kept: list[bytes] | None = []  # None once decided
        self._kept_len = 0
        self._watcher: Watcher | None = None
        self._timer: Timer | None = loop.call_later(DECIDE, self._decide)
        self.on_done = on_done  # None once told (the watcher will not run again)
        self.ring = ring

    @property
    def running(self) -> bool:
        return self._watcher is not None

    # -- from the relay -------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.ring is not None:
            self.ring.feed(data)
        if self._watcher is not None:
            self._watcher.feed(data)
        elif self._kept is not None and self._kept_len + len(data) <= KEEP:
            self._kept.append(data)
            self._kept_len += len(data)

    def resize(self, *, rows: int, cols: int) -> None:
        self._size = (rows, cols)
        if self.ring is not None:
            self.ring.resize(rows=rows, cols=cols)
        if self._watcher is not None:
            self._watcher.resize(rows=rows, cols=cols)

    # -- from the controller ----------------------------------------------------------------
    def check(self) -> None:
        """After each fact: once a stronger source is live, decide now if the gate has not
        decided yet (nothing kept, no timer left to wake the session later), or stop the
        watcher."""
        if self._timer is not None:
            if self._stronger_live():
                self._timer.cancel()
                self._decide()
        elif self._watcher is not None and self._stronger_live():
            self._watcher.stop()
            self._watcher = None
            self._log.write("screen", state="stopped", why="a stronger source became live")
            self._done()

    def close(self) -> None:
        self._kept = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        self._done()

    def _done(self) -> None:
        on_done, self.on_done = self.on_done, None
        if on_done is not None:
            on_done()

    # -- the decision ---------------------------------------------------------------------
    def _decide(self) -> None:
        self._timer = None
        kept, self._kept = self._kept, None
        if self._stronger_live():
            self._log.write("screen", state="not started", why="a stronger source is live")
            self._done()
            return
        rows, cols = self._size
        watcher = self._make(cols, rows)
        if not watcher.start():  # the watcher reported why
            self._done()
            return
        self._watcher = watcher
        self._log.write("screen", state="started", why="neither the bridge nor OSC 7501 is live")
        for chunk in kept or ():
            watcher.feed(chunk)

    def _screen_watcher(self, cols: int, rows: int) -> ScreenWatcher:
        from cuewrap.screen.watcher import ScreenWatcher

        return ScreenWatcher(self._loop, cols, rows, self._on_fact, on_error=self._log.error)
