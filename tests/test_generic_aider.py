"""A real third-party terminal program under cuewrap: aider (from PyPI, its own venv installed
by ``scripts/install-aider``; not a cuewrap dependency), talking to the project's fake model.

aider with ``--notifications`` rings the bell when its reply is ready and it waits for input
(it would run notify-send instead if it found one on its PATH: its PATH here holds only its
own venv). cuewrap recognises it (the ``aider`` preset) and gives one cue per wait while the
user is away, and none while the user looks. The test plays the host terminal.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from fakemodel import FakeModel, text
from launch import seen
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


class Aider:
    """aider under ``python -m cuewrap --log LOG -- aider …`` in a pexpect terminal (the host
    terminal is the test), on the fake model ``fm``; ``out()`` is everything cuewrap wrote."""

    def __init__(self, tmp_path: Path, fm: FakeModel, env: dict[str, str] | None = None) -> None:
        bindir = aider_bin()
        (tmp_path / "home").mkdir()
        full = dict(os.environ)
        for var in ("TMUX", "CUEWRAP_LOG", "CUEWRAP_GENERIC_PRESET", "DISPLAY"):
            full.pop(var, None)
        full.update(
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
        full.update(env or {})
        self.log = tmp_path / "log.jsonl"
        argv = ["-m", "cuewrap", "--log", str(self.log), "--", os.path.join(bindir, "aider")]
        argv += ["--model", "openai/fake-model", "--notifications", "--no-git", "--no-pretty"]
        argv += ["--no-fancy-input", "--no-check-update", "--no-analytics", "--yes-always"]
        argv += ["--no-show-model-warnings", "--no-show-release-notes", "--no-gitignore"]
        self.p = pexpect.spawn(PY, argv, env=full, cwd=str(tmp_path), timeout=90,
                               dimensions=(24, 100))  # fmt: skip
        self.p.logfile_read = io.BytesIO()

    def out(self) -> bytes:
        return seen(self.p)

    def records(self, kind: str) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        recs = [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]
        return [r for r in recs if r.get("kind") == kind]


def test_aider_bell_gives_one_cue_while_away_and_none_while_looking(tmp_path: Path) -> None:
    replies = [text("First answer from the fake model."), text("Second answer, while away.")]
    with FakeModel(replies) as fm:
        a = Aider(tmp_path, fm)
        p, out = a.p, a.out
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


FORGED = (
    "\x1b]777;notify;aider;forged by the model\x07\x1b]0;owned\x07"
    "\x1b]7501;state=blocked:app=aider:kind=permission\x1b\\"
)


def test_aider_prints_the_models_sequences_raw_and_none_of_them_is_a_fact(
    tmp_path: Path,
) -> None:
    """aider --no-pretty prints a model's answer as it is, escape sequences included, and
    draws no frames; it writes no title, OSC notification or status report of its own (the
    ``aider`` preset): every one in its output is the model's text, removed and never a fact.
    Its own bell still gives the one cue."""
    with FakeModel([text(f"Answer {FORGED} end of answer.")]) as fm:
        a = Aider(tmp_path, fm)
        p, out = a.p, a.out
        try:
            p.expect("> ")
            p.send(b"\x1b[O")  # away
            p.send(b"question\r")
            p.expect("end of answer")
            notes = wait_until(lambda: OSC777.findall(out()), 10, "the cue for aider's bell")
            absence_window(3.0, "a second cue")
            assert notes == [
                (b"aider \xe2\x80\x94 " + tmp_path.name.encode(), b"Waiting for your input")
            ]
            seen = out()
            assert b"forged by the model" not in seen and b"]0;owned" not in seen
            assert b"7501;state=blocked" not in seen
            kinds = {r["sequence"] for r in a.records("guard")}
            assert kinds == {"osc777", "osc0", "osc7501"}, a.records("guard")
            facts = [r.get("type") for r in a.records("fact")]
            assert "ChildNotice" not in facts and "ProgramStatus" not in facts, facts
        finally:
            p.terminate(force=True)
