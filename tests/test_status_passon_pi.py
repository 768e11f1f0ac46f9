"""Pi's own OSC 7501 reports reach a terminal that speaks the Program Status Protocol, under
``cuewrap pi`` as under ``pi`` alone (docs/pi-facts.md#program-status, docs/generic-mode.md).

The rig plays the terminal (tests/pirig.py, ``AnsweringTerminal``): it answers every DA1 query
and, when it speaks the protocol, every Program Status query (``OSC 7501 ; ?``). cuewrap sets
``PI_PROGRAM_STATUS=1`` (Pi then reports without asking), so cuewrap asks the terminal itself
at start and passes Pi's reports on only where it answered. Real Pi (1.4.0 and latest), the
fake model.
"""

from __future__ import annotations

import os
import re
import signal
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import AnsweringTerminal, PiSession, ready_away, wrapped_pid
from waiting import wait_until

pytestmark = pytest.mark.pi

# a report as written: ESC ] 7501 ; state=… ST|BEL (the query "?" is not one)
_REPORT = re.compile(rb"\x1b\]7501;state=[^\x07\x1b]*(?:\x1b\\|\x07)")
_OSC777 = re.compile(rb"\x1b\]777;notify;([^\x07\x1b]*)(?:\x07|\x1b\\)")
CLEAR = b"\x1b]7501;state=clear\x1b\\"
PROMPT = "say hello please"


def reports(raw: bytes) -> list[bytes]:
    """Every OSC 7501 report the terminal got, exactly as written, in order."""
    return _REPORT.findall(raw)


def report_states(raw: bytes) -> list[str]:
    return [re.search(rb"state=(\w+)", r).group(1).decode() for r in reports(raw)]  # type: ignore[union-attr]


def status_facts(s: PiSession) -> list[str]:
    return [
        str(r["state"])
        for r in s.log_records("fact")
        if r.get("type") == "ProgramStatus" and r.get("source") == "osc7501"
    ]


def user_texts(fm: FakeModel) -> list[str]:
    """What Pi sent the model as the user's words (stray input would be in them)."""
    out: list[str] = []
    for body in fm.requests:
        for m in body.get("messages", []):
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                out.append(c)
            else:
                out += [p.get("text", "") for p in c if isinstance(p, dict)]
    return out


def one_run(s: PiSession, fm: FakeModel, *, away: bool = False) -> None:
    """One prompt, answered by the fake model, until Pi says done."""
    if away:
        ready_away(s)
    s.prompt(PROMPT)
    s.wait_for_screen(r"^ hello there$")
    s.wait_idle()
    assert fm.requests, "the model was never asked"


def baseline(pi_session: Any, fm: FakeModel) -> list[bytes]:
    """``pi`` alone in a terminal that speaks the protocol (it asks, the terminal answers):
    the reports it writes for one run and a /quit."""
    term = AnsweringTerminal(speaks=True)
    s: PiSession = pi_session(wrap=False, test_ext=False, terminal=term)
    fm.push(text("hello there"))
    one_run(s, fm)
    wait_until(lambda: b"state=done" in s.raw_output, 5, "Pi's done report")
    s.quit()
    s.wait_exit(10)
    assert term.status_queries >= 1, "Pi alone asks the terminal"
    return reports(s.raw_output)


