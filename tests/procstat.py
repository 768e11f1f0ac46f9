"""What the kernel counts for a process (``/proc``): how often it woke up, how much CPU it used.

    wakeups(pid)                 its main thread's voluntary context switches so far: one per
                                 wait (a poll, a read) it went into; a thread that never wakes
                                 adds none
    wakeups(pid, threads=True)   the same, summed over every thread of the process
    cpu_ticks(pid)               user + system CPU time so far, in clock ticks (all threads)
    state(pid)                   its state letter (R, S, Z, …); "X" once it is gone
    alive(pid)                   it exists and is not a zombie
    cmdline(pid)                 its arguments joined by spaces; "" once it is gone

A wake-up count is exact; CPU ticks are sampled (a process running when the tick comes is
charged the whole tick), so "did not run at all" is asked of ``wakeups``.
"""

from __future__ import annotations

import os
import re

_VOLUNTARY = re.compile(r"^voluntary_ctxt_switches:\s+(\d+)", re.M)


def _voluntary(status_path: str) -> int:
    with open(status_path) as fh:
        found = _VOLUNTARY.search(fh.read())
    assert found is not None, status_path
    return int(found.group(1))


def wakeups(pid: int, *, threads: bool = False) -> int:
    if not threads:
        return _voluntary(f"/proc/{pid}/status")
    tasks = f"/proc/{pid}/task"
    return sum(_voluntary(f"{tasks}/{tid}/status") for tid in os.listdir(tasks))


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def state(pid: int) -> str:
    return _state(pid) or "X"


def alive(pid: int) -> bool:
    return _state(pid) not in (None, "Z")


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
