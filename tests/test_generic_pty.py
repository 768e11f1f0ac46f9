"""Generic mode as a user runs it: ``cuewrap -- <a small program that signals>`` in a real PTY.

The host terminal is pexpect's PTY: the test plays the terminal, sending focus reports
(``CSI O`` away, ``CSI I`` back) and reading every byte cuewrap writes. Desktop notifications
are off, so the terminal OSC is the channel that is checked.
"""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest
from launch import default_signals, seen, started
from shared import LoggedChild
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "signals.py")
PY = sys.executable
AWAY = b"\x1b[O"
BACK = b"\x1b[I"
OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)\x1b\\")
MARK = b"\x1b]2;[?]"


def start(
    tmp_path: Path,
    *steps: str,
    terminal: str = "osc777",
    quiet: float = 0,
    env: dict[str, str] | None = None,
) -> Session:
    log = tmp_path / "log.jsonl"
    argv = ["-m", "cuewrap", "--log", str(log), "--", PY, CHILD, *steps]
    e = dict(os.environ)
    e.update(
        TERM="xterm-256color",
        CUEWRAP_NOTIFY_TERMINAL=terminal,
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_GENERIC_QUIET_AFTER=str(quiet),
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    for var in ("TMUX", "CUEWRAP_LOG", "CUEWRAP_GENERIC_PRESET"):
        e.pop(var, None)
    e.update(env or {})
    # default_signals: a run under nohup would leave SIGHUP ignored, and the session would
    # outlive the test (docs/testing.md, "Signals"); every session is closed at teardown
    p = pexpect.spawn(PY, argv, env=e, timeout=10, dimensions=(24, 80), preexec_fn=default_signals)
    started(p)
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    return Session(p, log)


def away_then(
    tmp_path: Path,
    *steps: str,
    terminal: str = "osc777",
    quiet: float = 0,
    env: dict[str, str] | None = None,
) -> Session:
    """The child ready and waiting, the user away; then the child goes on with ``steps``."""
    s = start(tmp_path, "ready", "wait", *steps, terminal=terminal, quiet=quiet, env=env)
    s.presence(AWAY, "away")
    s.go()
    return s


class Session(LoggedChild):
    def __init__(self, p: pexpect.spawn, log: Path) -> None:
        self.p = p
        self.log = log

    def out(self) -> bytes:
        return seen(self.p)

    def wait_merged(self, what: str) -> None:
        """Wait for a ``no_cue`` record: what the child said merged into a cue already made."""
        wait_until(
            lambda: any(
                str(r.get("reason", "")).startswith("merged") for r in self.records("no_cue")
            ),
            5,
            what,
        )

    def go(self) -> None:
        self.p.send(b"g")

    def notifications(self) -> list[tuple[bytes, bytes]]:
        return OSC777.findall(self.out())

    def wait_notification(self, what: str, timeout: float = 8) -> list[tuple[bytes, bytes]]:
        return wait_until(self.notifications, timeout, what, detail=self.out)

    def end(self) -> None:
        self.p.terminate(force=True)


# --- BEL -----------------------------------------------------------------------------------------


def test_bell_while_away_one_cue_with_a_mark(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "bell", "hold")
    (note,) = s.wait_notification("the cue for the child's BEL")
    assert note[0].startswith(b"python") and note[1] == b"Wants your attention"
    absence_window(1.0, "a second notification for the same BEL")
    out = s.out()
    assert len(OSC777.findall(out)) == 1
    assert MARK in out
    assert b"\x07" in out.replace(b"\x1b]777", b"")  # the child's BEL passed through
    s.end()


def test_bell_while_present_passes_through_and_nothing_more(tmp_path: Path) -> None:
    s = start(tmp_path, "ready", "wait", "sleep:0.3", "bell", "sleep:0.3", "print:1:0", "hold")
    s.presence(BACK, "focused")
    s.go()
    s.p.expect("tick 0")
    absence_window(1.0, "a cue for a BEL rung while the user looks")
    out = s.out()
    assert b"\x07" in out
    assert OSC777.findall(out) == [] and MARK not in out
    s.presence(AWAY, "away")
    absence_window(0.5, "a late cue when the user leaves afterwards")
    assert OSC777.findall(s.out()) == [] and MARK not in s.out()
    s.end()


# --- the child's own notifications -------------------------------------------------------------


def test_osc9_while_away_host_osc777_is_translated_exactly_once(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "osc9:Build done in 3s", "hold")
    (note,) = s.wait_notification("the child's OSC 9 re-emitted as OSC 777")
    assert note[1] == b"Build done in 3s"
    absence_window(1.0, "a second notification for the same OSC 9")
    out = s.out()
    assert len(OSC777.findall(out)) == 1
    assert b"\x1b]9;" not in out  # the child's own OSC 9 was not forwarded
    assert MARK in out
    (tr,) = s.records("translation")
    assert tr["source"] == "osc9" and tr["terminal"] == "osc777"
    assert "Build done" not in s.log.read_text()  # the log keeps no child text
    s.end()


def test_bell_then_own_osc9_in_one_wait_gives_one_notification(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "bell", "osc9:Build done", "hold")
    (note,) = s.wait_notification("the cue for the child's BEL")
    assert note[1] == b"Wants your attention"
    s.wait_merged("the child's OSC 9 logged as merged")
    absence_window(1.0, "a second notification for the same wait")
    out = s.out()
    assert len(OSC777.findall(out)) == 1
    assert b"\x1b]9;" not in out  # consumed, not forwarded either
    s.end()


def test_bell_then_own_host_shown_notification_is_not_a_second_one(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "bell", "sleep:0.5", "osc777:T:B", "hold")
    (note,) = s.wait_notification("the cue for the child's BEL")
    assert note[1] == b"Wants your attention"
    s.wait_merged("the child's OSC 777 logged as merged")
    absence_window(1.0, "the child's own notification passed on as a second one")
    out = s.out()
    assert len(OSC777.findall(out)) == 1 and b"\x1b]777;notify;T;B" not in out
    s.end()


def test_osc9_while_away_host_osc9_passes_unchanged_and_nothing_is_added(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "osc9:Build done", "hold", terminal="osc9")
    wait_until(lambda: b"\x1b]9;Build done\x1b\\" in s.out(), 8, "the child's OSC 9")
    wait_until(lambda: MARK in s.out(), 5, "the mark")
    absence_window(1.0, "a notification added by cuewrap")
    out = s.out()
    assert len(re.findall(rb"\x1b\]9;", out)) == 1  # the child's, and only it
    assert OSC777.findall(out) == []
    assert s.records("translation") == []
    s.end()


def test_osc9_progress_is_not_a_notification(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "osc9:4;3", "print:1:0", "hold")
    s.p.expect("tick 0")
    absence_window(1.0, "a cue for OSC 9;4 progress")
    out = s.out()
    assert b"\x1b]9;4;3\x1b\\" in out and OSC777.findall(out) == [] and MARK not in out
    s.end()


def test_osc99_multipart_with_id_is_one_translated_notification(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "osc99:job-7:Tests:All 12 passed", "hold")
    (note,) = s.wait_notification("the OSC 99 notification re-emitted as OSC 777")
    assert note == (b"Tests", b"All 12 passed")
    absence_window(1.0, "a second notification for the parts")
    out = s.out()
    assert len(OSC777.findall(out)) == 1 and b"\x1b]99;" not in out
    s.end()


def test_osc777_notification_while_present_passes_through_nothing_added(tmp_path: Path) -> None:
    s = start(tmp_path, "ready", "wait", "sleep:0.5", "osc777:T:B", "print:1:0", "hold")
    s.presence(BACK, "focused")
    s.go()
    s.p.expect("tick 0")
    absence_window(1.0, "a cue for a notification while the user looks")
    out = s.out()
    assert OSC777.findall(out) == [] and out.count(b"\x1b]777;notify;T;B\x07") == 1
    assert MARK not in out
    s.end()


# --- OSC 7501 from any program -------------------------------------------------------------------


def test_osc7501_from_another_program_names_it_never_pi(tmp_path: Path) -> None:
    steps = ("ask", "ready", "wait", "7501:working:build", "sleep:0.5", "7501:done:build", "hold")
    s = start(tmp_path, *steps)
    s.presence(AWAY, "away")
    s.go()
    (note,) = s.wait_notification("the finished cue for build")
    assert note[0].startswith(b"build") and note[1] == b"Finished"
    assert b"Pi" not in note[0] + note[1]
    # [✓]: written right after the notification, in a write of its own
    wait_until(lambda: b"\x1b]2;[\xe2\x9c\x93]" in s.out(), 5, "the [✓] title mark")
    s.end()


# --- output then quiet ---------------------------------------------------------------------------


def test_quiet_after_output_while_away_one_seems_waiting_cue(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.6", "print:5:0.05", "hold", quiet=1.5)
    s.p.expect("tick 4")
    (note,) = s.wait_notification("the seems-to-be-waiting cue", timeout=6)
    assert note[1] == b"Seems to be waiting"
    absence_window(2.0, "a second quiet cue")
    assert len(s.notifications()) == 1 and MARK in s.out()
    assert len([r for r in s.records("cue") if r.get("signal") == "quiet"]) == 1
    s.end()


def test_after_a_tracker_failure_the_cue_waits_for_the_output_to_rest(tmp_path: Path) -> None:
    """The output tracker fails (``CUEWRAP_DEBUG_FAULT=tracker``), and the child goes quiet
    with a CSI left open: the quiet cue's notification waits until the child ends it, never
    inside it (docs/terminal-guard.md#when-the-tracker-fails)."""
    steps = ("sleep:0.6", "print:5:0.05", "raw:1b5b313b", "sleep:3", "raw:6d", "hold")
    s = away_then(tmp_path, *steps, quiet=1.0, env={"CUEWRAP_DEBUG_FAULT": "tracker"})
    s.p.expect("tick 4")
    s.wait_notification("the seems-to-be-waiting cue", timeout=10)
    out = s.out()
    assert b"\x1b[1;m" in out, out  # nothing of cuewrap's inside the child's CSI
    assert out.index(b"\x1b[1;m") < out.index(b"\x1b]777;") and out.count(b"\x1b]777;") == 1
    waited = [r["seconds"] for r in s.records("inject_waited")]
    assert waited and max(waited) > 1.0, waited  # it waited for the child's "m"
    assert any(r.get("where") == "tracker" for r in s.records("internal_error"))
    s.end()


def test_no_quiet_cue_while_the_child_keeps_printing(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.6", "print:40:0.1", "hold", quiet=1.5)
    s.p.expect("tick 30", timeout=10)
    assert s.notifications() == []
    s.end()


def test_no_quiet_cue_while_present(tmp_path: Path) -> None:
    s = start(tmp_path, "ready", "wait", "sleep:0.6", "print:5:0.05", "hold", quiet=1.0)
    s.presence(BACK, "focused")
    s.go()
    s.p.expect("tick 4")
    absence_window(2.5, "a quiet cue while the user looks")
    assert s.notifications() == [] and MARK not in s.out()
    assert any(r.get("signal") == "quiet" for r in s.records("no_cue"))
    s.end()


def test_bell_then_quiet_gets_nothing_more(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.6", "print:5:0.05", "bell", "hold", quiet=1.0)
    assert len(s.wait_notification("the cue for the BEL")) == 1
    absence_window(2.5, "a quiet cue after the BEL told the wait")
    assert len(s.notifications()) == 1
    s.end()


# --- exit ----------------------------------------------------------------------------------------


def test_exit_while_away_gives_the_exited_cue(tmp_path: Path) -> None:
    s = away_then(tmp_path, "sleep:0.5", "exit:3")
    s.p.expect(pexpect.EOF)
    notes = OSC777.findall(s.p.logfile_read.getvalue())
    assert [n[1] for n in notes] == [b"Exited (status 3)"]
    s.p.close()
    assert s.p.exitstatus == 3