def test_pi_reports_reach_a_terminal_that_speaks_the_protocol(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    expected = baseline(pi_session, fakemodel)
    assert [re.search(rb"state=(\w+)", r).group(1) for r in expected] == [  # type: ignore[union-attr]
        b"idle",
        b"working",
        b"done",
        b"clear",
    ], expected
    assert expected[-1] == CLEAR  # what cuewrap writes for a Pi that could not
    requests_before = len(fakemodel.requests)

    term = AnsweringTerminal(speaks=True)
    s: PiSession = pi_session(terminal=term)
    fakemodel.push(text("hello there"))
    one_run(s, fakemodel, away=True)
    wait_until(lambda: b"state=done" in s.raw_output, 5, "Pi's done report at the terminal",
               detail=lambda: f"reports: {reports(s.raw_output)}\n{s.dump()}")  # fmt: skip
    # cuewrap's own Finished cue, once, as without the terminal's answer
    wait_until(lambda: _OSC777.search(s.raw_output), 5, "the Finished notification")
    screen = s.screen_text
    s.quit()
    assert s.wait_exit(10) == 0
    # exactly what Pi alone gave the same terminal: idle, working, done, clear, byte for byte
    assert reports(s.raw_output) == expected
    assert term.status_queries == 1  # cuewrap's own query (Pi, with the variable, asks none)
    # the answer never reached Pi: nothing stray on its screen or in what it sent the model
    assert "7501" not in screen and "62;22" not in screen, screen
    typed = user_texts(fakemodel)[requests_before:]
    assert typed and all(t == PROMPT for t in typed), typed
    # cuewrap's facts and cue as ever
    assert status_facts(s)[:3] == ["idle", "working", "done"], status_facts(s)
    [cue] = [r for r in s.log_records("cue") if r.get("cue") == "finished"]
    assert cue["outcome"] == "completed"
    assert len(_OSC777.findall(s.raw_output)) == 1
    [answers] = s.log_records("terminal_answers")
    assert answers["program_status"] is True


def test_no_report_reaches_a_terminal_that_answers_only_da1(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    term = AnsweringTerminal(speaks=False)
    s: PiSession = pi_session(terminal=term)
    fakemodel.push(text("hello there"))
    one_run(s, fakemodel, away=True)
    wait_until(lambda: "done" in status_facts(s), 5, "the done fact")
    wait_until(lambda: _OSC777.search(s.raw_output), 5, "the Finished notification")
    s.quit()
    assert s.wait_exit(10) == 0
    assert reports(s.raw_output) == []
    assert status_facts(s)[:3] == ["idle", "working", "done"], status_facts(s)
    assert len(_OSC777.findall(s.raw_output)) == 1
    # cuewrap asked (once), the terminal did not answer it
    assert term.status_queries == 1
    [query] = s.log_records("terminal_query")
    assert query["osc7501"] is True
    [answers] = s.log_records("terminal_answers")
    assert answers["program_status"] is False


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_a_slow_answer_still_gets_the_state_pi_reported_before_it(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """Over a slow link the answer comes after Pi's first report (``idle``, taken out then):
    cuewrap writes it when the answer comes, and Pi's later reports pass as they come."""
    term = AnsweringTerminal(speaks=True, delay=3.0)
    s: PiSession = pi_session(terminal=term)
    wait_until(lambda: "idle" in status_facts(s), 10, "Pi's idle report as a fact")
    assert reports(s.raw_output) == []  # not answered yet: taken out
    wait_until(lambda: reports(s.raw_output), 5, "the missed report at the answer",
               detail=s.dump)  # fmt: skip
    assert reports(s.raw_output) == [b"\x1b]7501;state=idle:app=pi\x1b\\"]
    fakemodel.push(text("hello there"))
    one_run(s, fakemodel)
    wait_until(lambda: b"state=done" in s.raw_output, 5, "Pi's done report")
    assert report_states(s.raw_output) == ["idle", "working", "done"]
    typed = user_texts(fakemodel)
    assert typed and all(t == PROMPT for t in typed), typed


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_a_clear_reaches_the_terminal_when_pi_dies_mid_run(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """Pi killed while working writes no ``clear``: cuewrap writes it as it gives the terminal
    back, so the terminal's indicator does not stay on "working"."""
    term = AnsweringTerminal(speaks=True)
    s: PiSession = pi_session(terminal=term)
    fakemodel.push(tool_call("bash", {"command": "sleep 30"}), text("never"))
    s.prompt("run the tool")
    wait_until(lambda: b"state=working" in s.raw_output, 10, "Pi's working report",
               detail=s.dump)  # fmt: skip
    pi = wrapped_pid(s.pid)
    assert pi is not None
    sleepers = _children(pi)
    os.kill(pi, signal.SIGKILL)
    try:
        s.wait_exit(10)
    finally:
        for pid in sleepers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    got = reports(s.raw_output)
    assert report_states(s.raw_output)[-2:] == ["working", "clear"], got
    assert got[-1] == CLEAR


def _children(pid: int) -> list[int]:
    """Every process under ``pid`` (the tool's sleep outlives a SIGKILLed Pi)."""
    from pirig import _descendants

    return [p for p, _ in _descendants(pid)]
