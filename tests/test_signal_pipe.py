"""The relay's signal pipe (cuewrap/relay/signals.py): held with ``with``, everything it took
(the handlers, the wake-up fd, the pipe) is given back on the way out, also on an exception."""

from __future__ import annotations

import os
import signal
from types import FrameType

import pytest

from cuewrap.relay.signals import SignalPipe

pytestmark = pytest.mark.unit


def _before(signum: int, frame: FrameType | None) -> None:
    """A handler of the program's own, there before the pipe."""


def test_a_caught_signal_is_read_from_the_pipe() -> None:
    with SignalPipe([signal.SIGUSR1]) as fd:
        assert fd >= 0
        os.kill(os.getpid(), signal.SIGUSR1)
        pipe_read = os.read(fd, 512)
    assert set(pipe_read) == {signal.SIGUSR1}


def test_leaving_puts_back_what_it_took_even_on_an_exception() -> None:
    old = signal.signal(signal.SIGUSR1, _before)
    r, w = os.pipe()
    os.set_blocking(w, False)
    old_wakeup = signal.set_wakeup_fd(w)
    try:
        taken: list[int] = []
        with pytest.raises(RuntimeError), SignalPipe([signal.SIGUSR1]) as fd:
            taken.append(fd)
            assert signal.getsignal(signal.SIGUSR1) is not _before
            raise RuntimeError("inside the relay")
        assert signal.getsignal(signal.SIGUSR1) is _before
        assert signal.set_wakeup_fd(w) == w  # the wake-up fd from before is back
        with pytest.raises(OSError):
            os.fstat(taken[0])  # the pipe is closed
    finally:
        signal.set_wakeup_fd(old_wakeup)
        signal.signal(signal.SIGUSR1, old)
        os.close(r)
        os.close(w)
