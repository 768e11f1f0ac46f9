"""The asynchronous effectors driven end to end by `cuewrap pi` over real Pi:
keep-awake (a configurable inhibitor command) and desktop notifications (a real daemon)."""

from __future__ import annotations

import os
import shlex
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from desktoprig import dunst_history
from fakemodel import text, tool_call
from pirig import pi_child
from procstat import alive
from waiting import wait_until

INHIBITOR = textwrap.dedent(
    """
    import os, sys, time
    d = sys.argv[1]
    with open(os.path.join(d, "inhibitors.log"), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(3600)
    """
)


def inhibitors(d: Path) -> list[int]:
    log = d / "inhibitors.log"
    return [int(x) for x in log.read_text().split()] if log.exists() else []


@pytest.fixture
def inhibitor_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    d = tmp_path / "inhib"
    d.mkdir()
    script = d / "inhibitor.py"
    script.write_text(INHIBITOR)
    cmd = shlex.join([sys.executable, str(script), str(d)])
    return {"CUEWRAP_KEEP_AWAKE_COMMAND": cmd}, d


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_keep_awake_follows_runs_and_cue_off(pi_session, fakemodel, inhibitor_env) -> None:  # type: ignore[no-untyped-def]
    env, d = inhibitor_env
    fakemodel.script(
        [
            tool_call("bash", {"command": "sleep 2"}),
            text("one"),
            tool_call("bash", {"command": "sleep 20"}),
            text("two"),
        ]
    )
    s = pi_session(cuewrap_args=["--keep-awake"], env=env)
    assert inhibitors(d) == []  # nothing held while idle
    s.prompt("first")
    wait_until(lambda: len(inhibitors(d)) == 1, 10, "the inhibitor acquired during the run")
    first = inhibitors(d)[0]
    assert alive(first)
    s.wait_idle(timeout=20)
    wait_until(lambda: not alive(first), 5, "the inhibitor released when the run settled")

    s.prompt("second")
    wait_until(lambda: len(inhibitors(d)) == 2, 10, "a second inhibitor")
    second = inhibitors(d)[1]
    assert alive(second)
    s.submit("/cue off")
    wait_until(lambda: not alive(second), 5, "the inhibitor released on /cue off")
    s.escape()  # end the 20 s tool
    s.wait_idle(timeout=20)
    assert len(inhibitors(d)) == 2
    s.quit()
    assert s.wait_exit() == 0


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_keep_awake_released_on_exit_and_on_kill_9(pi_session, fakemodel, inhibitor_env) -> None:  # type: ignore[no-untyped-def]
    env, d = inhibitor_env
    fakemodel.script([tool_call("bash", {"command": "sleep 30"}), text("x")])
    # Pi killed during a run: cuewrap exits and releases the inhibitor
    s = pi_session(cuewrap_args=["--keep-awake"], env=env)
    s.prompt("go")
    wait_until(lambda: len(inhibitors(d)) == 1, 20, "the inhibitor acquired")
    held = inhibitors(d)[0]
    os.kill(pi_child(s.pid), signal.SIGKILL)
    assert s.wait_exit(timeout=20) == 128 + signal.SIGKILL
    wait_until(lambda: not alive(held), 15, "the inhibitor to end with cuewrap's exit")

    # cuewrap itself killed with SIGKILL: the inhibitor still dies with it. The second
    # session's prompt runs a long tool too (scripted anew: the first session, killed in its
    # tool, left its answer in the queue, and a run that quick may end before the inhibitor
    # has written its pid)
    fakemodel.script([tool_call("bash", {"command": "sleep 30"}), text("x")])
    s2 = pi_session(cuewrap_args=["--keep-awake"], env=env)
    s2.prompt("go")
    wait_until(lambda: len(inhibitors(d)) == 2, 20, "a second inhibitor")
    held2 = inhibitors(d)[1]
    os.kill(s2.pid, signal.SIGKILL)
    wait_until(lambda: not alive(held2), 15, "the inhibitor to end after kill -9 of cuewrap")


@pytest.mark.desktop
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_desktop_notification_reaches_the_daemon(pi_session, fakemodel, dunst) -> None:  # type: ignore[no-untyped-def]
    fakemodel.script([tool_call("bash", {"command": "sleep 1"}), text("SECRET-ANSWER-77")])
    env = {
        "DISPLAY": dunst.env["DISPLAY"],
        "DBUS_SESSION_BUS_ADDRESS": dunst.env["DBUS_SESSION_BUS_ADDRESS"],
        "XDG_RUNTIME_DIR": dunst.env["XDG_RUNTIME_DIR"],
    }
    s = pi_session(env=env)
    s.focus_out()
    s.prompt("SECRET-PROMPT-77")
    rec = s.wait_log(
        lambda r: (
            r.get("kind") == "delivery"
            and r.get("channel") == "desktop"
            and r.get("state") in ("delivered", "failed")
        ),
        20,
    )
    assert rec["state"] == "delivered", rec
    got = dunst_history(dunst.env)
    assert len(got) == 1, got
    assert got[0]["summary"] == "Pi — work" and got[0]["body"] == "Finished"
    assert "SECRET" not in repr(got)
    s.focus_in()
    s.quit()
    assert s.wait_exit() == 0
    # focused afterwards: nothing more reached the daemon
    assert len(dunst_history(dunst.env)) == 1
