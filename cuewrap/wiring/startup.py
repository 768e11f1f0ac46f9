"""The start-up's pause of the garbage collector (docs/architecture.md#start-up-the-child-first).

While cuewrap starts — the imports before and after the child's spawn — the collector ran about
30 times and found next to nothing, ~2 ms of it before the child's exec. ``cli.run`` holds one
:class:`GcPause` around the whole run; the session ends it as soon as the start-up is over (the
cue side built, or at once without one); leaving the ``with`` ends it on every other way out.
Imported before the spawn: only ``gc``.
"""

from __future__ import annotations

import gc


class GcPause:
    """The collector off from ``__enter__`` until the first :meth:`end` (or the exit)."""

    def __init__(self) -> None:
        self._paused = False

    def __enter__(self) -> GcPause:
        gc.disable()
        self._paused = True
        return self

    def end(self) -> None:
        """The start-up is over: the collector runs again (once; later calls do nothing)."""
        if self._paused:
            self._paused = False
            gc.enable()

    def __exit__(self, *exc: object) -> None:
        self.end()
