"""A real third-party terminal program under cuewrap: aider (from PyPI, its own venv installed
by ``scripts/install-aider``; not a cuewrap dependency), talking to the project's fake model.

aider with ``--notifications`` rings the bell when its reply is ready and it waits for input
(it would run notify-send instead if it found one on its PATH: its PATH here holds only its
own venv). cuewrap recognises it (the ``aider`` preset) and gives one cue per wait while the
user is away, and none while the user looks. The test plays the host terminal.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from fakemodel import FakeModel, text
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)\x1b\\")
MARK = b"\x1b]2;[?]"


def aider_bin() -> str:
    """scripts/test exports it; run alone, the install script is idempotent and prints it."""
    found = os.environ.get("CUEWRAP_AIDER_BIN")
    if not found:
        done = subprocess.run(
            [str(ROOT / "scripts" / "install-aider")], capture_output=True, text=True, check=True
        )
        found = done.stdout.strip()
    return found


def test_aider_bell_gives_one_cue_while_away_and_none_while_looking(tmp_path: Path) -> None:
    bindir = aider_bin()
    (tmp_path / "home").mkdir()
    replies = [text("First answer from the fake model."), text("Second answer, while away.")]
    with FakeModel(replies) as fm:
        env = dict(os.environ)
        for var in ("TMUX", "CUEWRAP_LOG", "CUEWRAP_GENERIC_PRESET", "DISPLAY"):
            env.pop(var, None)
        env.update(
            TERM="xterm-256color",
            PATH=bindir,  # no notify-send: aider rings the bell
            HOME=str(tmp_path / "home"),
            LITELLM_LOCAL_MODEL_COST_MAP="True",  # offline
            OPENAI_API_KEY="fake",
            OPENAI_API_BASE=fm.base_url,
            CUEWRAP_NOTIFY_TERMINAL="osc777",
            CUEWRAP_NOTIFY_DESKTOP="off",
            CUEWRAP_GENERIC_QUIET_AFTER="2",
            CUEWRAP_PRESENCE_IDLE_AFTER="600",
        )
        log = tmp_path / "log.jsonl"
        argv = ["-m", "cuewrap", "--log", str(log), "--", os.path.join(bindir, "aider")]
        argv += ["--model", "openai/fake-model", "--notifications", "--no-git", "--no-pretty"]
        argv += ["--no-fancy-input", "--no-check-update", "--no-analytics", "--yes-always"]
        argv += ["--no-show-model-warnings", "--no-show-release-notes", "--no-gitignore"]
        p = pexpect.spawn(PY, argv, env=env, cwd=str(tmp_path), timeout=90, dimensions=(24, 100))
        p.logfile_read = io.BytesIO()

        def out() -> bytes:
            try:
                p.read_nonblocking(65536, timeout=0)
            except (pexpect.TIMEOUT, pexpect.EOF):
                pass
            return p.logfile_read.getvalue()  # type: ignore[no-any-return]

        try:
            p.expect("Repo-map")
            p.expect("> ")
            # looking: the bell passes through, nothing is added
            p.send(b"first question\r")
            p.expect("First answer from the fake model")
            p.expect("> ")
            mark = len(out())
            absence_window(3.0, "a cue (bell or quiet) while the user looks")
            seen = out()
            assert b"\x07" in seen[mark - 200 :], "aider did not ring the bell"
            assert OSC777.findall(seen) == [] and MARK not in seen
            # away: one cue for the wait
            p.send(b"\x1b[O")
            p.send(b"second question\r")
            p.expect("Second answer, while away")
            notes = wait_until(lambda: OSC777.findall(out()), 10, "the cue for aider's bell")
            assert notes == [
                (b"aider \xe2\x80\x94 " + tmp_path.name.encode(), b"Waiting for your input")
            ]
            absence_window(3.0, "a second cue for the same wait (the quiet after the bell)")
            assert len(OSC777.findall(out())) == 1
            assert MARK in out()
        finally:
            p.terminate(force=True)
    assert fm.requests, "aider never asked the fake model"
