"""Waiting in tests: one way to wait for a condition, one named way to wait out a window.

    wait_until(predicate, timeout, what)   poll until ``predicate()`` is truthy, return it;
                                           after ``timeout`` s fail naming ``what``
    absence_window(seconds, what)          a fixed wait in which ``what`` must NOT happen
                                           (the caller checks afterwards that it did not)

A test never sleeps a fixed time to "let it settle": it waits for the screen, the log or the
process state that says it settled. The only fixed waits left are absence windows, and they
say what they are watching for.

Both take ``sleep``: code that must keep an event loop turning while it waits passes
``turning(loop)``; a reader with a condition variable passes its ``wait`` (called with the
lock held).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


class _Loop(Protocol):
    def run_once(self, max_timeout: float | None = None) -> None: ...


#: How often a predicate is polled (seconds) unless the caller says otherwise.
POLL = 0.05


def wait_until(
    predicate: Callable[[], T],
    timeout: float,
    what: str,
    *,
    interval: float = POLL,
    sleep: Callable[[float], object] = time.sleep,
    detail: Callable[[], object] | None = None,
) -> T:
    """Call ``predicate`` until it returns something truthy and return that value.

    After ``timeout`` seconds raise ``TimeoutError("timed out after Ns waiting for WHAT")``,
    followed by ``detail()`` when given (the state that explains the failure: a screen, the
    log records seen). ``predicate`` may itself raise to stop waiting early (e.g. the
    process it waits on has exited)."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        left = deadline - time.monotonic()
        if left <= 0:
            msg = f"timed out after {timeout:g}s waiting for {what}"
            if detail is not None:
                msg += f"\n{detail()}"
            raise TimeoutError(msg)
        sleep(min(interval, left))


def absence_window(
    seconds: float, what: str, *, sleep: Callable[[float], object] = time.sleep
) -> None:
    """Let ``seconds`` pass so that ``what`` -- something that must NOT happen -- would have
    happened by now if it were going to; the caller asserts its absence afterwards.

    This is the one legitimate fixed wait in the tests: nothing on the screen or in the log
    announces that something did not happen. ``what`` documents the window at the call site
    (and shows in a traceback)."""
    assert what, "name what must not happen"
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sleep(left)


def turning(loop: _Loop) -> Callable[[float], None]:
    """A ``sleep`` for the helpers above that runs ``loop`` instead of sleeping."""
    return lambda seconds: loop.run_once(max_timeout=seconds)
