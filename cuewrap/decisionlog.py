"""The decision log: one JSON object per line, each with a ``kind``
(docs/design.md#what-the-user-sees).

Answers "why did (or didn't) I get a cue?". Opening checks the path (a regular file that can
be written, or :class:`LogFileError` with the one line to show: the session then exits 2
before anything is spawned). After that, writing never raises: a write that fails (a full
disk) is dropped silently (nothing may reach the user's screen).
"""

from __future__ import annotations

import errno
import os
import stat
import time

from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO


class LogFileError(Exception):
    """The log path cannot be a decision log; ``str`` is one line naming the path."""


class DecisionLog:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        self.failed = False
        if path:
            fd = _open_log(path)
            try:
                self._fh = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
            except OSError as exc:  # e.g. a file of /proc that cannot be appended to
                os.close(fd)
                raise LogFileError(f"log file {path}: cannot write: {exc.strerror}") from None

    @property
    def enabled(self) -> bool:
        return self._fh is not None

    def write(self, kind: str, **fields: object) -> None:
        if self._fh is None:
            return
        import json  # only when logging: json is not on the start-up path

        rec: dict[str, object] = {"t": round(time.time(), 6), "kind": kind}
        rec.update(fields)
        try:
            self._fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        except (OSError, ValueError, TypeError):
            self.failed = True

    def record(self, rec: dict[str, object]) -> None:
        """Write a record that already has its ``kind``."""
        kind = str(rec.get("kind", "record"))
        self.write(kind, **{k: v for k, v in rec.items() if k != "kind"})

    def error(self, where: str, exc: BaseException) -> None:
        self.write("internal_error", where=where, error=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
            self._fh = None


def open_append(path: str, what: str) -> int:
    """A regular file opened for appending (the decision log's checks), or LogFileError."""
    return _open_log(path, what)


def _open_log(path: str, what: str = "log file") -> int:
    """Open ``path`` for appending: never blocks (a FIFO without a reader is refused, not
    waited on) and accepts only a regular file (not a device such as /dev/full, a FIFO, a
    socket or a directory). ``what`` names the file in the error."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads
            raise LogFileError(f"{what} {path}: not a regular file") from None
        raise LogFileError(f"{what} {path}: cannot write: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogFileError(f"{what} {path}: not a regular file") from None
    os.set_blocking(fd, True)
    return fd
