"""docs/design.md#real-environments signals and issue 7 items 2, 5, 6: every terminating signal to
cuewrap restores the terminal, tells the child and ends 128+N; files and values that cannot work end
at once with one line and exit 2, nothing spawned."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from launch import default_signals

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    e["TERM"] = "xterm-256color"
    return e


def cuewrap(*args: str) -> list[str]:
    return [PY, "-m", "cuewrap", *args]


def _run_and_signal(tmp_path: Path, sig: int, mode: str) -> tuple[int, bytes, float]:
    """sh prints `stty -g`, runs cuewrap (its pid in a file), prints the status and `stty -g`
    again. Returns cuewrap's status, all output, seconds from the signal to the status.
    The decision log goes to ``tmp_path/log`` (see ``child_death``)."""
    pidfile, log = tmp_path / "pid", str(tmp_path / "log")
    inner = shlex.join(["sh", "-c", 'echo $$ > "$0"; exec "$@"', str(pidfile),
                        *cuewrap("--log", log, "--", PY, CHILD, mode)])  # fmt: skip
    script = f'echo "B=$(stty -g)"; {inner}; echo "RC=$?"; echo "A=$(stty -g)"'
    p = pexpect.spawn("sh", ["-c", script], env=env(), timeout=15, dimensions=(24, 80),
                      preexec_fn=default_signals)  # fmt: skip
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    t0 = time.monotonic()
    os.kill(int(pidfile.read_text()), sig)
    p.expect(rb"RC=(\d+)")
    took = time.monotonic() - t0
    rc = int(p.match.group(1))
    p.expect(pexpect.EOF)
    out = p.logfile_read.getvalue()
    before, after = re.search(rb"B=(\S+)", out), re.search(rb"A=(\S+)", out)
    assert before and after and before.group(1) == after.group(1), "termios not restored"
    return rc, out, took


def child_death(tmp_path: Path) -> list[int | None]:
    """The signal the child died of, from each ChildExit fact of ``_run_and_signal``'s log."""
    records = [json.loads(line) for line in (tmp_path / "log").read_text().splitlines()]
    return [r["signal"] for r in records if r.get("type") == "ChildExit"]


SIGNALS = [
    signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGTERM,
    signal.SIGHUP, signal.SIGINT, signal.SIGVTALRM, signal.SIGXCPU, signal.SIGRTMIN,
]  # fmt: skip


@pytest.mark.parametrize(
    "sig", SIGNALS, ids=lambda s: signal.Signals(s).name if s < 34 else "RTMIN"
)
def test_terminating_signal_restores_and_ends_128_plus_n(tmp_path: Path, sig: int) -> None:
    rc, out, _ = _run_and_signal(tmp_path, sig, "sleep")
    assert rc == 128 + sig
    assert child_death(tmp_path) == [sig]  # told, and it died of it: no SIGKILL after a grace
    tail = out[out.index(b"READY") :]
    if sig == signal.SIGHUP:  # the terminal is gone: nothing more is written to it
        assert b"\x1b[" not in tail
    else:
        assert b"\x1b[?1004l" in tail and b"\x1b[23;0t" in tail


def test_child_that_ignores_the_signal_is_killed_after_the_grace(tmp_path: Path) -> None:
    rc, out, took = _run_and_signal(tmp_path, signal.SIGUSR1, "deaf")
    assert rc == 128 + signal.SIGUSR1
    assert child_death(tmp_path) == [signal.SIGKILL]
    assert took < 8.0  # FATAL_GRACE (3 s) and then SIGKILL, not forever
    assert b"\x1b[?1004l" in out[out.index(b"READY") :]


# -- files and values that cannot work ---------------------------------------------------------


