"""Getting out of the way: standard descriptors held, and the command run as it is.

``hold_std_fds()`` runs first in ``main``: a closed fd 0, 1 or 2 is held on ``/dev/null``
so that nothing cuewrap opens later (the decision log, a pipe, the PTY) lands on it and is
then mistaken for a standard stream. The placeholders are close-on-exec, so a command that
cuewrap execs as it is sees the descriptor closed, as it would without cuewrap.

``exec_plain()`` is docs/design.md#guard for pipes and scripts: when stdin or stdout is not a
terminal cuewrap replaces itself with the command (same argv, environment, streams and process, so
the same exit status) and says nothing.
"""

from __future__ import annotations

import os
import signal


def hold_std_fds() -> None:
    """Open ``/dev/null`` (close-on-exec) on each of fds 0-2 that is closed."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                got = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                return
            if got != fd:  # a lower one was free after all: keep the count honest
                os.close(got)


def exec_plain(path: str, argv: list[str]) -> None:
    """Replace this process with ``argv`` (``argv[0]`` as typed, ``path`` resolved).

    Returns only by raising ``OSError`` when exec fails."""
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal survives exec
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execve(path, argv, _initial_environment())
    except OSError:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_IGN)
        raise


def _initial_environment() -> dict[bytes, bytes]:
    """The environment this process was started with. Python itself may have changed
    ``os.environ`` (PEP 538 sets ``LC_CTYPE`` when the locale is C); Linux keeps the original
    block in ``/proc/self/environ``."""
    try:
        with open("/proc/self/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return dict(os.environb)
    env: dict[bytes, bytes] = {}
    for entry in raw.split(b"\0"):
        key, eq, value = entry.partition(b"=")
        if eq and key:
            env.setdefault(key, value)
    return env
