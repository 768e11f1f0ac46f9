"""Desktop notifications against a real notification daemon on a private D-Bus session bus.

The ``desktop`` tests use the desktop rig (tests/desktoprig.py: their own ``dbus-daemon``,
``Xvfb`` and ``dunst``), send through ``DesktopNotifier`` and read the notification back from
dunst; the others check the notifier without a daemon.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from desktoprig import Session, dunst_history
from waiting import turning, wait_until

from cuewrap.deliver.desktop import DesktopNotifier, desktop_available
from cuewrap.loop import Loop

FINAL = ("delivered", "failed", "unconfirmable", "dropped-ineligible")


class States:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str]] = []

    def __call__(self, cue_id: int, state: str, reason: str) -> None:
        self.seen.append((cue_id, state, reason))

    def final(self, cue_id: int) -> tuple[str, str] | None:
        for cid, state, reason in self.seen:
            if cid == cue_id and state in FINAL:
                return state, reason
        return None

    def names(self, cue_id: int) -> list[str]:
        return [s for cid, s, _ in self.seen if cid == cue_id]


def with_fake_worker(
    tmp_path: Path, script: str, timeout: float | None = None
) -> tuple[Loop, States, DesktopNotifier]:
    """A notifier whose worker is the shell ``script`` in place of Python."""
    fake = tmp_path / "python"
    fake.write_text(script)
    fake.chmod(0o755)
    loop, states = Loop(), States()
    if timeout is None:
        return loop, states, DesktopNotifier(loop, states, python=str(fake))
    return loop, states, DesktopNotifier(loop, states, python=str(fake), timeout=timeout)


def send_and_wait(
    notifier: DesktopNotifier,
    loop: Loop,
    states: States,
    cue_id: int,
    title: str,
    body: str,
    eligible: Callable[[], bool] = lambda: True,
    timeout: float = 15,
) -> tuple[str, str]:
    notifier.send(cue_id, title, body, eligible)
    wait_until(lambda: states.final(cue_id) is not None, timeout,
               f"the final state of cue {cue_id}", sleep=turning(loop))  # fmt: skip
    result = states.final(cue_id)
    assert result is not None
    return result


# -- with a real daemon ----------------------------------------------------------------------------
@pytest.mark.desktop
def test_notification_reaches_dunst(dunst: Session, capfd: pytest.CaptureFixture[str]) -> None:
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states, env=dunst.env)
    state, reason = send_and_wait(
        notifier, loop, states, 7, "Pi · cuewrap", "Pi finished; 2 background tasks running"
    )
    assert (state, states.names(7)) == ("delivered", ["requested", "delivered"]), reason
    assert reason.startswith("notification id ")
    history = dunst_history(dunst.env)
    assert {
        "summary": "Pi · cuewrap",
        "body": "Pi finished; 2 background tasks running",
        "appname": "Pi",
    } in history
    wait_until(lambda: notifier.pending == 0, 5, "the worker reaped", sleep=turning(loop))
    assert capfd.readouterr() == ("", "")


@pytest.mark.desktop
def test_cue_that_became_ineligible_is_not_sent(dunst: Session) -> None:
    """Eligibility is checked again right before the call (the worker is ready by then)."""
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states, env=dunst.env)
    checks: list[bool] = []

    def eligible() -> bool:
        checks.append(True)
        return len(checks) < 2  # eligible at send(), not any more when the worker is ready

    state, reason = send_and_wait(notifier, loop, states, 8, "Pi", "needs input", eligible)
    assert state == "dropped-ineligible", reason
    assert "requested" not in states.names(8)
    assert len(checks) == 2
    assert dunst_history(dunst.env) == []


@pytest.mark.desktop
def test_no_daemon_on_the_bus_fails_quickly(
    bus: Session, capfd: pytest.CaptureFixture[str]
) -> None:
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states, env=bus.env)
    started = time.monotonic()
    state, reason = send_and_wait(notifier, loop, states, 9, "Pi", "finished")
    assert state == "failed"
    assert "org.freedesktop.DBus.Error.ServiceUnknown" in reason
    assert time.monotonic() - started < 5
    assert capfd.readouterr() == ("", "")


@pytest.mark.alone  # times it in real time (docs/testing.md, Parallel)
@pytest.mark.desktop
def test_daemon_that_never_answers_times_out(
    bus: Session, capfd: pytest.CaptureFixture[str]
) -> None:
    """A service owns the name but never replies: failed after the 2 s D-Bus timeout."""
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    conn = open_dbus_connection(bus.address)
    conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.Notifications"))
    try:
        loop, states = Loop(), States()
        notifier = DesktopNotifier(loop, states, env=bus.env)
        started = time.monotonic()
        state, reason = send_and_wait(notifier, loop, states, 10, "Pi", "finished")
        elapsed = time.monotonic() - started
        assert state == "failed"
        assert "did not answer" in reason
        assert 1.5 < elapsed < 7
        assert capfd.readouterr() == ("", "")
    finally:
        conn.close()


# -- without a daemon ---------------------------------------------------------------------------
@pytest.mark.pty
def test_no_session_bus_fails_without_noise(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(tmp_path),
    }
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states, env=env)
    state, reason = send_and_wait(notifier, loop, states, 1, "Pi", "finished")
    assert state == "failed"
    assert "no session bus" in reason
    assert capfd.readouterr() == ("", "")


@pytest.mark.unit
def test_ineligible_at_send_spawns_nothing() -> None:
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states, python="/nonexistent/python")
    notifier.send(3, "Pi", "x", lambda: False)
    assert states.seen == [(3, "dropped-ineligible", "no longer eligible before the call")]
    assert notifier.pending == 0


@pytest.mark.unit
def test_a_raising_eligibility_check_counts_as_ineligible() -> None:
    loop, states = Loop(), States()
    notifier = DesktopNotifier(loop, states)

    def broken() -> bool:
        raise RuntimeError("boom")

    notifier.send(4, "Pi", "x", broken)
    assert states.seen[-1][1] == "dropped-ineligible"


@pytest.mark.pty
def test_hung_worker_is_killed_at_the_timeout(tmp_path: Path) -> None:
    loop, states, notifier = with_fake_worker(tmp_path, "#!/bin/sh\nexec sleep 60\n", timeout=0.3)
    state, reason = send_and_wait(notifier, loop, states, 5, "Pi", "x", timeout=5)
    assert state == "failed"
    assert reason == "timed out after 0.3 s starting"
    wait_until(lambda: notifier.pending == 0, 3, "the worker reaped", sleep=turning(loop))


@pytest.mark.pty
def test_worker_that_dies_is_a_failure(tmp_path: Path) -> None:
    loop, states, notifier = with_fake_worker(
        tmp_path, "#!/bin/sh\nread -r request\necho garbage-not-json\nexit 3\n"
    )
    state, reason = send_and_wait(notifier, loop, states, 6, "Pi", "x", timeout=5)
    assert (state, reason) == ("failed", "worker sent garbage")


@pytest.mark.pty
def test_worker_that_dies_at_once_is_a_failure(tmp_path: Path) -> None:
    loop, states, notifier = with_fake_worker(tmp_path, "#!/bin/sh\nexit 3\n")
    state, reason = send_and_wait(notifier, loop, states, 12, "Pi", "x", timeout=5)
    assert state == "failed"
    # depending on timing: the payload write hits a closed pipe, or EOF comes first
    assert reason in (
        "cannot talk to the worker",
        "worker ended without a result (status 3)",
        "worker ended without a result",
    ), reason


@pytest.mark.pty
def test_close_stops_pending_workers(tmp_path: Path) -> None:
    _, states, notifier = with_fake_worker(tmp_path, "#!/bin/sh\nexec sleep 60\n")
    notifier.send(11, "Pi", "x", lambda: True)
    notifier.close()
    assert states.final(11) == ("dropped-ineligible", "cuewrap exited")
    assert notifier.pending == 0


@pytest.mark.pty
def test_relay_process_does_not_import_notifypy() -> None:
    code = (
        "import sys; import cuewrap.deliver.desktop, cuewrap.deliver.keepawake; "
        "sys.exit(int('notifypy' in sys.modules or 'loguru' in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.unit
@pytest.mark.parametrize(
    ("env", "setting", "platform", "expected"),
    [
        ({"DISPLAY": ":0"}, "auto", "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "auto", "linux", True),
        ({}, "auto", "linux", False),
        ({"DISPLAY": ":0", "SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "auto", "linux", False),
        ({"DISPLAY": ":0", "SSH_TTY": "/dev/pts/3"}, "auto", "linux", False),
        ({}, "auto", "darwin", True),
        ({"SSH_CONNECTION": "x"}, "auto", "darwin", False),
        ({"DISPLAY": ":0"}, "off", "linux", False),
        ({"SSH_CONNECTION": "x"}, "on", "linux", True),
    ],
)
def test_desktop_available(
    env: dict[str, str], setting: str, platform: str, expected: bool
) -> None:
    ok, why = desktop_available(env, setting, platform)
    assert ok is expected
    assert why
