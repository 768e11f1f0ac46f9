"""The decision log: one JSON object per line, each with a ``kind`` (SPEC 8).

Answers "why did (or didn't) I get a cue?". Writing never raises: a log that cannot be
written is dropped silently (nothing may reach the user's screen).
"""

from __future__ import annotations

import os
import time
from typing import IO


class DecisionLog:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        self.failed = False
        if path:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
                self._fh = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
            except OSError:
                self.failed = True

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
