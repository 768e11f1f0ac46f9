"""Inside tmux, a fact whose cue depends on presence waits for tmux's answer of now
(``wiring/freshview.py``, ``engine/lookahead.py``; docs/tmux-and-ssh.md#presence). Pure parts
with the real engine; the tmux side is a fake that answers when the test says (the real one is
in test_tmux_side.py and test_tmux_pi.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_engine_rules import RUN, Eng, settle

from cuewrap.engine import Event, Tick
from cuewrap.engine.lookahead import depends_on_presence, waits_on_presence
from cuewrap.facts import Keystroke, Presence, UiPromptStart
from cuewrap.loop import Loop
from cuewrap.wiring import freshview
from cuewrap.wiring.freshview import FreshView

pytestmark = pytest.mark.unit


def test_a_settle_depends_on_presence_a_key_or_a_tool_does_not() -> None:
    e = Eng()
    e(*RUN)
    end, before, settled = settle()
    assert not depends_on_presence(e.s, end, 1.0)  # an attempt ended: no cue either way
    e(end, before)
    assert depends_on_presence(e.s, settled, 1.0)  # the run settles: a cue only if away
    assert not depends_on_presence(e.s, Keystroke(), 1.0)
    assert not depends_on_presence(e.s, Tick(), 1.0)


def test_a_dialog_depends_on_presence_and_then_presence_is_waited_on() -> None:
    e = Eng()
    e(*RUN)
    assert not waits_on_presence(e.s)
    prompt = UiPromptStart("p1", "select")
    assert depends_on_presence(e.s, prompt, 1.0)
    e(prompt)
    assert waits_on_presence(e.s)  # leaving now gives the wait's cue (rule 2)


class FakeSide:
    def __init__(self) -> None:
        self.stale = True
        self.asked: list[Callable[[Any], None]] = []
        self.runs = True

    def refresh(self, after: Callable[[Any], None] | None = None) -> bool:
        if not self.runs:
            if after is not None:
                after(None)
            return False
        assert after is not None
        self.asked.append(after)
        return True


class Rig:
    def __init__(self) -> None:
        self.loop = Loop()
        self.side = FakeSide()
        self.eng = Eng()
        self.eng(*RUN)
        self.stepped: list[Event] = []
        self.log: list[dict[str, Any]] = []
        self.fresh = FreshView(
            self.loop, self.side, self.step,  # type: ignore[arg-type]
            lambda kind, **fields: self.log.append({"kind": kind, **fields}),
        )  # fmt: skip

    def step(self, event: Event) -> None:
        """The controller's fact(): offered first, stepped when not held."""
        if self.fresh.offer(self.eng.s, event, self.eng.t):
            return
        self.stepped.append(event)
        self.eng(event)


@pytest.fixture
def rig() -> Any:
    r = Rig()
    yield r
    r.loop.close()


def test_held_until_the_answer_then_presence_first_and_the_rest_in_order(rig: Rig) -> None:
    end, before, settled = settle()
    rig.step(end)
    rig.step(before)
    assert rig.stepped == [end, before] and rig.side.asked == []  # nothing depended on it
    rig.step(settled)
    key = Keystroke()
    rig.step(key)
    assert rig.stepped == [end, before], "the settle and what came after it wait"
    assert len(rig.side.asked) == 1 and rig.fresh.holds == 1
    # tmux answers: the pane is hidden. Its presence is stepped first (never held) ...
    rig.side.stale = False
    rig.step(Presence("away", source="tmux"))
    rig.side.asked[0](object())
    # ... then the held facts, in order: the run settled while away gives its cue
    assert rig.stepped == [end, before, Presence("away", source="tmux"), settled, key]
    assert [n.kind for n in rig.eng.notifies()] == ["finished"]
    [hold] = rig.log
    assert {k: v for k, v in hold.items() if k != "waited_ms"} == {
        "kind": "tmux_hold",
        "facts": 2,
        "state": "answered",
    }
    assert 0 <= hold["waited_ms"] < 1000


def test_a_fresh_view_holds_nothing(rig: Rig) -> None:
    rig.side.stale = False
    *first, settled = settle()
    for event in (*first, settled):
        rig.step(event)
    assert rig.stepped == [*first, settled] and rig.side.asked == []


def test_no_answer_in_time_releases_the_facts(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(freshview, "HOLD_MAX", 0.05)
    *first, settled = settle()
    for event in (*first, settled):
        rig.step(event)
    assert rig.stepped == first
    deadline = rig.loop.clock() + 2
    while rig.fresh.held is not None and rig.loop.clock() < deadline:
        rig.loop.run_once(max_timeout=0.1)
    assert rig.stepped == [*first, settled]
    assert rig.log[-1]["state"] == "no answer in time" and rig.log[-1]["facts"] == 1
    assert rig.log[-1]["waited_ms"] >= 50
    rig.side.asked[0](object())  # a late answer releases nothing twice
    assert rig.stepped == [*first, settled]


def test_tmux_that_cannot_be_run_holds_nothing_back(rig: Rig) -> None:
    rig.side.runs = False
    *first, settled = settle()
    for event in (*first, settled):
        rig.step(event)
    assert rig.stepped == [*first, settled]
    assert rig.log[-1]["state"] == "tmux could not be asked"


def test_closing_steps_what_is_held(rig: Rig) -> None:
    *first, settled = settle()
    for event in (*first, settled):
        rig.step(event)
    assert rig.stepped == first
    rig.fresh.close()
    assert rig.stepped == [*first, settled]
