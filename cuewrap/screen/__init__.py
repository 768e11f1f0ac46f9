"""The screen source (docs/design.md#fact-sources (the screen)): a pyte reading of the child's
output, kept off the relay path.

- ``pi_screen``: pure — given screen lines, is Pi working, idle, in a dialog, or unknown?
- ``worker``: the subprocess (``python -m cuewrap.screen.worker COLS ROWS``) that runs pyte.
- ``watcher``: the parent side on the relay's loop; ``ScreenWatcher`` feeds the worker with a
  bounded backlog and turns its reports into ``ScreenActivity`` facts.

Nothing is imported eagerly: ``python -m cuewrap.screen.worker`` must not import the watcher
(which imports the worker module) before it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuewrap.screen.watcher import ScreenWatcher, WatcherStats

__all__ = ["ScreenWatcher", "WatcherStats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cuewrap.screen import watcher

        return getattr(watcher, name)
    raise AttributeError(name)
