"""The child's output activity and quiet, for generic mode (docs/design.md#generic-mode): facts from
timing.

The relay hands every output chunk to :meth:`OutputWatch.feed` (it is the relay's output tap in
generic mode) and the controller calls :meth:`OutputWatch.input` for every keystroke event;
both are a clock read and a few comparisons (the relay's hot path). Facts go to ``emit``:

- :class:`~cuewrap.facts.OutputActive` when output resumes after ``RESUME_GAP`` seconds
  without any (``echo=True`` when it follows the user's input within ``ECHO_WINDOW``: an echo or
  an answer, which ends a wait but is not work), and when output goes on past the echo window
  (``echo=False``: the program is working; once per stretch);
- :class:`~cuewrap.facts.OutputQuiet` when a stretch of work has been followed by
  ``quiet_after`` seconds without output (0: never).

One timer at a time, only while a stretch of work is open: an idle relay still blocks in
``select`` with no timeout. The timer is not moved on every chunk; when it fires early it is
set again from the last output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cuewrap.facts import Fact, OutputActive, OutputQuiet
from cuewrap.loop import Loop, Timer

if TYPE_CHECKING:
    from cuewrap.screen.gate import OutputTap

RESUME_GAP = 1.0  # seconds without output after which output counts as resuming
ECHO_WINDOW = 0.3  # seconds after the user's input in which output counts as its echo


class OutputWatch:
    __slots__ = (
        "_busy",
        "_clock",
        "_emit",
        "_last_in",
        "_last_out",
        "_loop",
        "_timer",
        "quiet",
        "ring",
    )

    def __init__(
        self,
        loop: Loop,
        quiet_after: float,
        emit: Callable[[Fact], None],
        ring: OutputTap | None = None,
    ) -> None:
        self._loop = loop
        self._clock = loop.clock
        self._emit = emit
        self.quiet = quiet_after
        self._last_out = float("-inf")
        self._last_in = float("-inf")
        self._busy = False  # a stretch of work is open
        self._timer: Timer | None = None
        # sees the output too: the answerer's ring (docs/answering.md), when there is one
        self.ring = ring

    def feed(self, data: bytes) -> None:
        """The relay's output tap: one more chunk of the child's output."""
        if self.ring is not None:
            self.ring.feed(data)
        self.output()

    def resize(self, *, rows: int, cols: int) -> None:
        """The relay's output tap: sizes matter only to the answerer's ring."""
        if self.ring is not None:
            self.ring.resize(rows=rows, cols=cols)

    def input(self) -> None:
        self._last_in = self._clock()

    def output(self) -> None:
        now = self._clock()
        gap = now - self._last_out
        self._last_out = now
        echo = now - self._last_in <= ECHO_WINDOW
        if gap < RESUME_GAP and (self._busy or echo):
            return  # output goes on (the common case)
        if echo:  # resumed right after the user's input
            self._emit(OutputActive(echo=True))
            return
        self._emit(OutputActive())  # resumed, or went on past the echo window: work
        if not self._busy:
            self._busy = True
            self._timer = self._loop.call_at(now + self._span(), self._check)

    def _span(self) -> float:
        return self.quiet if self.quiet > 0 else RESUME_GAP

    def _check(self) -> None:
        self._timer = None
        due = self._last_out + self._span()
        if self._clock() < due:
            self._timer = self._loop.call_at(due, self._check)
            return
        self._busy = False
        if self.quiet > 0:
            self._emit(OutputQuiet())

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
