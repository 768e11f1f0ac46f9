"""Issue 50, parts 1 and 2, played as an attacker would (real Pi 1.4.0 and the latest under
``python -m cuewrap``, the fake model's answer carrying what a prompt injection can make a
model write; docs/terminal-guard.md):

- a Pi without its TUI (``-p``, ``--mode json``) draws no frames: all it writes is the model's
  text, so every guarded sequence in it is removed, with the bridge and without; an extension's
  own notification still passes where the bridge proves it is one;
- ``--no-bridge`` in the TUI: behind a hand-made frame end, a title posing as cuewrap's mark
  never reaches the window, and a ``blocked`` report reaches a terminal that speaks the Program
  Status Protocol only once the screen shows Pi's dialog.

Through ``pi -p`` alone the answer's OSC 777, 9, 99 and 0 reach the terminal (issue 50).
"""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import NOTIFY_EXT, TITLE, AnsweringTerminal, PiSession, ready_away
from termscan import notifications, osc_numbers
from test_facts_pi import _pi_dead, pi_pid
from test_guard_provenance_pi import (
    FRAME_ENDS,
    GUARDED,
    OUTSIDE,
    WIDE,
    finished_once,
    injected,
    outside_kinds,
    states,
)
from test_guard_provenance_pi import SHOWN as FRAMES_SHOWN
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

PLAIN = "".join(GUARDED.values())
#: every guarded kind as written, then behind a frame end, then what else acts outside
ANSWER = f"Here is the summary {PLAIN}\x1b[?2026l{PLAIN}\x1b[?2026h{OUTSIDE} and that is all."
SHOWN = b"and that is all"


def one_shot(pi_session: Any, *args: str, **kw: Any) -> PiSession:
    """``pi ARGS`` to its end (no TUI: nothing to wait for but the exit)."""
    s: PiSession = pi_session(*args, ready=False, dimensions=WIDE, **kw)
    assert s.wait_exit(30) == 0, s.dump()
    return s


@pytest.mark.parametrize("bridge", [True, False], ids=["bridge", "no-bridge"])
def test_print_mode_lets_none_of_the_answers_sequences_through(
    pi_session: Any, fakemodel: FakeModel, bridge: bool
) -> None:
    fakemodel.push(text(ANSWER))
    s = one_shot(pi_session, "-p", "summarise", cuewrap_args=[] if bridge else ["--no-bridge"])
    raw = s.raw_output
    assert SHOWN in raw, s.dump()
    assert not injected(raw), f"reached the terminal: {injected(raw)}"
    answer = raw[raw.find(b"Here is") :]  # cuewrap's own query (DA1, …) comes before it
    assert not outside_kinds(answer), f"reached the terminal: {outside_kinds(answer)}"
    kinds = {r.get("sequence") for r in s.log_records("guard")}
    assert {"osc777", "osc9", "osc99", "osc0", "osc2", "osc7501"} <= kinds, kinds
    assert [r for r in s.log_records("clipboard") if r["passed"]] == []