def _must_refuse(
    args: list[str], tmp_path: Path, what: str, extra_env: dict[str, str] | None = None
) -> str:
    """cuewrap in a terminal: exit 2 within 1 s, one line naming ``what``, nothing spawned."""
    marker = tmp_path / "spawned"
    e = env()
    e.update(extra_env or {})
    argv = cuewrap(*args, "--", "sh", "-c", f"touch {shlex.quote(str(marker))}")
    t0 = time.monotonic()
    p = pexpect.spawn(argv[0], argv[1:], env=e, timeout=10)
    p.expect(pexpect.EOF)
    took = time.monotonic() - t0
    p.close()
    out = p.before.decode(errors="replace")
    assert p.exitstatus == 2, out
    assert took < 1.0 + _startup_allowance(), took
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1 and what in lines[0] and "Traceback" not in out, out
    assert not marker.exists()
    return lines[0]


def _startup_allowance() -> float:
    """Python's own start-up under a loaded test machine (measured once, not assumed)."""
    global _ALLOW
    if _ALLOW is None:
        t0 = time.monotonic()
        subprocess.run([PY, "-c", "import cuewrap.cli"], check=True)
        _ALLOW = time.monotonic() - t0
    return _ALLOW


_ALLOW: float | None = None


def test_log_fifo_device_and_unwritable(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in _must_refuse(["--log", str(fifo)], tmp_path, str(fifo))
    assert "not a regular file" in _must_refuse(["--log", "/dev/full"], tmp_path, "/dev/full")
    assert "Is a directory" in _must_refuse(["--log", str(tmp_path)], tmp_path, str(tmp_path))
    missing = tmp_path / "no" / "such" / "dir" / "log"
    assert "cannot write" in _must_refuse(["--log", str(missing)], tmp_path, str(missing))
    # unwritable even for root: a file of /proc that has no write operation
    assert "cannot write" in _must_refuse(["--log", "/proc/version"], tmp_path, "/proc/version")
    _must_refuse([], tmp_path, str(fifo), {"CUEWRAP_LOG": str(fifo)})


def test_config_fifo_and_device(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in _must_refuse(["--config", str(fifo)], tmp_path, str(fifo))
    assert "not a regular file" in _must_refuse(["--config", "/dev/zero"], tmp_path, "/dev/zero")
    home = tmp_path / "home"
    (home / ".config" / "cuewrap").mkdir(parents=True)
    os.mkfifo(home / ".config" / "cuewrap" / "config.toml")
    _must_refuse([], tmp_path, "config.toml", {"HOME": str(home), "XDG_CONFIG_HOME": ""})


def test_numeric_setting_out_of_range(tmp_path: Path) -> None:
    line = _must_refuse([], tmp_path, "CUEWRAP_PRESENCE_IDLE_AFTER",
                        {"CUEWRAP_PRESENCE_IDLE_AFTER": "1e300"})  # fmt: skip
    assert "at most" in line


def test_no_timer_raises_whatever_its_delay() -> None:
    from cuewrap.loop import MAX_WAIT, Loop

    loop = Loop()
    fired: list[str] = []
    for delay in (1e300, float("inf"), float("nan"), 10.0**9):
        loop.call_later(delay, lambda: fired.append("x"))
    assert loop.timeout() is not None and 0 < loop.timeout() <= MAX_WAIT  # type: ignore[operator]
    loop.run_once(max_timeout=0)  # poll() must accept it
    assert fired == []


# -- standard descriptors ------------------------------------------------------------------------


def test_closed_descriptors_with_a_log(tmp_path: Path) -> None:
    """With fd 1 closed and --log, nothing of the child lands in the decision log."""
    log = tmp_path / "log"
    cmd = shlex.join(cuewrap("--log", str(log), "--", "/bin/echo", "hi"))
    r = subprocess.run(["sh", "-c", f"{cmd} >&-; echo rc=$?"], capture_output=True, env=env())
    assert b"rc=1" in r.stdout
    assert not log.exists() or b"hi" not in log.read_bytes()
    # in a terminal with fd 2 closed: the session runs, the log gets only JSON
    cmd = shlex.join(cuewrap("--log", str(log), "--", "/bin/echo", "hi"))
    p = pexpect.spawn("sh", ["-c", f"{cmd} 2>&-"], env=env(), timeout=10)
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0 and b"hi" in p.before
    for line in log.read_text().splitlines():
        assert line.startswith("{"), line
