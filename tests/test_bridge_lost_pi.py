"""Issue 50, part 3: a lost bridge is noticed and survived (docs/bridge-protocol.md, "A lost
bridge"; docs/terminal-guard.md, "Whose sequence is it").

After Pi's first frame its own titles, reports and queries reach the terminal only through the
bridge. Each way its connection can end while Pi runs is injected into the real extension
(``CUEWRAP_DEBUG_BRIDGE``, read and removed by it at load; real Pi 1.4.0 and the latest): an
error inside the extension (its connection fails), a line cuewrap refuses (one of Pi's own
writes that is no escape sequence: cuewrap ends the connection), and a ``/reload`` that fails
to load the extension (the old runtime's connection ended at its ``session_shutdown``, no new
one comes). Each time: cuewrap notices (a ``provenance`` record ``lost`` with its why), Pi's own
title still reaches the terminal after it (``/name``), the model's text is still guarded, and a
``/reload`` that works brings the bridge back (``restored``), said once inside Pi and on
``/cue``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fakemodel import FakeModel, text
from pirig import PiSession
from termscan import titles
from test_guard_provenance_pi import GUARDED, WIDE, injected, states
from waiting import wait_until

pytestmark = pytest.mark.pi

PLAIN = "".join(v for k, v in GUARDED.items() if k != 52)
#: every kind inside Pi's frame; behind a frame end of its own, a ``blocked`` report and a title
#: posing as cuewrap's mark (held to more than the frame rule once the bridge is lost)
BEHIND = f"\x1b[?2026l{GUARDED[7501]}{GUARDED[0]}\x1b[?2026h"
ANSWER = f"Here is the summary {PLAIN}{BEHIND} and that is all."
SHOWN = r"and that is all\."
FAULTS = {
    "throw": "without Pi's session_shutdown",
    "bad-own": "refused one of Pi's own writes",
    "reload": "after session_shutdown reload",
}


def provenance(s: PiSession, state: str) -> list[dict[str, Any]]:
    return [r for r in s.log_records("provenance") if r.get("state") == state]


def hellos(s: PiSession) -> list[dict[str, Any]]:
    return [r for r in s.log_records("fact") if r.get("type") == "BridgeHello"]


def renamed(s: PiSession, name: str) -> None:
    """``/name NAME``: Pi writes its new title; it reaches the terminal."""
    want = f"π - {name} - work"
    s.submit(f"/name {name}")
    wait_until(lambda: want in titles(s.raw_output), 10, f"Pi's title {want!r}",
               detail=lambda: f"titles: {titles(s.raw_output)}\n{s.dump()}")  # fmt: skip


def guarded(s: PiSession, fm: FakeModel, prompt: str) -> None:
    """The model's text is still content: none of the answer's sequences reaches the
    terminal."""
    start = len(s.raw_output)
    fm.push(text(ANSWER))
    s.prompt(prompt)
    s.wait_for_screen(SHOWN, 15)
    s.wait_idle()
    assert not injected(s.raw_output[start:]), injected(s.raw_output[start:])


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_lost_bridge_is_noticed_and_survived(
    pi_session: Any, fakemodel: FakeModel, fault: str
) -> None:
    s: PiSession = pi_session(env={"CUEWRAP_DEBUG_BRIDGE": fault}, dimensions=WIDE)
    s.wait_log(lambda r: r.get("kind") == "provenance" and r.get("state") == "marked")
    if fault == "reload":
        s.submit("/reload")
    else:  # the fault fires at the first run's start
        fakemodel.push(text("hello there"))
        s.prompt("say hello")
        s.wait_for_screen(r"hello there", 15)
    lost = s.wait_log(lambda r: r.get("kind") == "provenance" and r.get("state") == "lost", 15)
    assert FAULTS[fault] in lost["why"], lost
    s.wait_idle()
    # Pi's own title, right after it (through the terminal again, by the frame rule)
    renamed(s, "after-the-loss")
    guarded(s, fakemodel, "summarise")
    refused = wait_until(lambda: s.log_records("fact_refused"), 5, "the blocked report refused")
    assert refused[0]["state"] == "blocked", refused
    assert len(provenance(s, "lost")) == 1, s.log_records("provenance")
    # a /reload that works brings the bridge back: said once inside Pi, on /cue
    s.submit("/reload")
    s.wait_log(lambda r: r.get("kind") == "provenance" and r.get("state") == "restored", 15)
    s.wait_for_screen(r"the bridge to cuewrap was lost at", 10)
    s.wait_idle()
    renamed(s, "back-again")
    guarded(s, fakemodel, "summarise again")
    s.submit("/cue")
    s.wait_for_screen(r"lost at .*, back at", 10)
    assert len(provenance(s, "lost")) == 1 and len(provenance(s, "restored")) == 1
    assert "blocked" not in states(s), states(s)
