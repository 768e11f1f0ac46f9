from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from waiting import absence_window, turning, wait_until

from cuewrap.deliver.keepawake import Inhibitor, default_inhibitor
from cuewrap.loop import Loop

pytestmark = [
    pytest.mark.pty,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc"),
]

# A stand-in inhibitor: logs its pid, forks a grandchild (like systemd-inhibit's `sleep`),
# writes both pids, then sleeps "forever".
INHIBITOR = textwrap.dedent(
    """
    import os, sys, time
    d = sys.argv[1]
    def put(name, value):
        tmp = os.path.join(d, name + ".tmp")
        with open(tmp, "w") as fh:
            fh.write(str(value))
        os.rename(tmp, os.path.join(d, name))
    with open(os.path.join(d, "spawns.log"), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    child = os.fork()
    if child == 0:
        time.sleep(3600)
        os._exit(0)
    put("grandchild.pid", child)
    put("inhibitor.pid", os.getpid())
    time.sleep(3600)
    """
)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def read_pid(path: Path) -> int:
    return int(path.read_text())


@pytest.fixture
def inhib(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "inhibitor.py"
    script.write_text(INHIBITOR)
    return [sys.executable, str(script), str(tmp_path)], tmp_path


class States:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, state: str, detail: str) -> None:
        self.seen.append((state, detail))

    @property
    def names(self) -> list[str]:
        return [s for s, _ in self.seen]


def test_hold_then_release(
    inhib: tuple[list[str], Path], capfd: pytest.CaptureFixture[str]
) -> None:
    cmd, d = inhib
    loop, states = Loop(), States()
    ka = Inhibitor(loop, cmd, states)
    ka.hold()
    assert ka.active
    wait_until((d / "inhibitor.pid").exists, 5, "the inhibitor to start", sleep=turning(loop))
    pid, grandchild = read_pid(d / "inhibitor.pid"), read_pid(d / "grandchild.pid")
    assert alive(pid) and alive(grandchild)
    assert os.getpgid(pid) == ka.pid  # its own process group, led by the watcher
    wait_until(lambda: "held" in states.names, 2, "state 'held'", sleep=turning(loop))
    assert states.names[:2] == ["requested", "held"]

    ka.release()
    assert not ka.active
    assert states.names[-1] == "released"
    wait_until(lambda: not alive(pid) and not alive(grandchild), 3,
               "the inhibitor and its child to end", sleep=turning(loop))  # fmt: skip
    wait_until(lambda: ka.reaping == 0, 3, "the watcher reaped", sleep=turning(loop))
    loop.close()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_double_hold_starts_one_process(inhib: tuple[list[str], Path]) -> None:
    cmd, d = inhib
    loop, states = Loop(), States()
    ka = Inhibitor(loop, cmd, states)
    ka.hold()
    first = ka.pid
    ka.hold()
    assert ka.pid == first
    wait_until((d / "inhibitor.pid").exists, 5, "the inhibitor to start", sleep=turning(loop))
    absence_window(0.4, "a second inhibitor", sleep=turning(loop))
    assert (d / "spawns.log").read_text().split() == [str(read_pid(d / "inhibitor.pid"))]
    assert states.names.count("requested") == 1
    ka.close()


