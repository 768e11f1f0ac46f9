"""What a session holds from its start: the garbage collector's pause
(docs/architecture.md#start-up-the-child-first), and what the session must give back.

While cuewrap starts — the imports before and after the child's spawn — the collector ran about
30 times and found next to nothing, ~2 ms of it before the child's exec. ``cli.run`` holds one
:class:`GcPause` around the whole run; the session ends it as soon as the start-up is over (the
cue side built, or at once without one); leaving the ``with`` ends it on every other way out.
Imported before the spawn: only ``gc``. :class:`Held` is what the session holds until it ends
(``contextlib.ExitStack``'s part that it needs: contextlib is not loaded before the spawn
otherwise, and its import costs ~0.4 ms there).
"""

from __future__ import annotations

import gc

from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


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


class Held:
    """What a session took and must give back: ``callback`` each as it is taken; leaving the
    ``with`` calls them last taken first, every one even when an earlier one raised (the first
    such error is raised once all have run)."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], object]] = []

    def __enter__(self) -> Held:
        return self

    def callback(self, undo: Callable[[], object]) -> None:
        self._undo.append(undo)

    def __exit__(self, *exc: object) -> None:
        first: BaseException | None = None
        while self._undo:
            try:
                self._undo.pop()()
            except BaseException as error:  # the rest are still given back
                first = first or error
        if first is not None:
            raise first
