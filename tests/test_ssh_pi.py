"""Over SSH (docs/design.md#real-environments): a real ``sshd`` from Debian's openssh-server,
started by the test on 127.0.0.1 with a throwaway host key and user key, and ``ssh -tt`` from a
pexpect PTY that plays the user's local terminal. On the remote side (this same machine) real Pi
runs under ``python -m cuewrap``, directly or inside a tmux started there. The terminal notification
must arrive in-band at the local terminal; the desktop must not be used (the remote side has a
``DISPLAY`` on purpose: only the SSH rule keeps the desktop off).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import TEST_EXT, PiHome, PiSession, ready_away
from shared import system_tool
from waiting import absence_window, wait_until

pytestmark = pytest.mark.ssh

SSHD = system_tool("sshd") or "sshd"  # in /usr/sbin, which root's PATH may lack
_OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)(?:\x07|\x1b\\)")
# what the remote command needs from the rig's environment (the rest comes from sshd)
_PASS = ("PI_", "XDG_", "PATH", "HOME", "LANG", "LC_ALL")


def osc_notifications(raw: bytes) -> list[tuple[str, str]]:
    return [(m.group(1).decode(), m.group(2).decode()) for m in _OSC777.finditer(raw)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Sshd:
    port: int
    key: Path
    known_hosts: Path

    def argv(self, remote: str) -> list[str]:
        return [
            "ssh", "-tt", "-p", str(self.port), "-i", str(self.key),
            "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", f"UserKnownHostsFile={self.known_hosts}", "-o", "StrictHostKeyChecking=no",
            "-o", "LogLevel=ERROR",
            f"{os.environ.get('USER') or 'root'}@127.0.0.1", remote,
        ]  # fmt: skip


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        pytest.skip("openssh-server/openssh-client not installed (scripts/install-test-deps)")
    d = tmp_path / "ssh"
    d.mkdir()
    for name in ("host", "user"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)],
            check=True,
            timeout=30,
        )
    (d / "authorized_keys").write_text((d / "user.pub").read_text())
    (d / "authorized_keys").chmod(0o600)
    port = _free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitRootLogin prohibit-password\nPidFile none\n"
    )
    if os.geteuid() == 0:  # sshd as root separates privileges into this (Debian's unit makes it)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    errlog = (d / "sshd.log").open("wb")
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(d / "sshd_config")],
        stdin=subprocess.DEVNULL,
        stdout=errlog,
        stderr=errlog,
    )

    def listening() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd ended: {(d / 'sshd.log').read_text()}")
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    try:
        wait_until(listening, 10, "sshd listening")
        yield Sshd(port, d / "user", d / "known_hosts")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        errlog.close()


def remote_command(pi_home: PiHome, log: Path, *, tmux: str | None = None) -> str:
    """What runs on the remote side: cuewrap pi in Pi's work dir, with the rig's Pi
    environment and a DISPLAY (which only the SSH rule may ignore)."""
    env = {k: v for k, v in pi_home.env.items() if k.startswith(_PASS)}
    env["DISPLAY"] = ":99"
    cuewrap = [sys.executable, "-m", "cuewrap", "--log", str(log), "pi", "-e", str(TEST_EXT)]
    if tmux is None:
        command = cuewrap
    else:
        conf = pi_home.root / "tmux.conf"  # the settings a user would have in ~/.tmux.conf
        conf.write_text("set -g focus-events on\nset -g allow-passthrough on\n")
        command = ["tmux", "-L", tmux, "-f", str(conf), "new-session", "-s", "remote", *cuewrap]
    assigns = [f"{k}={v}" for k, v in env.items()]
    return f"cd {shlex.quote(str(pi_home.cwd))} && exec env {shlex.join([*assigns, *command])}"


def run_away_and_settle(s: PiSession, fakemodel: FakeModel) -> list[tuple[str, str]]:
    """The user's terminal loses focus, a run settles: the notification at the local side."""
    ready_away(s)
    fakemodel.push(tool_call("bash", {"command": "sleep 1"}), text("remote done"))
    s.prompt("a remote task")
    s.wait_for_screen(r"^ remote done$", timeout=20)
    notes = wait_until(
        lambda: osc_notifications(s.raw_output), 15, "an OSC notification", detail=s.dump
    )
    absence_window(0.5, "a second notification")
    assert osc_notifications(s.raw_output) == notes
    return notes


def desktop_records(s: PiSession) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    [channels] = s.log_records("channels")
    return channels, [r for r in s.log_records("delivery") if r.get("channel") == "desktop"]


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_ssh_notification_in_band(sshd: Sshd, pi_home: PiHome, fakemodel: FakeModel) -> None:
    log = pi_home.root / "remote.log"
    env = dict(pi_home.env, TERM="xterm-256color")
    s = PiSession(sshd.argv(remote_command(pi_home, log)), env=env, cwd=pi_home.cwd, log_path=log)
    try:
        s.wait_ready(timeout=40)
        [(title, body)] = run_away_and_settle(s, fakemodel)
        assert (title, body) == ("Pi — work", "Finished")
        channels, desktop = desktop_records(s)
        assert channels["desktop"] is False
        assert channels["desktop_why"].startswith("over SSH (SSH_"), channels
        assert [d["state"] for d in desktop] == ["off"]
    finally:
        s.close()


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_ssh_then_tmux_notification_in_band(
    sshd: Sshd, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/install-test-deps)")
    log = pi_home.root / "remote-tmux.log"
    name = f"cuewrap-ssh-{uuid.uuid4().hex[:10]}"
    env = dict(pi_home.env, TERM="xterm-256color")
    s = PiSession(
        sshd.argv(remote_command(pi_home, log, tmux=name)),
        env=env,
        cwd=pi_home.cwd,
        log_path=log,
    )
    try:
        s.wait_ready(timeout=40)
        s.wait_log(lambda r: r.get("kind") == "tmux_view" and r.get("state") == "active")
        [(title, body)] = run_away_and_settle(s, fakemodel)
        assert (title, body) == ("Pi — work", "Finished")
        # it went through tmux's passthrough from the pane in front, and nowhere else
        terminal = [r for r in s.log_records("delivery") if r.get("channel") == "terminal"]
        assert [(d["state"], d["reason"]) for d in terminal] == [
            ("unconfirmable", "tmux passthrough (pane shown)")
        ]
        channels, desktop = desktop_records(s)
        assert channels["desktop"] is False and "over SSH" in channels["desktop_why"]
        assert [d["state"] for d in desktop] == ["off"]
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True, timeout=10)
        s.close()
