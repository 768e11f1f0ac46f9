"""cuewrap.workers: the one owner of worker processes (spawn, exit watch, group kill, reaper),
with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import turning, wait_until

from cuewrap.loop import Loop
from cuewrap.workers import Reaper, kill_group, python_worker, spawn, unwatch, watch_exit

pytestmark = pytest.mark.pty


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_spawn_gives_the_worker_its_own_session_and_no_inherited_fds(tmp_path: Path) -> None:
    r, w = os.pipe()
    os.set_inheritable(w, True)
    probe = (
        "import os, sys; "
        f"print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid()); "
        f"os.fstat({w})"
    )
    proc = spawn([sys.executable, "-c", probe], stdout=subprocess.PIPE)
    out, _ = proc.communicate(timeout=10)
    os.close(r)
    os.close(w)
    assert out.split() == [b"True", b"True"]
    assert proc.returncode != 0  # fstat of the parent's fd failed: it was not inherited


def test_kill_group_takes_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    proc = spawn(["/bin/sh", "-c", script])
    wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), 10, "the grandchild")
    grandchild = int(pidfile.read_text())
    kill_group(proc, signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    wait_until(lambda: not alive(grandchild), 10, "the grandchild to die with the group")
    kill_group(proc, signal.SIGKILL)  # a group that is gone: no error


def test_watch_exit_calls_back_once_the_process_exits() -> None:
    loop = Loop()
    proc = spawn([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    seen: list[int | None] = []
    fd = watch_exit(loop, proc.pid, lambda: seen.append(proc.poll()))
    assert fd is not None  # Linux >= 5.3
    assert proc.stdin is not None
    proc.stdin.close()
    wait_until(lambda: seen, 10, "the exit callback", sleep=turning(loop))
    assert seen[0] == 0
    unwatch(loop, fd)
    assert loop.watching() == []


def test_reaper_reports_the_exit_status_without_a_timer_after_the_deadline() -> None:
    loop = Loop()
    reaper = Reaper(loop)
    proc = spawn([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(5)"],
                 stdin=subprocess.PIPE)  # fmt: skip
    codes: list[int] = []
    reaper.add(proc, kill_after=30.0, on_exit=codes.append)
    assert len(reaper) == 1
    assert proc.stdin is not None
    proc.stdin.close()
    wait_until(lambda: codes, 10, "the exit status", sleep=turning(loop))
    assert codes == [5] and len(reaper) == 0
    assert loop.timeout() is None and loop.watching() == []


def test_reaper_kills_the_group_of_a_worker_that_outlives_its_deadline() -> None:
    loop = Loop()
    reaper = Reaper(loop)
    proc = spawn(
        ["/bin/sh", "-c", "trap '' TERM; echo ready; exec sleep 60"], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    codes: list[int] = []
    kill_group(proc, signal.SIGTERM)  # ignored (sleep inherits the ignored disposition)
    reaper.add(proc, kill_after=0.05, on_exit=codes.append)
    wait_until(lambda: codes, 10, "the KILL at the deadline", sleep=turning(loop))
    assert codes == [-signal.SIGKILL]


def test_reaper_of_an_already_reaped_worker_reports_at_once() -> None:
    loop = Loop()
    reaper = Reaper(loop)
    proc = spawn([sys.executable, "-c", "raise SystemExit(7)"])
    proc.wait(timeout=10)
    codes: list[int] = []
    reaper.add(proc, kill_after=1.0, on_exit=codes.append)
    assert codes == [7] and len(reaper) == 0


def test_reaper_close_reaps_synchronously() -> None:
    loop = Loop()
    reaper = Reaper(loop)
    proc = spawn(["/bin/sh", "-c", "trap '' TERM; sleep 60"])
    reaper.add(proc, kill_after=30.0)
    reaper.close(timeout=0.2)
    assert proc.returncode == -signal.SIGKILL and len(reaper) == 0
    assert loop.watching() == []


def test_a_lean_worker_runs_without_site_and_without_the_projects_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python_worker(lean=…)``: no site, cuewrap's path given instead, and the directory
    cuewrap runs in is not on it (``python -m cuewrap`` has it first on its own path): a
    project's own ``json.py`` is never the worker's."""
    (tmp_path / "json.py").write_text(f"open({str(tmp_path / 'shadowed')!r}, 'w')\n")
    monkeypatch.chdir(tmp_path)
    lean = [str(tmp_path), "", *sys.path]
    argv = python_worker(sys.executable, "cuewrap.deliver.dbus_worker", lean=lean)
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # no bus there
    proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    out, _ = proc.communicate(b'{"op": "hello"}\n', timeout=20)
    assert out.startswith(b'{"fatal": "no session bus'), out
    assert not (tmp_path / "shadowed").exists()
    assert argv[1:3] == ["-S", "-P"] and str(tmp_path) not in argv
