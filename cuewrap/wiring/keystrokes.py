"""Keystrokes for the engine: at most one per ``KEY_WINDOW``, plus a trailing one.

Typing, pasting and mouse motion all arrive as input; the engine needs to know only that the
user is at the keyboard, not every read. The first key in a window is told at once; if more
come within the window, one more is told at its end, so the engine never thinks the last key
was earlier than it was.
"""

from __future__ import annotations

from collections.abc import Callable

from cuewrap.loop import Loop, Timer

KEY_WINDOW = 1.0  # seconds


class KeyWindow:
    def __init__(self, loop: Loop, tell: Callable[[], None], window: float = KEY_WINDOW) -> None:
        self._loop = loop
        self._tell = tell
        self._window = window
        self._last = float("-inf")  # when the engine was last told
        self._timer: Timer | None = None

    def key(self) -> None:
        """The user typed (one read of input)."""
        now = self._loop.clock()
        if now - self._last >= self._window:
            self._last = now
            self._tell()
        elif self._timer is None:
            self._timer = self._loop.call_at(self._last + self._window, self._late)

    def _late(self) -> None:
        self._timer = None
        self._last = self._loop.clock()
        self._tell()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
