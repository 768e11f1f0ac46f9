"""``cuewrap doctor`` reports the Pi it would run, the Node that runs it and what that Pi gives;
``cuewrap pi`` on a Node too old for Pi adds one line naming both. Real Pi packages (installed
by scripts/install-pi); the old Node is a stand-in that answers ``--version`` like Node 20 and
dies like Pi 1.x does on it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from pirig import install_pi

pytestmark = pytest.mark.pi

OLD_NODE = """#!/bin/sh
if [ "$1" = --version ]; then echo v20.11.1; exit 0; fi
echo "SyntaxError: ... does not provide an export named 'enableCompileCache'" >&2
exit 1
"""


def doctor_env(tmp_path: Path, path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    env.update(HOME=str(tmp_path / "home"), PATH=path, TERM="xterm-256color")
    return env


def pi_section(env: dict[str, str]) -> dict[str, str]:
    r = subprocess.run(
        [sys.executable, "-m", "cuewrap", "doctor"],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    text = r.stdout.split("\nPi\n", 1)[1].split("\n\n", 1)[0]
    return dict(line.strip().split(": ", 1) for line in text.splitlines())


def stand_in_node(tmp_path: Path) -> Path:
    """A bin dir with the stand-in old ``node`` and ``pi`` = Pi 1.4.0's own npm entry."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "node").write_text(OLD_NODE)
    (bindir / "node").chmod(0o755)
    npm_pi = install_pi("1.4.0").parent / "node_modules" / ".bin" / "pi"
    assert npm_pi.exists()
    (bindir / "pi").symlink_to(npm_pi)
    return bindir


def test_doctor_with_an_old_node_says_pi_cannot_start(tmp_path: Path) -> None:
    bindir = stand_in_node(tmp_path)
    pi = pi_section(doctor_env(tmp_path, f"{bindir}:/usr/bin:/bin"))
    assert pi["pi"] == f"{bindir}/pi"
    assert pi["version"].startswith("1.4.0 (")
    assert pi["node"] == (
        f"{bindir}/node 20.11.1: too old, Pi cannot start (Pi 1.4.0 needs >=22.19.0;"
        " a newer Node, e.g. 22 LTS)"
    )
    assert pi["cues"].startswith("full (")


def test_doctor_with_real_pi_1_4_0_and_its_node(tmp_path: Path) -> None:
    bindir = install_pi("1.4.0")
    pi = pi_section(doctor_env(tmp_path, f"{bindir}:/usr/bin:/bin"))
    assert pi["pi"] == f"{bindir}/pi"
    assert pi["version"].startswith("1.4.0 (") and "pi-coding-agent" in pi["version"]
    m = re.fullmatch(
        r"(\S+/node) (\d+)\.(\d+)\.\d+: ok \(Pi 1\.4\.0 needs >=22\.19\.0\)", pi["node"]
    )
    assert m, pi["node"]
    assert (int(m.group(2)), int(m.group(3))) >= (22, 19)
    assert pi["cues"] == (
        "full (agent_settled, ui_prompt, agent_before_settle, OSC 7501; Pi ≥ 1.3.0)"
    )
    assert pi['privacy.body = "summary" can say'] == (
        "dialog titles, Ask's first question, the answer's first line, the error"
    )


def test_doctor_with_an_older_pi_states_the_degraded_mode(tmp_path: Path) -> None:
    bindir = install_pi("0.74.2")
    pi = pi_section(doctor_env(tmp_path, f"{bindir}:/usr/bin:/bin"))
    assert pi["version"].startswith("0.74.2 (")
    assert pi["node"].endswith(": ok (Pi 0.74.2 needs >=20.6.0)")
    assert pi["cues"].startswith("Pi 0.74.2 has no agent_settled, ui_prompt")
    assert "runs end at agent_end" in pi["cues"]
    assert pi['privacy.body = "summary" can say'] == (
        "Ask's first question, the answer's first line, the error;"
        " no dialog titles (they need ui_prompt, Pi ≥ 0.84.4)"
    )


def test_doctor_without_pi(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    pi = pi_section(doctor_env(tmp_path, str(empty)))
    assert pi["pi"].startswith("not found on PATH (install it: npm install -g")


def test_cuewrap_pi_on_an_old_node_names_it_in_one_line(tmp_path: Path) -> None:
    bindir = stand_in_node(tmp_path)
    env = doctor_env(tmp_path, f"{bindir}:/usr/bin:/bin")
    p = pexpect.spawn(
        sys.executable, ["-m", "cuewrap", "pi"], env=env, timeout=30,
        encoding="utf-8", codec_errors="replace", dimensions=(24, 80),
    )  # fmt: skip
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 1
    lines = [ln for ln in p.before.replace("\r", "").splitlines() if ln.strip()]
    assert "enableCompileCache" in p.before  # what Node said is still shown
    assert lines[-1].endswith(
        f"cuewrap: Pi 1.4.0 needs Node >=22.19.0, found Node 20.11.1 ({bindir}/node)"
    )
