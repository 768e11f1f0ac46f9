"""Desktop test rig: a private D-Bus session bus and a real notification daemon on it.

Fixtures (registered by tests/conftest.py):

    bus     Session: a private ``dbus-daemon`` (no service activation, so nothing starts
            behind the test's back); ``env`` holds only what a session needs
            (``private_bus(tmp)`` outside pytest)
    dunst   Session: ``Xvfb`` on a free display and ``dunst`` on it and on ``bus``, owning
            org.freedesktop.Notifications

Helpers: ``dunst_history(env)`` (everything dunst received), ``need(*binaries)``.
``scripts/install-test-deps`` installs the binaries; without them these fixtures skip, saying
which one is missing (a failure under CI, tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from waiting import wait_until

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def need(*binaries: str) -> None:
    missing = [b for b in binaries if shutil.which(b) is None]
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (run scripts/install-test-deps as root)")


@dataclass
class Session:
    env: dict[str, str]
    address: str
    tmp: Path

    def desktop(self) -> dict[str, str]:
        """What a program needs to reach this desktop (its display, bus, runtime directory)."""
        return {k: self.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")}


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def bus(tmp_path: Path) -> Iterator[Session]:
    """A private dbus-daemon, no service activation. Env has only what a session needs."""
    with private_bus(tmp_path) as session:
        yield session


@contextlib.contextmanager
def private_bus(tmp_path: Path) -> Iterator[Session]:
    """``bus`` outside pytest (scripts/bench_footprint uses it, with ``_dunst``)."""
    need("dbus-daemon")
    sock = tmp_path / "bus"
    conf = tmp_path / "bus.conf"
    conf.write_text(BUS_CONFIG.format(path=sock))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(sock.exists, 10, "dbus-daemon's socket", interval=0.02)
        address = f"unix:path={sock}"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_RUNTIME_DIR": str(tmp_path),
            "DBUS_SESSION_BUS_ADDRESS": address,
        }
        yield Session(env, address, tmp_path)
    finally:
        stop(daemon)


@pytest.fixture
def dunst(bus: Session) -> Iterator[Session]:
    """Xvfb on a free display and dunst on it, owning org.freedesktop.Notifications."""
    with _dunst(bus) as session:
        yield session


# dunst's context menu (`dunstctl context`) hands its lines to this "dmenu": it prints the
# first line holding the text in the file `dunst-pick` (e.g. "[7,answer-2]"), as a user's pick
PICK = """#!/bin/sh
menu=$(cat)
printf '%s\n' "$menu" >> "{tmp}/dunst-menu"
printf '%s\n' "$menu" | grep -F -- "$(cat "{tmp}/dunst-pick")" | head -n 1
"""


@pytest.fixture
def dunst_menu(bus: Session) -> Iterator[Session]:
    """``dunst`` whose context menu picks what the file ``tmp/dunst-pick`` names (its
    ``dmenu`` setting), so that ``dunstctl context`` invokes one named action."""
    pick = bus.tmp / "dunst-dmenu"
    pick.write_text(PICK.format(tmp=bus.tmp))
    pick.chmod(0o755)
    (bus.tmp / "dunst-pick").write_text("no such action\n")
    conf = Path(bus.env["XDG_CONFIG_HOME"]) / "dunst" / "dunstrc"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(f"[global]\n    dmenu = {pick} -p dunst\n")
    with _dunst(bus) as session:
        yield session


@contextlib.contextmanager
def _dunst(bus: Session) -> Iterator[Session]:
    need("Xvfb", "dunst", "dunstctl")
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0", "800x600x24"],
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    daemon: subprocess.Popen[bytes] | None = None
    try:
        with os.fdopen(r) as fh:
            display = fh.readline().strip()
        assert display.isdigit(), "Xvfb did not report a display"
        env = dict(bus.env, DISPLAY=f":{display}")
        daemon = subprocess.Popen(
            ["dunst"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

        def dunst_answers() -> bool:
            probe = subprocess.run(
                ["dunstctl", "count", "displayed"], env=env, capture_output=True, timeout=5
            )
            assert probe.returncode == 0 or daemon.poll() is None, "dunst exited"
            return probe.returncode == 0

        wait_until(dunst_answers, 15, "dunst to take org.freedesktop.Notifications")
        yield Session(env, bus.address, bus.tmp)
    finally:
        if daemon is not None:
            stop(daemon)
        stop(xvfb)


def dunst_history(env: dict[str, str]) -> list[dict[str, str]]:
    """Everything dunst received: close what is displayed (it moves to history), then read."""
    subprocess.run(["dunstctl", "close-all"], env=env, check=True, timeout=5)
    out = subprocess.run(
        ["dunstctl", "history"], env=env, check=True, capture_output=True, timeout=5
    ).stdout
    entries = json.loads(out)["data"][0]
    return [
        {key: entries[i][key]["data"] for key in ("summary", "body", "appname")}
        for i in range(len(entries))
    ]
