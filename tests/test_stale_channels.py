"""Issue 7 item 8: a socket directory left by a killed cuewrap is removed by the next start."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.pty

PY = sys.executable


def _env(tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    e.update(TERM="xterm-256color", XDG_RUNTIME_DIR=str(tmp_path), TMPDIR=str(tmp_path))
    return e


def _stand_in_pi(tmp_path: Path) -> Path:
    """A ``pi`` that prints its socket and waits (cuewrap opens the bridge for ``pi``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pi = bin_dir / "pi"
    pi.write_text('#!/bin/sh\necho "SOCK=$CUEWRAP_BRIDGE_SOCKET"\nexec sleep 60\n')
    pi.chmod(0o755)
    return bin_dir


def test_killed_cuewrap_leaves_a_directory_the_next_start_removes(tmp_path: Path) -> None:
    # a short base: the socket path must fit in sun_path (pytest's tmp_path may not)
    run_dir = Path(tempfile.mkdtemp(prefix="cw", dir="/tmp"))
    try:
        _check(tmp_path, run_dir)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _check(tmp_path: Path, run_dir: Path) -> None:
    env = _env(run_dir)
    env["PATH"] = f"{_stand_in_pi(tmp_path)}{os.pathsep}{env['PATH']}"
    first = pexpect.spawn(PY, ["-m", "cuewrap", "pi"], env=env, timeout=15)
    first.expect(rb"SOCK=(\S+)")
    stale = Path(first.match.group(1).decode()).parent
    assert stale.is_dir() and stale.parent == run_dir
    os.kill(first.pid, signal.SIGKILL)  # no clean-up runs
    first.expect(pexpect.EOF)
    first.close()
    assert stale.is_dir()
    # a directory of a live process (this one) and someone's unrelated one stay
    live = run_dir / f"cuewrap-{os.getpid()}-abcdef"
    live.mkdir()
    other = run_dir / "cuewrap-notapid"
    other.mkdir()
    second = pexpect.spawn(PY, ["-m", "cuewrap", "pi"], env=env, timeout=15)
    second.expect(rb"SOCK=(\S+)")
    mine = Path(second.match.group(1).decode()).parent
    assert not stale.exists()
    assert live.is_dir() and other.is_dir() and mine.is_dir()
    second.terminate(force=True)
    second.expect(pexpect.EOF)
    # the killed cuewrap's Pi (the stand-in) was hung up with its terminal
    r = subprocess.run(["pgrep", "-f", f"SOCK={stale}"], capture_output=True)
    assert r.returncode != 0