def test_release_during_acquisition_releases_at_once(inhib: tuple[list[str], Path]) -> None:
    cmd, d = inhib
    loop, states = Loop(), States()
    ka = Inhibitor(loop, cmd, states)
    ka.hold()
    ka.release()  # before the inhibitor has even started
    assert states.names == ["requested", "released"]
    absence_window(1.0, "'held' after the release", sleep=turning(loop))
    assert "held" not in states.names
    for name in ("inhibitor.pid", "grandchild.pid"):
        if (d / name).exists():
            wait_until(lambda n=name: not alive(read_pid(d / n)), 3,  # type: ignore[misc]
                       f"the process of {name} to end", sleep=turning(loop))  # fmt: skip
    # hold again afterwards: a fresh inhibitor
    for name in ("inhibitor.pid", "grandchild.pid"):
        (d / name).unlink(missing_ok=True)
    ka.hold()
    wait_until((d / "inhibitor.pid").exists, 5, "the inhibitor to start", sleep=turning(loop))
    pid, grandchild = read_pid(d / "inhibitor.pid"), read_pid(d / "grandchild.pid")
    assert alive(pid) and alive(grandchild)
    ka.close()
    assert ka.reaping == 0
    wait_until(lambda: not alive(pid) and not alive(grandchild), 2,
               "the inhibitor and its child to end after close()")  # fmt: skip


def test_inhibitor_that_fails_reports_failed() -> None:
    loop, states = Loop(), States()
    ka = Inhibitor(loop, ["sh", "-c", "echo 'Failed to inhibit: no logind' >&2; exit 3"], states)
    ka.hold()
    wait_until(lambda: "failed" in states.names, 3, "state 'failed'", sleep=turning(loop))
    assert states.seen[-1] == (
        "failed",
        "inhibitor exited (status 3): Failed to inhibit: no logind",
    )
    assert not ka.active
    ka.hold()  # may be tried again
    assert states.names.count("requested") == 2
    ka.close()


def test_missing_inhibitor_binary_fails_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    loop, states = Loop(), States()
    ka = Inhibitor(loop, ["/nonexistent/inhibitor"], states)
    ka.hold()
    wait_until(lambda: "failed" in states.names, 3, "state 'failed'", sleep=turning(loop))
    assert "status 127" in states.seen[-1][1]
    assert capfd.readouterr() == ("", "")


def test_no_inhibitor_available() -> None:
    states = States()
    ka = Inhibitor(Loop(), None, states, platform="plan9", which=lambda _: None)
    ka.hold()
    assert states.seen == [("failed", "no inhibitor available (set keep_awake.command)")]
    assert not ka.active


def test_default_inhibitors_block_system_sleep_only() -> None:
    linux = default_inhibitor("linux", lambda name: f"/usr/bin/{name}")
    assert linux is not None
    assert linux[0] == "systemd-inhibit"
    # sleep only: an idle lock would keep the screen from blanking and locking
    assert "--what=sleep" in linux and "--mode=block" in linux
    assert linux[-2:] == ["sleep", "infinity"]
    assert default_inhibitor("linux", lambda _: None) is None
    mac = default_inhibitor("darwin", lambda name: f"/usr/bin/{name}", pid=4242)
    assert mac == ["caffeinate", "-i", "-w", "4242"]  # no -d: the display may sleep
    assert default_inhibitor("win32", lambda name: name) is None


HOLDER = textwrap.dedent(
    """
    import sys, time
    from cuewrap.deliver import keepawake
    from cuewrap.loop import Loop
    pdeathsig = sys.argv[1] != "watcher-only"
    loop = Loop()
    ka = keepawake.Inhibitor(loop, sys.argv[2:], lambda s, d: None, die_with_parent=pdeathsig)
    ka.hold()
    while True:
        loop.run_once(max_timeout=1.0)
    """
)


@pytest.mark.parametrize("mode", ["pdeathsig+watcher", "watcher-only"])
def test_inhibitor_dies_when_cuewrap_is_killed(
    inhib: tuple[list[str], Path], tmp_path: Path, mode: str
) -> None:
    cmd, d = inhib
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, mode, *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until((d / "inhibitor.pid").exists, 10, "the inhibitor to start")
        pid, grandchild = read_pid(d / "inhibitor.pid"), read_pid(d / "grandchild.pid")
        assert alive(pid) and alive(grandchild)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=5)
        wait_until(lambda: not alive(pid) and not alive(grandchild), 5,
                   f"the inhibitor and its child to end when the holder dies ({mode})")  # fmt: skip
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
