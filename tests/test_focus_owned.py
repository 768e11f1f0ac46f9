"""docs/design.md#presence / issue 7 item 4: cuewrap owns the host's focus reporting. The child's
own ``CSI ? 1004 h/l`` never reach the host (they only decide what is forwarded to the child), and
after the child resets the terminal (RIS, DECSTR) cuewrap turns focus reporting on again."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from waiting import wait_until

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable
ON, OFF = b"\x1b[?1004h", b"\x1b[?1004l"


def presence(log: Path) -> list[str]:
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [r["presence"] for r in recs if r["kind"] == "presence"]


def test_child_focus_mode_and_resets_stay_cuewraps(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    env.update(TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off")
    argv = [PY, "-m", "cuewrap", "--log", str(log), "--", PY, CHILD, "focus-resets"]
    p = pexpect.spawn(argv[0], argv[1:], env=env, timeout=15, dimensions=(24, 80))
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    # the child asked for focus reports: they reach it, each in one read
    p.send(b"\x1b[O")
    wait_until(lambda: presence(log) == ["away"], 5, "away")
    p.send(b"a")
    p.expect("OFF")
    p.send(b"b")
    p.expect("RESET")
    p.send(b"c")
    p.expect("SOFT")
    p.send(b"d")
    p.expect("MULTI")
    # after the child's ?1004l and both resets, focus reports still change presence
    p.send(b"\x1b[I")
    wait_until(lambda: presence(log) == ["away", "focused"], 5, "focused")
    p.send(b"\x1b[O")
    wait_until(lambda: presence(log) == ["away", "focused", "away"], 5, "away again")
    p.send(b"q")
    p.expect(pexpect.EOF)
    p.close()
    raw = p.logfile_read.getvalue()
    session = raw[: raw.rindex(b"MULTI")]
    assert OFF not in session, session  # the child's ?1004l never reached the host
    # cuewrap's own ON at start, then again after RIS and after DECSTR; the child's own ON
    # (at READY) was taken out
    ready = session.index(b"READY")
    assert session[:ready].count(ON) == 1
    # (written at the end of the child's chunk that reset the terminal: a safe point)
    assert session.index(ON, session.index(b"\x1bc")) < session.index(b"\x1b[!p")
    assert session.find(ON, session.index(b"\x1b[!p")) > 0
    # the multi-mode sequence passed as it was (mouse on) and focus reports were forwarded
    assert b"\x1b[?1000;1004h" in raw
    records = [json.loads(line) for line in log.read_text().splitlines()]
    why = [r["why"] for r in records if r["kind"] == "focus_reasserted"]
    assert why == ["ris", "decstr"], why


def test_tracker_takes_the_childs_1004_out_and_keeps_its_state() -> None:
    from cuewrap.term.statusguard import StatusGuard
    from cuewrap.term.tracker import FocusMayBeOff, ModeChange, OutputTracker

    t = OutputTracker(StatusGuard(consume=False), own_focus=True)
    scan = t.feed(b"a\x1b[?1004hb\x1b[?1004lc\x1b[?1000h")
    assert scan.out == b"abc\x1b[?1000h"
    assert ModeChange(1004, True) in scan.events and ModeChange(1004, False) in scan.events
    assert 1004 not in t.modes.on and 1000 in t.modes.on
    t.feed(b"\x1b[?1004h")
    assert 1004 in t.modes.on  # what decides whether focus reports are forwarded to the child
    # split across two chunks: the start was already written, so it cannot be taken out;
    # cuewrap is told to turn reporting on again
    assert t.feed(b"x\x1b[?10").out == b"x\x1b[?10"
    scan = t.feed(b"04ly")
    assert scan.out == b"04ly" and FocusMayBeOff("1004") in scan.events
    # inside an unfinished UTF-8 character it is not removed either (it ends the character)
    scan = t.feed(b"\xe2\x1b[?1004l")
    assert scan.out == b"\xe2\x1b[?1004l" and FocusMayBeOff("1004") in scan.events
    # not owned (no cues): passed as it is
    plain = OutputTracker(StatusGuard(consume=False))
    assert plain.feed(b"\x1b[?1004h\x1bc").out == b"\x1b[?1004h\x1bc"
    assert not [e for e in plain.feed(b"\x1b[!p").events if isinstance(e, FocusMayBeOff)]
