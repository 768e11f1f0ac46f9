"""Starting processes that a test will signal: with the dispositions the test relies on.

A process inherits ignored signals and the signal mask from whoever started the test run: a
script's background job starts with SIGINT and SIGQUIT ignored, ``nohup`` ignores SIGHUP, and
an ignored signal stays ignored across ``exec``. A test that sends a signal (or types Ctrl-C)
and expects the default effect passes ``preexec_fn=default_signals`` to ``pexpect.spawn`` or
``subprocess.Popen``, so that the suite does not depend on how it was launched.

``seen(p)``: everything a pexpect child has written so far, without taking any of it away from
the next ``expect``.

``started(p)``: a pexpect child to close after the test, passed or failed (the autouse fixture
``close_started``, registered by conftest.py).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import pexpect
import pytest

_UNCATCHABLE = {signal.SIGKILL, signal.SIGSTOP}


def default_signals() -> None:
    """``preexec_fn``: every signal at its default disposition and none blocked, as for a
    command a shell runs in the foreground of a terminal."""
    for sig in signal.valid_signals() - _UNCATCHABLE:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


def seen(p: pexpect.spawn) -> bytes:
    """All that ``p`` wrote so far (its ``logfile_read``, a ``BytesIO``), after taking what is
    ready now. What this read brings is put back into ``p``'s buffer: a bare
    ``read_nonblocking`` would hand it to the log only, and a later ``expect`` would wait for
    bytes that had already come (a DA1 query the test must answer, lost that way)."""
    with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
        p.buffer = p.buffer + p.read_nonblocking(1 << 20, timeout=0)
    return p.logfile_read.getvalue()  # type: ignore[no-any-return]


_STARTED: list[pexpect.spawn] = []


def started(p: pexpect.spawn) -> pexpect.spawn:
    """``p``, to be closed (forced) after the test."""
    _STARTED.append(p)
    return p


@pytest.fixture(autouse=True)
def close_started() -> Iterator[None]:
    yield
    while _STARTED:
        with contextlib.suppress(Exception):
            _STARTED.pop().close(force=True)
