"""docs/design.md#real-environments job control with small children (the real-Pi walk is
tests/test_jobs_pi.py)."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path

import pexpect
import pytest
from launch import default_signals
from waiting import wait_until

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    e.update(TERM="xterm-256color", PS1="PROMPT$ ", HISTFILE="/dev/null", PROMPT_COMMAND="")
    return e


def cuewrap(*child: str) -> list[str]:
    return [PY, "-m", "cuewrap", "--", *child]


def test_child_stop_without_a_job_control_shell_continues_at_once() -> None:
    """cuewrap led by no shell (its group is orphaned): the kernel discards its own stop, so
    the pair goes on and the child is never left stopped."""
    argv = cuewrap(PY, CHILD, "stop-self")
    p = pexpect.spawn(argv[0], argv[1:], env=env(), timeout=10)
    p.expect("READY")
    p.sendline("")
    p.expect("BACK")
    p.sendline("")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


def test_ctrl_z_of_a_cooked_child_in_bash(tmp_path: Path) -> None:
    """``cat`` (the PTY's own ISIG turns Ctrl-Z into SIGTSTP): Stopped, prompt, same stty,
    ``fg``, and typed lines reach cat again; its exit status is cuewrap's."""
    before = tmp_path / "before"
    p = pexpect.spawn("bash", ["--norc", "--noprofile", "-i"], env=env(), timeout=10)
    p.expect_exact("PROMPT$ ")
    p.sendline(f"stty -g > {before}; {shlex.join(cuewrap('cat'))}")
    p.sendline("one")
    p.expect("one\r\n.*one")  # echoed by the terminal, then by cat
    p.send("\x1a")
    p.expect("Stopped")
    p.expect_exact("PROMPT$ ")
    p.sendline(f"stty -g | cmp -s - {before}; echo SAME=$?")
    p.expect(r"SAME=(\d)")
    assert p.match.group(1) == b"0"
    p.expect_exact("PROMPT$ ")
    p.sendline("fg")
    p.sendline("two")
    p.expect("two\r\n.*two")
    p.send("\x04")
    p.expect_exact("PROMPT$ ")
    p.sendline("echo RC=$?")  # fg's status is the job's
    p.expect(r"RC=(\d+)")
    assert p.match.group(1) == b"0"
    p.sendline("exit")
    p.expect(pexpect.EOF)


def test_sigstop_and_sigcont_without_a_shell_lose_nothing() -> None:
    argv = cuewrap(PY, CHILD, "raw-echo")
    p = pexpect.spawn(argv[0], argv[1:], env=env(), timeout=10)
    p.expect("READY")
    os.kill(p.pid, signal.SIGSTOP)
    wait_until(lambda: _state(p.pid) == "T", 5, "cuewrap stopped")
    p.send(b"x")  # waits in the terminal while cuewrap is stopped
    os.kill(p.pid, signal.SIGCONT)
    p.expect(rb"R78\r\n")
    p.send(b"q")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(_stat(int(entry))[1]) == pid:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _gone(pid: int) -> bool:
    try:
        return _stat(pid)[0] == "Z"
    except OSError:
        return True


def test_the_leader_dies_with_cuewrap_also_under_nohup() -> None:
    """cuewrap started with hangups ignored (``nohup``: inherited, and kept across exec), then
    killed outright while its command sleeps: the PTY goes away and cuewrap's session leader
    goes with it, instead of waiting for the command for ever; the command keeps the ignored
    hangup it was given, as under ``nohup`` without cuewrap."""

    def nohup() -> None:
        default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    argv = cuewrap(PY, CHILD, "sleep")
    p = pexpect.spawn(argv[0], argv[1:], env=env(), timeout=10, preexec_fn=nohup)
    command = None
    try:
        p.expect("READY")
        [leader] = _children(p.pid)
        [command] = _children(leader)
        os.kill(p.pid, signal.SIGKILL)
        wait_until(lambda: _gone(leader), 5, "the leader to end with the PTY",
                   detail=lambda: _stat(leader))  # fmt: skip
        assert not _gone(command)  # its hangup is ignored, as asked
    finally:
        if command is not None:
            os.kill(command, signal.SIGKILL)
        p.close(force=True)


def test_the_leader_waits_as_a_bare_interpreter_and_still_reports_the_exit() -> None:
    """Once the command runs, the leader execs a bare interpreter (``python -I -S``, no
    copy of cuewrap's pages: docs/benchmarks.md, the footprint); it is still the command's
    parent and session leader, holds only its report pipe (and /dev/null), and the command's
    exit status still comes back."""
    argv = cuewrap(PY, CHILD, "exit", "7")
    p = pexpect.spawn(argv[0], argv[1:], env=env(), timeout=10)
    try:
        p.expect("READY")
        [leader] = _children(p.pid)
        [command] = _children(leader)

        def cmdline() -> list[str]:
            with open(f"/proc/{leader}/cmdline", "rb") as f:
                return f.read().decode().split("\0")

        wait_until(lambda: cmdline()[1:4] == ["-I", "-S", "-c"], 5, "the leader's exec",
                   detail=cmdline)  # fmt: skip
        assert int(_stat(leader)[3]) == leader  # still the session leader (its session id)
        fds = {
            int(fd): os.readlink(f"/proc/{leader}/fd/{fd}")
            for fd in os.listdir(f"/proc/{leader}/fd")
        }
        assert [fds.pop(fd) for fd in (0, 1, 2)] == ["/dev/null"] * 3  # never the user's screen
        assert [target.startswith("pipe:") for target in fds.values()] == [True]  # its reports
        assert int(_stat(command)[1]) == leader
        p.sendline("")
        p.expect(pexpect.EOF)
    finally:
        p.close(force=True)
    assert p.exitstatus == 7
