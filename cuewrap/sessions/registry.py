"""The registry of running sessions: one small JSON file per cuewrap (docs/sessions.md).

Where: ``$XDG_RUNTIME_DIR/cuewrap/``, or where that is unset, ``cuewrap-sessions-<uid>`` in
the temp directory (``$TMPDIR``). Both are directories of the user's own, mode 0700, and each
entry ``<pid>.json`` is mode 0600, whatever the umask. An entry is written whole to a temporary
name and renamed over the old one, so a reader sees the old entry or the new one, never half.
It holds the session's state and where it runs, never a prompt, a question or an answer.

A reader (``cuewrap ls``, ``go``, a session aggregating its tmux window) lists only entries
whose process still runs: the pid must exist and its start time (``/proc/PID/stat``, field 22)
must be the one recorded, so an entry left by a killed cuewrap whose pid was reused is not
taken for a live one. Such an entry is removed by the reader. A file that is not an entry
(malformed, another user's, a symlink, not a regular file) is skipped, never a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from typing import Any

VERSION = 1
MAX_ENTRY = 64 * 1024  # bytes read of one entry
_NAME = re.compile(r"(\d{1,10})\.json")


def directories(env: Mapping[str, str]) -> list[str]:
    """Where entries may be: the runtime directory's, then the temp directory's."""
    out: list[str] = []
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        out.append(os.path.join(runtime, "cuewrap"))
    base = env.get("TMPDIR") or tempfile.gettempdir()
    out.append(os.path.join(base, f"cuewrap-sessions-{os.getuid()}"))
    return out


def _is_private_dir(path: str) -> bool:
    """``path`` is a real directory of ours (no symlink), mode 0700 (made so if it is ours)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False
    if stat.S_IMODE(st.st_mode) != 0o700:
        try:
            os.chmod(path, 0o700)
        except OSError:
            return False
    return True


def own_directory(env: Mapping[str, str]) -> str | None:
    """The directory to write in, made if missing (None: none can be had)."""
    for path in directories(env):
        with contextlib.suppress(OSError):  # (a runtime directory that is missing stays so)
            os.mkdir(path, 0o700)
        if _is_private_dir(path):
            return path
    return None


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks after boot, /proc/PID/stat field 22), or None
    when it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # field 2 (the command name) may hold spaces and parentheses: count after the last ')'
    fields = data[data.rfind(b")") + 2 :].split()
    if fields[:1] in ([b"Z"], [b"X"]):
        return None  # a zombie: dead, not yet reaped by its parent
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _alive(pid: int, started: object) -> bool:
    if isinstance(started, int) and os.path.isdir("/proc/self"):
        return start_time(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: not the entry's
        return False
    return True


class Entry:
    """This process's own entry: written whole on every change, removed at the end."""

    def __init__(self, directory: str, pid: int | None = None) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.dir = directory
        self.path = os.path.join(directory, f"{self.pid}.json")
        self._tmp = os.path.join(directory, f".{self.pid}.tmp")
        self.started = start_time(self.pid)

    def write(self, fields: Mapping[str, Any]) -> None:
        """Raises OSError (the caller fails open)."""
        record = {"version": VERSION, "pid": self.pid, "start_time": self.started, **fields}
        data = json.dumps(record, ensure_ascii=False).encode()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self._tmp, flags, 0o600)
        try:
            os.fchmod(fd, 0o600)  # whatever the umask, and an old file's mode
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(self._tmp, self.path)

    def remove(self) -> None:
        for path in (self.path, self._tmp):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _read(path: str) -> dict[str, Any] | None:
    """One entry, or None when the file is not one of ours."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        data = os.read(fd, MAX_ENTRY + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_ENTRY:
        return None
    try:
        record = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _valid(record: Mapping[str, Any], pid: int) -> bool:
    return (
        record.get("version") == VERSION
        and record.get("pid") == pid
        and isinstance(record.get("state"), str)
        and isinstance(record.get("since"), int | float)
        and not isinstance(record.get("since"), bool)
    )


def read_sessions(
    env: Mapping[str, str],
    *,
    clean: bool = True,
    removed: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every live session's entry (each pid once); entries of dead processes are removed (and
    appended to ``removed``, when given: their tmux window may still show their state)."""
    found: dict[int, dict[str, Any]] = {}
    for directory in dict.fromkeys(directories(env)):
        try:
            st = os.lstat(directory)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue  # not ours: never read
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            match = _NAME.fullmatch(name)
            if match is None:
                continue
            pid = int(match.group(1))
            path = os.path.join(directory, name)
            record = _read(path)
            if record is None or not _valid(record, pid):
                continue  # malformed or foreign: skipped, left alone
            if not _alive(pid, record.get("start_time")):
                if clean:
                    try:
                        os.unlink(path)
                    except OSError:
                        continue  # another reader was first: it tells
                    with contextlib.suppress(OSError):  # its control socket (answering)
                        os.unlink(os.path.join(directory, f"{pid}.sock"))
                    if removed is not None:
                        removed.append(record)
                continue
            if pid not in found or record["since"] > found[pid]["since"]:
                found[pid] = record
    return list(found.values())