def test_json_mode_lets_none_of_the_answers_sequences_through(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--mode json`` escapes ESC in its JSON, not the C1 controls (U+009D begins an OSC in
    VTE and WezTerm): those are content too."""
    fakemodel.push(text(ANSWER))
    s = one_shot(pi_session, "--mode", "json", "summarise")
    raw = s.raw_output
    assert b"and that is all" in raw, s.dump()
    answer = raw[raw.find(b"Here is") :]
    assert not outside_kinds(answer), f"reached the terminal: {outside_kinds(answer)}"
    assert {r["sequence"] for r in s.log_records("guard") if "sequence" in r} == {"c1"}


def test_print_mode_lets_an_extensions_own_notification_through(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """The bridge proves an extension's own OSC 777 (written on its own at ``agent_settled``)
    is no part of the answer: it passes, while the answer's are removed."""
    fakemodel.push(text(ANSWER))
    s = one_shot(pi_session, "-p", "summarise", extensions=[NOTIFY_EXT])
    raw = s.raw_output
    assert not injected(raw), f"reached the terminal: {injected(raw)}"
    assert notifications(raw) == [("Pi", "Ready for input")], notifications(raw)
    assert len(osc_numbers(raw, 777)) == 1


def test_a_cuewrap_asleep_through_pis_whole_run_still_passes_the_extensions_notification(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """A loaded machine: cuewrap is not scheduled (here: stopped) while Pi starts, connects to
    the bridge, answers, notifies and exits. When cuewrap runs again the connection still waits
    on the listener beside the exit; it is taken and read before the exit, so the extension's
    notification passes once and every fact Pi sent is in the log (before the fix: none)."""
    fakemodel.push(text(ANSWER))
    s: PiSession = pi_session(
        "-p", "summarise", ready=False, dimensions=WIDE, extensions=[NOTIFY_EXT]
    )
    pid = pi_pid(s)
    os.kill(s.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: _pi_dead(pid), 30, "Pi to run its course while cuewrap sleeps")
    finally:
        os.kill(s.pid, signal.SIGCONT)
    assert s.wait_exit(30) == 0, s.dump()
    raw = s.raw_output
    assert not injected(raw), f"reached the terminal: {injected(raw)}"
    assert notifications(raw) == [("Pi", "Ready for input")], notifications(raw)
    told = [r["type"] for r in s.log_records("fact")]
    assert told.index("BridgeHello") < told.index("AgentSettled") < told.index("ChildExit"), told


# --------------------------------------------------------------------------------------------
# --no-bridge in the TUI: a frame end of the answer's own before each kind

BLOCKED = b"state=blocked"


def reports(raw: bytes, state: bytes) -> list[Any]:
    return [q for q in osc_numbers(raw, 7501) if state in q.payload]


def test_without_the_bridge_a_frame_end_lets_no_marked_title_or_blocked_report_through(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--no-bridge``, a terminal that speaks the Program Status Protocol: behind the answer's
    frame ends, its ``[?] …`` title never reaches the window and its ``blocked`` report never
    reaches the terminal (no dialog on the screen); Pi's own reports still do."""
    term = AnsweringTerminal(speaks=True)
    fakemodel.push(text(FRAME_ENDS, chunk_delay=0.05))
    s: PiSession = pi_session(cuewrap_args=["--no-bridge"], dimensions=WIDE, terminal=term)
    ready_away(s)
    s.prompt("summarise")
    s.wait_for_screen(FRAMES_SHOWN, 15)
    finished_once(s)
    raw = s.raw_output
    marked = [q.payload for q in osc_numbers(raw, 0, 1, 2) if q.payload.startswith(b"[?] owned")]
    assert marked == [], marked
    assert reports(raw, BLOCKED) == [], reports(raw, BLOCKED)
    assert reports(raw, b"state=done"), "Pi's own reports still reach the terminal"
    assert "blocked" not in states(s), states(s)
    assert [r for r in s.log_records("fact_refused") if r.get("state") == "blocked"]
    assert {"osc0"} <= {r.get("sequence") for r in s.log_records("guard")}
    assert TITLE.encode() in [q.payload for q in osc_numbers(raw, 0)]


def test_without_the_bridge_pis_own_blocked_report_reaches_the_terminal_with_its_dialog(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--no-bridge``: Pi's own ``blocked`` report waits for its dialog on the screen, then
    reaches a terminal that speaks the protocol (once), and counts as the fact."""
    term = AnsweringTerminal(speaks=True)
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed"))
    s: PiSession = pi_session(cuewrap_args=["--no-bridge"], dimensions=WIDE, terminal=term)
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    wait_until(lambda: reports(s.raw_output, BLOCKED), 10, "the blocked report at the terminal",
               detail=s.dump)  # fmt: skip
    absence_window(1.0, "a second blocked report")
    raw = s.raw_output
    assert len(reports(raw, BLOCKED)) == 1
    # after the frame that drew the dialog (Pi writes it before that frame)
    assert 0 <= raw.find(b"navigate") < raw.find(BLOCKED), "the report came before its dialog"
    assert "blocked" in states(s), states(s)
