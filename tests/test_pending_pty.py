"""The cue side built after the child's first frame, as a user runs ``cuewrap pi`` in a real PTY:
a stand-in ``pi`` that draws its first frame only when told. Until then the session relays
(the start-up query was written) but the cue side is not built (no ``channels`` record, the
controller's first); after the frame it is built, and what was typed meanwhile reaches it."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from launch import default_signals
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pty

STAND_IN = """#!/bin/sh
printf 'BOOTED\\r\\n'
read line
printf '\\033[?2026h\\033[2JFRAME-ONE\\033[?2026l'
exec sleep 60
"""


def _records(log: Path, kind: str) -> list[dict[str, object]]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):
            rec = json.loads(line)
            if rec.get("kind") == kind:
                out.append(rec)
    return out


def _spawn(args: list[str], term: str, path_first: Path | None = None) -> pexpect.spawn:
    """``python ARGS`` in a 24x80 PTY, outside tmux, without desktop notifications."""
    env = dict(os.environ, TERM=term, CUEWRAP_NOTIFY_DESKTOP="off")
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    for var in ("TMUX", "CUEWRAP_LOG"):
        env.pop(var, None)
    return pexpect.spawn(
        sys.executable, args, env=env, timeout=10, dimensions=(24, 80), preexec_fn=default_signals
    )


def test_cue_side_waits_for_the_first_frame_then_is_built(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "pi").write_text(STAND_IN)
    (bindir / "pi").chmod(0o755)
    log = tmp_path / "log.jsonl"
    p = _spawn(["-m", "cuewrap", "--log", str(log), "pi"], "xterm-256color", path_first=bindir)
    try:
        p.expect("BOOTED")
        wait_until(lambda: _records(log, "terminal_query"), 5, "the start-up query written")
        # well under the latest build (1 s): the stand-in has drawn nothing yet
        absence_window(0.3, "the cue side built before the first frame")
        assert _records(log, "channels") == []
        p.send("\r")  # the stand-in draws its frame
        p.expect("FRAME-ONE")
        wait_until(lambda: _records(log, "channels"), 5, "the cue side built after the frame")
        p.terminate(force=True)
        p.expect(pexpect.EOF)
    finally:
        p.close(force=True)


GC_STATE = Path(__file__).resolve().parent / "children" / "gc_state.py"


def _gc_steps(tmp_path: Path, term: str, *command: str) -> list[tuple[str, bool]]:
    out = tmp_path / "gc.tsv"
    p = _spawn([str(GC_STATE), str(out), "--", *command], term)
    try:
        p.expect("CHILD-DONE")
        p.expect(pexpect.EOF)
    finally:
        p.close(force=True)
    steps = []
    for line in out.read_text().splitlines():
        step, on = line.split("\t")
        steps.append((step, on == "True"))
    return steps


def test_the_collector_pauses_while_cuewrap_starts_and_runs_again_once_the_cue_side_is_built(
    tmp_path: Path,
) -> None:
    """cli.run pauses the garbage collector for the start-up's imports: it is off at the spawn
    and when the relay starts, on again once the cue side is built (the child's first pause
    here, a generic child) and after the session."""
    steps = _gc_steps(
        tmp_path, "xterm-256color", "sh", "-c", "printf 'HELLO\\r\\n'; sleep 0.3; echo CHILD-DONE"
    )
    assert steps == [
        ("spawn", False),
        ("relay runs", False),
        ("cue side to build", False),
        ("cue side built", True),
        ("main returned", True),
    ]


def test_without_a_cue_side_the_collector_runs_again_when_the_relay_starts(
    tmp_path: Path,
) -> None:
    """TERM=dumb: no cues, no cue side to wait for: on again before the relay runs."""
    steps = _gc_steps(tmp_path, "dumb", "sh", "-c", "echo CHILD-DONE")
    assert steps == [("spawn", False), ("relay runs", True), ("main returned", True)]
