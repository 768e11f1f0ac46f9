"""docs/design.md#delivery / issue 7 item 7: cuewrap's bytes never land inside the child's
unfinished UTF-8 character or DCS string, however long the child pauses there; the wait is
logged."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

from cuewrap.loop import Loop
from cuewrap.relay.inject import Injector
from cuewrap.term.sequences import TITLE_POP, TITLE_PUSH, set_title

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable


def test_cue_waits_for_the_end_of_a_character_and_of_a_dcs(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    env.update(
        TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off", CUEWRAP_NOTIFY_TERMINAL="osc777"
    )
    argv = [PY, "-m", "cuewrap", "--log", str(log), "--", PY, CHILD, "pause-mid"]
    p = pexpect.spawn(argv[0], argv[1:], env=env, timeout=15, dimensions=(24, 80))
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    p.send(b"\x1b[O")  # the user left: the end of the run is a cue
    p.sendline("")
    p.expect("END")
    p.sendline("")
    p.expect(pexpect.EOF)
    p.close()
    raw = p.logfile_read.getvalue()
    # the child's reports are taken out (a bare PTY does not speak the protocol,
    # docs/generic-mode.md): the half character right after its done report is the anchor
    assert b"state=done" not in raw
    done = raw.index(b"READY")
    mid_char = raw.index(b"\xe2\x82", done)
    dcs_open = raw.index(b"\x1bP1$r", mid_char)
    dcs_end = raw.index(b"x\x1b\\", dcs_open) + 3
    ours = [i for i in (raw.find(b"\x1b]777;", done), raw.find(b"\x1b]2;", done)) if i >= 0]
    assert ours, f"no cue was injected: {raw[done:]!r}"
    assert min(ours) >= dcs_end, raw[done:]  # not in the character, not in the DCS
    assert raw[mid_char : mid_char + 3] == b"\xe2\x82\xac"  # the character stayed whole
    waited = [json.loads(line) for line in log.read_text().splitlines()]
    waited = [r for r in waited if r["kind"] == "inject_waited"]
    assert waited and waited[0]["seconds"] >= 1.5, waited


def test_titles_waiting_for_a_safe_point_keep_only_the_last() -> None:
    """A child that retitles every frame while a mark is up and the stream is mid-sequence:
    one title write when the stream is safe again (the latest), not one per frame."""
    written: list[bytes] = []
    inj = Injector(Loop(), written.append)
    inj.set_safe(False)
    note = b"\x1b]777;notify;app;Finished\x1b\\"
    inj.inject(note)
    for i in range(1000):
        inj.inject(set_title(f"[?] title {i}"))
    inj.inject(b"\x1b]9;4;0\x1b\\")  # not a title: kept
    inj.set_safe(True)
    inj.flush_if_safe()
    assert written == [note + set_title("[?] title 999") + b"\x1b]9;4;0\x1b\\"]
    inj.set_safe(False)
    inj.inject(set_title("[?] x"))
    inj.inject(TITLE_POP + TITLE_PUSH)  # the mark cleared: the last state is the user's title
    inj.flush()
    assert written[1:] == [TITLE_POP + TITLE_PUSH]
