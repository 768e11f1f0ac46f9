"""Weaker sources drive cues only when the stronger ones are absent (docs/design.md#fact-sources),
over real Pi."""

from __future__ import annotations

import re

import pytest
from fakemodel import text, tool_call
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)(?:\x07|\x1b\\)")


def notifications(raw: bytes) -> list[tuple[str, str]]:
    return [(t.decode(), b.decode()) for t, b in OSC777.findall(raw)]


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_screen_source_drives_when_bridge_and_status_are_off(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    fakemodel.script([tool_call("bash", {"command": "sleep 2; echo hi"}), text("all done")])
    s = pi_session(cuewrap_args=["--no-bridge"], env={"PI_PROGRAM_STATUS": "0"})
    s.wait_log(lambda r: r.get("kind") == "screen" and r.get("state") == "started", 10)
    s.focus_out()
    s.prompt("go")
    s.wait_log(lambda r: r.get("type") == "ScreenActivity" and r.get("working") is True, 10)
    s.wait_log(lambda r: r.get("kind") == "cue", 20)
    wait_until(lambda: notifications(s.raw_output), 5, "the OSC 777 notification")
    absence_window(0.5, "a second cue")
    cues = s.log_records("cue")
    assert len(cues) == 1 and cues[0]["outcome"] == "uncertain", cues
    notes = notifications(s.raw_output)
    assert len(notes) == 1 and "seems" in notes[0][1].lower(), notes
    # no bridge fact and no OSC 7501 fact was ever seen
    facts = s.log_records("fact")
    assert not [f for f in facts if f.get("source") in ("bridge", "osc7501")]
    s.quit()
    assert s.wait_exit() == 0


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_osc7501_drives_without_the_bridge(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    fakemodel.script([tool_call("bash", {"command": "sleep 1"}), text("ok")])
    s = pi_session(cuewrap_args=["--no-bridge"])
    s.focus_out()
    s.prompt("go")
    s.wait_log(lambda r: r.get("kind") == "cue", 20)
    wait_until(lambda: notifications(s.raw_output), 5, "the OSC 777 notification")
    absence_window(0.5, "a second cue")
    cues = s.log_records("cue")
    assert [c["outcome"] for c in cues] == ["completed"], cues
    assert len(notifications(s.raw_output)) == 1
    # the reports were consumed: none reached the host terminal
    assert b"\x1b]7501;state=" not in s.raw_output
    # The screen source is started only when no stronger source is live 2 s after launch. On a
    # loaded machine Pi's first 7501 report can come later than that: then the screen source
    # starts and must stop as soon as 7501 is live, and never cue.
    screen = [(r["state"], r.get("why")) for r in s.log_records("screen")]
    late_start = [
        ("started", "neither the bridge nor OSC 7501 is live"),
        ("stopped", "a stronger source became live"),
    ]
    assert [state for state, _ in screen] == ["not started"] or screen == late_start, screen
    assert "seems" not in notifications(s.raw_output)[0][1].lower()  # not a screen cue
    s.quit()
    assert s.wait_exit() == 0
