"""The byte path's rules (cuewrap/engine/output.py) say what the engine's own answers say: for
any state the engine reaches and any later time, ``OutputRules.takes_out`` is
``consume_notice`` and ``clipboard_passes`` gets the state's run; the byte path's decisions
(cuewrap/relay/decisions.py) answer from them without calling up."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuewrap.engine import EngineConfig, consume_notice, initial_state, step
from cuewrap.engine.guard import clipboard_passes
from cuewrap.engine.output import NOTICES, OutputRules, output_rules, unseen
from cuewrap.facts import (
    ChildBell,
    ChildNotice,
    CueToggle,
    Keystroke,
    OutputActive,
    OutputQuiet,
    Presence,
    ProgramStatus,
)
from cuewrap.relay.decisions import NOT_ASKED, OutputDecisions
from cuewrap.term.clipboard import ClipboardSequence

pytestmark = pytest.mark.unit

FACTS = st.sampled_from(
    [
        Presence("focused"),
        Presence("away"),
        Keystroke(),
        ChildBell(),
        ChildNotice("osc777", "t", "b", True),
        ChildNotice("osc9", "", "b", False),
        OutputActive(),
        OutputQuiet(),
        ProgramStatus("working", "x"),
        ProgramStatus("blocked", "x", "permission"),
        ProgramStatus("idle", "x"),
        CueToggle(False),
        CueToggle(True),
    ]
)
CONFIGS = st.builds(
    EngineConfig,
    generic=st.booleans(),
    reemit=st.booleans(),
    idle_after=st.sampled_from([5.0, 60.0]),
    host_native=st.sampled_from([frozenset(), frozenset({"osc777"}), frozenset(NOTICES)]),
)


@settings(max_examples=300, deadline=None)
@given(
    config=CONFIGS,
    facts=st.lists(st.tuples(FACTS, st.floats(0, 30)), max_size=12),
    later=st.lists(st.floats(0, 200), min_size=1, max_size=4),
    clipboard=st.sampled_from(["user", "allow", "block"]),
    pi_mode=st.booleans(),
)
def test_the_rules_are_the_engines_answers_at_any_later_time(
    config: EngineConfig,
    facts: list[tuple[object, float]],
    later: list[float],
    clipboard: str,
    pi_mode: bool,
) -> None:
    s, now = initial_state(config), 1000.0
    for fact, gap in facts:
        now += gap
        s, _ = step(s, fact, now)  # type: ignore[arg-type]
        rules = output_rules(s, clipboard, pi_mode)
        for dt in later:
            for protocol in NOTICES:
                assert rules.takes_out(protocol, now + dt) == consume_notice(s, protocol, now + dt)
        for read in (False, True):
            for framed in (False, True):
                for since in (0.5, 5.0, math.inf):
                    assert rules.clipboard_passes(read, framed, since) == clipboard_passes(
                        clipboard, read, since, pi_mode, s.run is not None, framed
                    )
        assert unseen(s) == (s.focus_seen and s.focus_state != "focused")


def test_the_decisions_answer_from_the_rules_the_keystroke_and_the_clock() -> None:
    now = [100.0]
    d = OutputDecisions.initial(lambda: now[0], "user", pi=False)
    assert d.consume("osc9") is False  # at start: the user counts as looking
    assert d.clipboard(read=False, framed=False) is False  # no keystroke yet
    d.typed()
    now[0] += 1.0
    assert d.clipboard(read=False, framed=False) is True  # within the window
    now[0] += 5.0
    assert d.clipboard(read=False, framed=False) is False
    d.set_rules(OutputRules(consume=frozenset({"osc9"}), away_from=110.0))
    assert d.consume("osc9") is False  # not yet away
    now[0] = 110.0
    assert d.consume("osc9") is True and d.consume("osc777") is False
    # each decision's reason, paired with its event in order; unasked ones say so
    seen = [d.explain(ClipboardSequence(False, False, 10)) for _ in range(4)]
    assert [e.why for e in seen] == [
        "no keystroke in the last 2 s",
        "right after your keystroke",
        "no keystroke in the last 2 s",
        NOT_ASKED,
    ]
    kitty = ClipboardSequence(False, True, 5, "osc5522 data")
    assert d.explain(kitty) is kitty  # a write's data: its start's reason was given
