"""The clipboard guard in generic mode (docs/terminal-guard.md): a program's OSC 52 reaches
the host terminal only right after the user's keystroke (``guard.clipboard = "user"``), with
``allow`` always, with ``block`` never. A real PTY child (tests/children/ptychild.py
``clipboard``) writes one on its own at start and one for every key it reads."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable


DOWNLOAD = b"\x1b]1337;File=name=ZXZpbA==;size=4:ZXZpbA==\x07"


def osc52(text: bytes) -> bytes:
    return b"\x1b]52;c;" + base64.b64encode(text) + b"\x07"


def records(log: Path, kind: str) -> list[dict[str, Any]]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [r for r in map(json.loads, filter(None, lines)) if r["kind"] == kind]


def run(tmp_path: Path, setting: str | None) -> tuple[bytes, Path]:
    log = tmp_path / "log.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    env.update(TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off")
    if setting is not None:
        env["CUEWRAP_GUARD_CLIPBOARD"] = setting
    argv = [PY, "-m", "cuewrap", "--log", str(log), "--", PY, CHILD, "clipboard"]
    p = pexpect.spawn(argv[0], argv[1:], env=env, timeout=15, dimensions=(24, 80))
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    p.send(b"x")
    p.expect("COPIED")
    p.send(b"q")
    p.expect(pexpect.EOF)
    p.close()
    return p.logfile_read.getvalue(), log


def test_user_default_removes_the_unasked_write_and_passes_the_asked_one(tmp_path: Path) -> None:
    raw, log = run(tmp_path, None)
    assert osc52(b"unasked") not in raw and b"]52;" not in raw[: raw.index(b"READY")]
    assert b"]1337;" not in raw
    assert raw.count(osc52(b"x")) == 1  # right after the keystroke: passed, unchanged
    got = records(log, "clipboard")
    assert [(r["sequence"], r["passed"], r["read"], r["bytes"]) for r in got] == [
        ("osc52", False, False, len(osc52(b"unasked"))),
        ("osc1337 File", False, False, len(DOWNLOAD)),
        ("osc52", True, False, len(osc52(b"x"))),
    ]
    assert got[0]["why"] == "no keystroke in the last 2 s" and got[0]["setting"] == "user"
    assert "unasked" not in log.read_text() and base64.b64encode(b"unasked").decode() not in (
        log.read_text()
    )  # never the payload


@pytest.mark.parametrize(("setting", "unasked", "asked"), [("allow", 1, 1), ("block", 0, 0)])
def test_allow_and_block(tmp_path: Path, setting: str, unasked: int, asked: int) -> None:
    raw, log = run(tmp_path, setting)
    assert raw.count(osc52(b"unasked")) == unasked
    assert raw.count(DOWNLOAD) == unasked
    assert raw.count(osc52(b"x")) == asked
    removed = [r for r in records(log, "clipboard") if not r["passed"]]
    assert len(removed) == 3 - 2 * unasked - asked
