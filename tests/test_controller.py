"""The controller alone: facts in, effects out to its parts, with fakes for every part.

No PTY, no Pi, no subprocess, no tmux: the real ``Controller`` and the real pure engine, handed
recording fakes of the parts ``cueside.build_controller`` builds (delivery, publisher, key
window, bridge server, screen gate, output watch, tmux side) and the real ``Loop`` on a clock
the test moves. Each test follows one path from a fact to an effect. The real parts are tested
on their own (test_bridge_server, test_screen_gate, test_keys, test_tmux_units, …) and
together with real Pi, PTYs and tmux (test_relay_pty, test_generic_pty, test_demo,
test_bridge_pi, test_tmux_pi, …).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cuewrap.bridge.server import BridgeServer
from cuewrap.config import Settings
from cuewrap.context import Context
from cuewrap.decisionlog import DecisionLog
from cuewrap.deliver.delivery import Delivery
from cuewrap.deliver.plan import Answers, make_plan
from cuewrap.deliver.terminal import Choice
from cuewrap.engine import EngineConfig
from cuewrap.engine.effects import MARK_COMPLETED, Effect, Eligibility, Notify, Withdraw
from cuewrap.engine.output import OutputRules
from cuewrap.engine.page import CUES_OFF, CUES_ON, Channels
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    BridgeHello,
    ChildExit,
    CueToggle,
    Fact,
    Presence,
    ProgramStatus,
    ScreenActivity,
    SessionStart,
    UiPromptEnd,
    UiPromptStart,
    UserInput,
)
from cuewrap.generic.activity import OutputWatch
from cuewrap.loop import Loop
from cuewrap.relay import events as relay_events
from cuewrap.relay.decisions import OutputDecisions
from cuewrap.relay.events import RelayEvent
from cuewrap.screen.gate import ScreenGate
from cuewrap.sessions.publish import Publisher
from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.clipboard import ClipboardSequence
from cuewrap.term.focus import FocusReport
from cuewrap.term.notices import ChildNotification
from cuewrap.term.tracker import TitleChange
from cuewrap.tmux.side import TmuxSide
from cuewrap.wiring import parts as cue_parts
from cuewrap.wiring.controller import Controller
from cuewrap.wiring.cueside import Edge, Plan, build_controller, presence_fact
from cuewrap.wiring.effectors import EFFECTORS as _EFFECTORS
from cuewrap.wiring.eventtable import EVENTS as _ON_RELAY_EVENT
from cuewrap.wiring.keystrokes import KeyWindow
from cuewrap.wiring.mode import mode_of
from cuewrap.wiring.parts import Parts, hooked

pytestmark = pytest.mark.unit

SESSION = "/home/u/.pi/sessions/s1.jsonl"
HELLO = BridgeHello(1, "1.4.0", "tui", True, "sid-1", SESSION, 4242)
RUN = (UserInput("interactive"), AgentStart())
SETTLE = (AgentEnd("stop"), AgentBeforeSettle("completed"), AgentSettled(False))
CHOICE = Choice("osc777", False, "TERM_PROGRAM=WezTerm", "wezterm")

Journal = list[tuple[Any, ...]]


# -- the fakes: each records its calls, in order, in one journal ----------------------------
class Part:
    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.fail: set[str] = set()  # methods that raise

    def called(self, name: str, *args: Any) -> None:
        self.journal.append((type(self).__name__, name, *args))
        if name in self.fail:
            raise RuntimeError(f"{name} broke")


class FakeDelivery(Part):
    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self.terminal_choice = CHOICE
        self.desktop_on = False
        self.desktop_why = "over SSH (SSH_TTY is set)"
        self.answers: Answers | None = None
        self.eligible: Callable[[Eligibility], bool] | None = None

    @property
    def plan(self) -> Any:
        return make_plan(CHOICE, "auto", "auto", False, self.desktop_why, in_tmux=False)

    def channels(self) -> Channels:
        return Channels("osc777", "TERM_PROGRAM=WezTerm", False, "over SSH", False, True, False)

    def answered(self, answers: Answers) -> None:
        self.answers = answers
        self.called("answered", answers.version)

    def child_title(self, title: str, controls: bool = False) -> None:
        self.called("child_title", title, *(["controls"] if controls else []))

    def reapply_mark(self) -> None:
        self.called("reapply_mark")

    def reapply_progress(self) -> None:
        self.called("reapply_progress")

    def set_mark(self, mark: str | None) -> None:
        self.called("set_mark", mark)

    def notify(self, n: Notify, *, eligible: Callable[[Eligibility], bool], session: str) -> None:
        self.eligible = eligible
        self.called("notify", n.kind, session)

    def withdraw(self, w: Withdraw) -> None:
        self.called("withdraw", w.cue_id, w.reason)

    def escalate(self, n: Notify, *, eligible: Callable[[Eligibility], bool], session: str) -> None:
        self.called("escalate", n.kind)

    def pending(self) -> bool:
        return False

    def progress(self, on: bool) -> None:
        self.called("progress", on)

    def keep_awake(self, hold: bool) -> None:
        self.called("keep_awake", hold)

    def close(self) -> None:
        self.called("close")


class FakePublisher(Part):
    busy = False

    def publish(
        self, glances: list[Any], session: str, presence: str, mark: str | None, source: str
    ) -> None:
        self.called("publish", tuple(g.state for g in glances), presence, mark)

    def close(self) -> None:
        self.called("close")


class FakeKeys(Part):
    def key(self) -> None:
        self.called("key")

    def close(self) -> None:
        self.called("close")


class FakeBridge(Part):
    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self.notices: list[str] = []

    def stats(self) -> dict[str, object]:
        return {"live_connections": 1, "facts": 7, "hellos": 1, "rejected": {"bad json": 2}}

    def push_notice(self, text: str) -> bool:
        self.notices.append(text)
        self.called("push_notice", text)
        return True

    def drain_all(self) -> None:
        self.called("drain_all")

    def close(self) -> None:
        self.called("close")


class FakeScreen(Part):
    def feed(self, data: bytes) -> None:
        self.called("feed", data)

    def resize(self, *, rows: int, cols: int) -> None:
        self.called("resize", rows, cols)

    def check(self) -> None:
        self.called("check")

    def close(self) -> None:
        self.called("close")


class FakeActivity(Part):
    def feed(self, data: bytes) -> None:
        self.called("feed", data)

    def resize(self, *, rows: int, cols: int) -> None:
        self.called("resize", rows, cols)

    def input(self) -> None:
        self.called("input")

    def close(self) -> None:
        self.called("close")


class FakeTmux(Part):
    view = None
    busy = False
    waiting_for_answer: list[Callable[[Any], None]]

    def when_answered(self, callback: Callable[[Any], None]) -> None:
        self.called("when_answered")
        self.waiting_for_answer = [*getattr(self, "waiting_for_answer", []), callback]

    def focus(self, state: str) -> None:
        self.called("focus", state)

    def keystroke(self) -> None:
        self.called("keystroke")

    def watch(self, waiting: bool) -> None:
        self.waiting = waiting  # after every step: not a call the journal keeps

    def status_line(self) -> str:
        return "tmux 3.4: Pi's pane is shown (1 client attached)"

    def close(self) -> None:
        self.called("close")


class FakeReaper(Part):
    def close(self, timeout: float = 0.5) -> None:
        self.called("close")


class Log(DecisionLog):
    """The decision log, into the journal."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(None)
        self.journal = journal

    def write(self, kind: str, **fields: object) -> None:
        self.journal.append(("log", kind, fields))


class Rig:
    """A controller with fakes for every part, on a loop whose clock the test moves."""

    def __init__(
        self,
        *,
        pi_mode: bool = True,
        bridge: bool = True,
        tmux: bool = False,
        settings: Settings | None = None,
        on_unseen: Callable[[bool], None] | None = None,
        **config: Any,
    ) -> None:
        self.now = 1000.0
        self.loop = Loop()
        self.loop.clock = lambda: self.now
        self.journal: Journal = []
        self.log = Log(self.journal)
        self.delivery = FakeDelivery(self.journal)
        self.publisher = FakePublisher(self.journal)
        self.keys = FakeKeys(self.journal)
        self.bridge = FakeBridge(self.journal) if bridge else None
        self.screen = FakeScreen(self.journal) if pi_mode else None
        self.activity = None if pi_mode else FakeActivity(self.journal)
        self.tmux = FakeTmux(self.journal) if tmux else None
        self.reaper = FakeReaper(self.journal) if tmux else None
        self.unseen: list[bool] = []
        settings = settings or Settings()
        # the byte path's decisions, handed the controller's rules (relay/decisions.py)
        self.decisions = OutputDecisions.initial(self.loop.clock, settings.guard.clipboard, pi_mode)
        self.rules: list[OutputRules] = []

        def on_rules(rules: OutputRules) -> None:
            self.rules.append(rules)
            self.decisions.set_rules(rules)

        parts = Parts(
            EngineConfig(label="proj", generic=not pi_mode, **config),
            self.delivery,  # type: ignore[arg-type]
            self.publisher,  # type: ignore[arg-type]
            self.keys,  # type: ignore[arg-type]
            bridge=self.bridge,  # type: ignore[arg-type]
            screen=self.screen,  # type: ignore[arg-type]
            activity=self.activity,  # type: ignore[arg-type]
            tmux=self.tmux,  # type: ignore[arg-type]
            reaper=self.reaper,  # type: ignore[arg-type]
        )
        ctx = Context(self.loop, settings, self.log, {"TERM": "xterm-256color"})
        self.made_with: list[Controller] = []

        def make(c: Controller) -> Parts:
            self.made_with.append(c)
            return parts

        self.c = Controller(
            ctx,
            parts=make,
            on_unseen=on_unseen or self.unseen.append,
            on_rules=on_rules,
        )
        assert self.made_with == [self.c]  # the parts were made with the controller itself

    def facts(self, *facts: Fact) -> None:
        for f in facts:
            self.c.fact(f)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.loop.run_due_timers()

    def calls(self, part: str, name: str | None = None) -> list[tuple[Any, ...]]:
        return [
            e[2:] if name is not None else e[1:]
            for e in self.journal
            if e[0] == part and (name is None or e[1] == name)
        ]

    def logged(self, kind: str) -> list[dict[str, Any]]:
        return [e[2] for e in self.journal if e[0] == "log" and e[1] == kind]

    def clear(self) -> None:
        self.journal.clear()


def away_in_a_run(r: Rig) -> None:
    r.facts(HELLO, SessionStart("startup", "sid-1", SESSION), Presence("focused"), *RUN)
    r.c.relay_event(FocusReport("out"))


# -- the fakes stand for the real parts ------------------------------------------------------
@pytest.mark.parametrize(
    ("fake", "real"),
    [
        (FakeDelivery, Delivery),
        (FakePublisher, Publisher),
        (FakeKeys, KeyWindow),
        (FakeBridge, BridgeServer),
        (FakeScreen, ScreenGate),
        (FakeActivity, OutputWatch),
        (FakeTmux, TmuxSide),
    ],
)
def test_every_fake_method_is_the_real_parts_with_its_parameters(fake: type, real: type) -> None:
    own = {n for n, v in vars(fake).items() if not n.startswith("_") and callable(v)}
    assert own, fake
    for name in own:
        real_attr = getattr(real, name, None)
        assert real_attr is not None, f"{real.__name__} has no {name}"
        got = list(inspect.signature(getattr(fake, name)).parameters)
        want = list(inspect.signature(real_attr).parameters)
        assert got == want, (real.__name__, name)


def test_every_effect_type_has_its_effector() -> None:
    assert set(_EFFECTORS) == set(typing.get_args(Effect))


def relay_event_types() -> list[type]:
    def flat(t: Any) -> list[type]:
        args = typing.get_args(t)
        return [x for a in args for x in flat(a)] if args else [t]

    return flat(RelayEvent)


def test_relay_events_are_dispatched_by_their_exact_type() -> None:
    """The table holds only relay events, and none of them is another's subclass (the
    lookup is by exact type: a subclass would silently take the default path)."""
    kinds = relay_event_types()
    assert set(_ON_RELAY_EVENT) <= set(kinds)
    assert not [(a, b) for a in kinds for b in kinds if a is not b and issubclass(a, b)]


def test_every_relay_event_has_its_row_in_the_one_table() -> None:
    """Each relay event's record, fact and reaction are read in one place
    (``wiring/eventtable.py``): a type without a row would be dropped unread."""
    assert set(_ON_RELAY_EVENT) == set(relay_event_types())


def test_a_key_calls_the_parts_own_methods_and_nothing_else() -> None:
    """The keystroke's fan-out is folded once, at construction: the parts' own bound methods,
    those that do not hear keys left out (no wrapper on the key path)."""
    r = Rig(pi_mode=False, tmux=True)
    assert r.c.on_key == (r.activity.input, r.keys.key, r.tmux.keystroke)  # type: ignore[union-attr]
    p = Rig()
    assert p.c.on_key == (p.keys.key,)


def test_a_part_that_cares_for_nothing_is_in_no_fold() -> None:
    idle = cue_parts.Part("idle.close")
    told = cue_parts.Part("told.close", typed=lambda: None)
    assert hooked([idle, told], "typed") == (told.typed,)
    assert hooked([idle, told], "after_step") == () == hooked([idle], "close")


# -- the bridge: facts to cues to delivery ---------------------------------------------------
def test_bridge_run_settled_while_away_notifies_through_the_delivery() -> None:
    r = Rig()
    away_in_a_run(r)
    r.clear()
    r.facts(*SETTLE)
    assert r.calls("FakeDelivery", "notify") == [("finished", "proj")]
    assert r.calls("FakeDelivery", "set_mark") == [(MARK_COMPLETED,)]
    # the delivery asks the engine again before each asynchronous call
    assert r.delivery.eligible is not None
    [cue] = [c["cue_id"] for c in r.logged("cue")]
    s = r.c.state
    assert r.delivery.eligible(Eligibility(s.generation, None, cue, s.epoch))
    assert not r.delivery.eligible(Eligibility(s.generation, None, cue, s.epoch + 1))


def test_bridge_facts_are_logged_in_order_and_the_screen_gate_checked_after_each() -> None:
    r = Rig()
    r.facts(HELLO, AgentStart())
    order = [e[1] if e[0] == "log" else e[0] for e in r.journal if e[1] in ("fact", "check")]
    assert order == ["fact", "FakeScreen", "fact", "FakeScreen"]
    assert [f["type"] for f in r.logged("fact")] == ["BridgeHello", "AgentStart"]
    assert r.c.stronger_source_live()  # the bridge said hello: the screen is not needed


def cue_reply(c: Controller, action: str) -> str:
    """``/cue ACTION`` from the bridge: the reply, which must come at once."""
    replies: list[str] = []
    c.request(action, replies.append)
    [reply] = replies
    return reply


def test_cue_request_from_the_bridge_gives_the_page_and_the_toggle_replies() -> None:
    r = Rig(tmux=True)
    r.facts(HELLO)
    page = cue_reply(r.c, "status").splitlines()
    assert page[0].startswith("cuewrap: cues on")
    assert "bridge channel: 1 live, 7 facts, 1 hellos · dropped: bad json 2" in page
    assert "channels: terminal osc777 (TERM_PROGRAM=WezTerm); desktop off (over SSH);" in (
        next(line for line in page if line.startswith("channels:"))
    )
    i = page.index("tmux 3.4: Pi's pane is shown (1 client attached)")
    assert page[i - 2].startswith("clipboard guard: user")
    assert page[i - 1].startswith("sequence guard: own")
    assert [line for line in page[i + 1 :] if not line.startswith("to improve: ")] == []
    assert page[i + 1 :]  # advice for this session (no focus reports seen yet, in tmux)
    assert cue_reply(r.c, "on") == CUES_ON and cue_reply(r.c, "off") == CUES_OFF


def asked_while_tmux_is_asked() -> tuple[Rig, list[str]]:
    """``/cue`` from the bridge while a question to tmux is in flight: the rig, the replies."""
    r = Rig(tmux=True)
    r.facts(HELLO)
    assert r.tmux is not None
    r.tmux.busy = True
    replies: list[str] = []
    r.c.request("status", replies.append)
    return r, replies


def test_cue_page_waits_for_tmuxs_answer_in_flight_and_says_what_holds_then() -> None:
    """The keys of /cue asked tmux afresh (its last answer was old); Pi's request comes
    before tmux's answer: the page waits for it, and is made from what holds then."""
    r, replies = asked_while_tmux_is_asked()
    assert replies == [] and r.calls("FakeTmux", "when_answered") == [()]
    assert r.tmux is not None
    r.facts(CueToggle(enabled=False))  # meanwhile (/cue off)
    [answered] = r.tmux.waiting_for_answer
    answered(None)
    [page] = replies
    assert page.startswith("cuewrap: cues off"), page
    r.advance(5)
    assert len(replies) == 1  # once


def test_cue_page_waits_at_most_a_second_for_tmux() -> None:
    from cuewrap.wiring.cuepage import TMUX_WAIT

    r, replies = asked_while_tmux_is_asked()
    assert r.tmux is not None
    r.advance(TMUX_WAIT * 0.9)
    assert replies == []
    r.advance(TMUX_WAIT * 0.2)
    assert len(replies) == 1 and replies[0].startswith("cuewrap: cues on")
    r.tmux.waiting_for_answer[0](None)  # tmux answers after all: nothing more
    assert len(replies) == 1
    assert cue_reply(r.c, "off") == CUES_OFF  # the toggles never wait


def test_a_page_that_fails_after_waiting_still_answers_pi() -> None:
    r, replies = asked_while_tmux_is_asked()
    assert r.tmux is not None

    def broken(state: object) -> str:
        raise RuntimeError("page broke")

    r.c.page.page = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="page broke"):  # the loop logs it
        r.tmux.waiting_for_answer[0](None)
    assert replies == ["cuewrap: internal error (see the decision log)"]


def test_diagnostic_is_logged_and_shown_in_pi() -> None:
    r = Rig()
    # a Pi before agent_settled: what it lacks is said once
    r.facts(BridgeHello(1, "0.74.2", None, True, "sid-1", SESSION, 4242, None, frozenset()))
    r.facts(SessionStart("startup", "sid-1", SESSION))
    [text] = [d["text"] for d in r.logged("diagnostic")]
    assert r.bridge is not None and r.bridge.notices == [f"cuewrap: {text}"]


# -- presence --------------------------------------------------------------------------------
def test_focus_in_withdraws_the_cue_sent_while_away() -> None:
    r = Rig()
    away_in_a_run(r)
    r.facts(*SETTLE)
    [cue] = [c["cue_id"] for c in r.logged("cue")]
    r.clear()
    r.c.relay_event(FocusReport("in"))
    assert r.calls("FakeDelivery", "withdraw") == [(cue, "user returned")]
    assert r.calls("FakeDelivery", "set_mark") == [(None,)]


def test_the_relay_is_told_when_nobody_looks_and_when_someone_does_again() -> None:
    """docs/design.md#unseen-output: focus lost -> the relay gathers longer; back -> not."""
    r = Rig()
    told = r.unseen
    assert told == [False]  # at once: no report yet, someone may look
    r.c.relay_event(FocusReport("out"))
    r.c.relay_event(FocusReport("out"))  # no change, nothing told
    assert told == [False, True]
    r.facts(HELLO, SessionStart("startup", "sid-1", SESSION), *RUN)
    assert told == [False, True]
    r.c.relay_event(FocusReport("in"))
    assert told == [False, True, False]


def test_inside_tmux_a_hidden_window_is_unseen_output() -> None:
    r = Rig(tmux=True)
    told = r.unseen
    r.c.fact(presence_fact("away", "tmux"))  # what the tmux side's on_presence hands in
    r.c.fact(presence_fact("focused", "tmux"))
    assert told == [False, True, False]


def test_a_failing_unseen_hook_is_logged_and_the_session_goes_on() -> None:
    def broken(unseen: bool) -> None:
        if unseen:
            raise RuntimeError("boom")

    r = Rig(on_unseen=broken)
    r.c.relay_event(FocusReport("out"))
    assert [e["where"] for e in r.logged("internal_error")] == ["unseen"]
    r.c.relay_event(FocusReport("in"))
    assert r.logged("fact")[-1]["state"] == "focused"


def test_keystrokes_go_to_the_key_window_and_the_byte_path_decides_the_clipboard() -> None:
    r = Rig()
    d = r.decisions
    assert not d.clipboard(read=False, framed=False)  # no keystroke yet
    r.c.relay_event(relay_events.KeysRead())
    assert r.calls("FakeKeys") == [("key",)]
    d.typed()  # the relay tells its decisions itself: the controller is not asked
    assert d.clipboard(read=False, framed=False)  # right after it
    r.advance(2.5)
    assert not d.clipboard(read=False, framed=False)
    r.facts(HELLO, SessionStart("startup", "sid-1", SESSION), *RUN)
    assert r.rules[-1].running  # handed down after the step that began the run
    d.typed()
    assert not d.clipboard(read=False, framed=False)  # Pi: a run is streaming


def test_generic_mode_keystroke_tells_the_output_watch() -> None:
    r = Rig(pi_mode=False, bridge=False)
    r.c.relay_event(relay_events.KeysRead())
    assert r.calls("FakeActivity") == [("input",)]
    assert r.c.output_tap is r.activity


# -- tmux ------------------------------------------------------------------------------------
def test_inside_tmux_focus_reports_and_keys_go_to_the_tmux_side_not_the_engine() -> None:
    r = Rig(tmux=True)
    r.c.relay_event(FocusReport("out"))
    r.c.relay_event(relay_events.KeysRead())
    assert r.calls("FakeTmux") == [("focus", "away"), ("keystroke",)]
    assert r.logged("fact") == []  # the merged presence comes back from tmux


def test_tmux_view_change_is_a_presence_fact_and_cues_through_the_delivery() -> None:
    r = Rig(tmux=True)
    r.facts(HELLO, SessionStart("startup", "sid-1", SESSION), *RUN)
    r.c.fact(presence_fact("away", "tmux"))  # what build_controller's tmux side hands in
    assert r.logged("fact")[-1] == {"type": "Presence", "source": "tmux", "state": "away"}
    r.facts(*SETTLE)
    assert r.calls("FakeDelivery", "notify") == [("finished", "proj")]


# -- the screen source -----------------------------------------------------------------------
def test_screen_fact_cues_while_no_stronger_source_is_live() -> None:
    r = Rig(bridge=False)
    r.c.relay_event(FocusReport("out"))
    r.facts(ScreenActivity(True))
    assert not r.c.stronger_source_live()
    r.clear()
    r.facts(ScreenActivity(False))
    assert [n[0] for n in r.calls("FakeDelivery", "notify")] == ["finished"]
    assert r.calls("FakeScreen", "check") == [()]
    r.facts(ProgramStatus("working", "pi"))
    assert r.c.stronger_source_live()  # OSC 7501 trusted: the gate stops the screen worker


# -- timers ----------------------------------------------------------------------------------
def test_wake_effect_sets_one_timer_whose_tick_cues_after_idle() -> None:
    r = Rig(idle_after=60.0)
    r.facts(HELLO, SessionStart("startup", "sid-1", SESSION), *RUN)
    r.facts(UiPromptStart("confirm"))  # present (no focus reports): no cue, a wake-up
    assert r.calls("FakeDelivery", "notify") == []
    r.advance(59.0)
    assert r.calls("FakeDelivery", "notify") == []
    r.advance(1.5)
    assert r.calls("FakeDelivery", "notify") == [("needs-input", "proj")]
    r.clear()
    r.facts(UiPromptEnd("confirm"))  # the wait ended: its cue withdrawn, no more wake-ups
    assert [w[1] for w in r.calls("FakeDelivery", "withdraw")] == ["wait ended (ui_prompt_end)"]
    r.advance(3600.0)
    assert r.logged("fact") == [
        {"type": "UiPromptEnd", "option": None, "source": "bridge", "fact_kind": "confirm"}
    ]


# -- job control -----------------------------------------------------------------------------
def test_stop_and_continue_publish_the_state_and_reapply_mark_and_progress() -> None:
    r = Rig()
    r.facts(HELLO, *RUN)
    r.clear()
    r.c.relay_event(relay_events.JobChange("stopped"))
    assert r.calls("FakePublisher", "publish")[-1][0] == ("stopped",)
    assert r.calls("FakeDelivery", "reapply_mark") == []
    r.c.relay_event(relay_events.JobChange("continued"))
    assert r.calls("FakeDelivery", "reapply_mark") == [()]
    assert r.calls("FakeDelivery", "reapply_progress") == [()]
    assert r.calls("FakePublisher", "publish")[-1][0] == ("working",)


def test_child_title_goes_to_the_delivery_for_the_mark() -> None:
    r = Rig()
    r.c.relay_event(TitleChange("pi - proj", False))
    assert r.calls("FakeDelivery", "child_title") == [("pi - proj",)]


def test_a_title_posing_as_cuewraps_mark_is_content_in_pi_mode_only() -> None:
    """Pi's title never begins with a mark: one that does is content (docs/terminal-guard.md),
    never marked or put back; in generic mode it may be an inner cuewrap's, shown as it is."""
    r = Rig()
    r.c.relay_event(TitleChange("[?] owned", False))
    assert r.calls("FakeDelivery", "child_title") == [("[?] owned", "controls")]
    g = Rig(pi_mode=False)
    g.c.relay_event(TitleChange("[?] π - work", False))
    assert g.calls("FakeDelivery", "child_title") == [("[?] π - work",)]


# -- the end ---------------------------------------------------------------------------------
def test_exit_drains_the_bridge_before_the_exit_fact_and_close_closes_every_part() -> None:
    r = Rig(tmux=True)
    r.facts(HELLO)
    r.clear()
    r.c.relay_event(relay_events.ChildExited(0, None))
    drained = r.journal.index(("FakeBridge", "drain_all"))
    exit_fact = next(i for i, e in enumerate(r.journal) if e[1] == "fact")
    assert drained < exit_fact
    assert r.logged("fact")[0]["type"] == "ChildExit"
    assert r.calls("FakePublisher", "publish")[-1][0] == ("exited",)
    r.clear()
    r.c.finish(3.0)
    closed = [e[0] for e in r.journal if e[1] == "close"]
    # tmux's side and its processes first (a window option set still in flight ends before
    # the publisher unsets it), then the registry entry
    assert closed[:3] == ["FakeTmux", "FakeReaper", "FakePublisher"], closed
    every = ["FakePublisher", "FakeKeys", "FakeScreen", "FakeDelivery", "FakeBridge"]
    assert sorted(closed) == sorted([*every, "FakeTmux", "FakeReaper"])
    r.clear()
    r.facts(ChildExit(0, None))  # closed: nothing more is stepped
    assert r.journal == []


def test_the_end_waits_while_any_part_has_something_in_flight_then_closes() -> None:
    """``finish`` asks each part that can be busy (delivery, tmux's side, the publisher) and
    runs the loop until none is, then closes: a part still busy keeps the others open."""
    r = Rig(tmux=True)
    asked: list[str] = []

    def busy_for(name: str, n: int) -> property:
        def read(self: object) -> bool:
            asked.append(name)
            return asked.count(name) <= n

        return property(read)

    type(r.tmux).busy = busy_for("tmux", 2)  # type: ignore[assignment]
    type(r.publisher).busy = busy_for("publisher", 4)  # type: ignore[assignment]
    try:
        r.clear()
        r.c.finish(0.01)  # the rig's clock stands still: only the parts end the wait
    finally:
        type(r.tmux).busy = False  # type: ignore[assignment]
        type(r.publisher).busy = False  # type: ignore[assignment]
    # each was asked again until it said it was done (any() stops at the first busy one)
    assert asked.count("publisher") >= 5 and asked.count("tmux") >= 3, asked
    assert [e[0] for e in r.journal if e[1] == "close"][:3] == [
        "FakeTmux",
        "FakeReaper",
        "FakePublisher",
    ]


def test_a_part_that_fails_to_close_is_logged_and_every_other_part_still_closes() -> None:
    """Before, a part's close that raised (the keys' window, the screen…) left every part
    after it open, the bridge's socket among them."""
    r = Rig(tmux=True)
    r.tmux.fail.add("close")  # type: ignore[union-attr]
    r.keys.fail.add("close")
    r.clear()
    r.c.close()
    closed = [e[0] for e in r.journal if e[1] == "close"]
    every = ["FakeTmux", "FakeReaper", "FakePublisher", "FakeKeys", "FakeScreen", "FakeDelivery"]
    assert closed == [*every, "FakeBridge"], closed
    errors = [e[2]["where"] for e in r.journal if e[:2] == ("log", "internal_error")]
    assert errors == ["tmux.close", "keys.close"], errors


def test_a_key_reaches_each_part_that_cares_in_order() -> None:
    r = Rig(pi_mode=False, tmux=True)
    r.clear()
    r.c.relay_event(relay_events.KeysRead())
    told = [e[:2] for e in r.journal if e[0] in ("FakeActivity", "FakeKeys", "FakeTmux")]
    assert told == [("FakeActivity", "input"), ("FakeKeys", "key"), ("FakeTmux", "keystroke")]


# -- the session's state ---------------------------------------------------------------------
def test_state_changes_are_published_with_presence_and_mark() -> None:
    r = Rig()
    r.facts(HELLO)
    r.clear()
    r.facts(*RUN)
    assert ("working",) in [p[0] for p in r.calls("FakePublisher", "publish")]
    away_in_a_run(r)
    r.clear()
    r.facts(*SETTLE)
    assert r.calls("FakePublisher", "publish")[-1] == (("finished",), "away", MARK_COMPLETED)


# -- the terminal's answers ------------------------------------------------------------------
def test_terminal_answers_remake_the_channel_plan_once_complete() -> None:
    r = Rig()
    r.c.terminal_answer(TerminalAnswer("xtversion", "kitty(0.36.1)"))
    assert r.calls("FakeDelivery", "answered") == []
    r.c.relay_event(TerminalAnswer("da1", ""))
    assert r.calls("FakeDelivery", "answered") == [("kitty(0.36.1)",)]
    assert [c["state"] for c in r.logged("terminal_answers")] == ["answered"]
    assert len(r.logged("channels")) == 2  # at start and again with the answers
    r.c.terminal_answer(None)  # the query's time is up: nothing more
    assert len(r.calls("FakeDelivery", "answered")) == 1


# -- failing open ----------------------------------------------------------------------------
def test_a_failing_effector_is_logged_and_the_other_effects_still_happen() -> None:
    r = Rig()
    away_in_a_run(r)
    r.delivery.fail.add("notify")
    r.clear()
    r.facts(*SETTLE)
    errors = r.logged("internal_error")
    assert [e["where"] for e in errors] == ["effect:Notify"]
    assert "notify broke" in errors[0]["error"]
    assert r.calls("FakeDelivery", "set_mark") == [(MARK_COMPLETED,)]  # the mark still went
    assert r.calls("FakePublisher", "publish")  # and the state


def test_a_failing_publisher_is_logged_and_the_session_goes_on() -> None:
    r = Rig()
    r.publisher.fail.add("publish")
    r.facts(HELLO, *RUN)
    assert [e["where"] for e in r.logged("internal_error")] == ["publish"] * 3
    assert r.c.state.run is not None  # the engine went on


def test_a_failing_output_watch_fact_never_reaches_the_relay() -> None:
    r = Rig(pi_mode=False, bridge=False)
    r.delivery.fail.add("set_mark")
    r.publisher.fail.add("publish")
    r.c.child_fact(ChildExit(0, None))  # the hot path's call: must not raise
    assert "publish" in [e["where"] for e in r.logged("internal_error")]


# -- the builder (cueside.build_controller): real parts, none that starts a process ----------
def built(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    pi_mode: bool,
    settings: Settings | None = None,
    **env: str,
) -> tuple[Controller, Journal, list[dict[str, str]]]:
    """A controller from the real builder; tmux is never really asked: ``query_tmux`` is
    replaced by a recorder (the list it returns)."""
    asked: list[dict[str, str]] = []

    def query_tmux(env: dict[str, str], timeout: float = 1.0) -> None:
        asked.append(env)

    monkeypatch.setattr("cuewrap.deliver.terminal.query_tmux", query_tmux)
    journal: Journal = []
    loop = Loop()
    env = {"TERM": "xterm-256color", "XDG_RUNTIME_DIR": str(tmp_path), **env}
    ctx = Context(loop, settings or Settings(), Log(journal), env)
    command = ["pi"] if pi_mode else ["/usr/bin/aider"]
    mode = mode_of(command, no_bridge=False, preset=ctx.settings.generic.preset)
    plan = Plan(mode, size=(24, 80))
    controller = build_controller(ctx, plan, Edge(lambda data: None))
    return controller, journal, asked


def test_builder_generic_mode_hands_in_the_output_watch_and_the_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, journal, asked = built(tmp_path, monkeypatch, pi_mode=False)
    assert isinstance(c.output_tap, OutputWatch) and c.output_tap is c.activity
    assert c.screen is None and c.bridge is None and c.tmux is None
    assert asked == []  # outside tmux nothing asks it
    [generic] = [e[2] for e in journal if e[:2] == ("log", "generic")]
    assert generic["preset"] == "aider"
    assert c.state.config.generic and c.state.config.app == generic["app"]
    kinds = [e[1] for e in journal if e[0] == "log"]
    assert kinds.index("generic") < kinds.index("channels")  # as before the rebuild
    entries = sorted(p.suffix for p in (tmp_path / "cuewrap").iterdir())
    # the registry entry, written by the publisher; the control socket (cuewrap mute, and
    # answers to a program's own dialogs: docs/answering.md)
    assert entries == [".json", ".sock"]
    assert c.answerer is not None and c.control is not None
    c.close()
    assert list((tmp_path / "cuewrap").iterdir()) == []


def test_builder_pi_mode_hands_in_the_screen_gate_and_the_parts_call_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, journal, _ = built(tmp_path, monkeypatch, pi_mode=True)
    assert isinstance(c.output_tap, ScreenGate) and c.activity is None
    journal.clear()
    c.relay_event(relay_events.KeysRead())  # the key window's first key: told at once
    assert [e[2]["type"] for e in journal if e[:2] == ("log", "fact")] == ["Keystroke"]
    c.close()


def test_builder_asks_tmux_once_and_only_when_something_goes_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # TMUX without TMUX_PANE: the tmux side does not start (no control client is spawned)
    c, journal, asked = built(tmp_path, monkeypatch, pi_mode=True, TMUX="/tmp/t,1,0")
    assert len(asked) == 1 and asked[0]["TMUX"] == "/tmp/t,1,0"
    [tmux] = [e[2] for e in journal if e[:2] == ("log", "tmux")]
    assert tmux == {"state": "not started", "why": "TMUX or TMUX_PANE is not set"}
    assert c.tmux is None
    cue_reply(c, "status")  # /cue: nothing asks tmux again
    assert len(asked) == 1
    c.close()
    off = Settings()._replace(notify=Settings().notify._replace(terminal="off"))
    c, _, asked = built(tmp_path, monkeypatch, pi_mode=True, settings=off, TMUX="/tmp/t,1,0")
    assert asked == []  # notify.terminal = off: nothing is sent through tmux's passthrough
    c.close()


# -- the tracker's policies: the clipboard guard and the child's notifications ---------------
def test_removed_clipboard_write_is_logged_counted_on_the_page_and_said_in_pi_once() -> None:
    r = Rig()
    r.facts(HELLO)
    assert not r.decisions.clipboard(read=False, framed=False)  # the tracker asks: no key
    event = r.decisions.explain(ClipboardSequence(read=False, passed=False, size=120))
    r.c.relay_event(event)  # as the relay hands it on, with its reason
    [rec] = r.logged("clipboard")
    assert rec["passed"] is False and rec["why"] == "no keystroke in the last 2 s"
    assert r.bridge is not None and len(r.bridge.notices) == 1
    assert "removed a clipboard write (OSC 52, 120 bytes)" in r.bridge.notices[0]
    assert r.decisions.clipboard(read=True, framed=False) is False  # a read never passes
    r.c.relay_event(r.decisions.explain(ClipboardSequence(read=True, passed=False, size=9)))
    assert len(r.bridge.notices) == 1  # said once
    page = cue_reply(r.c, "status")
    assert "removed 2 sequences" in page and "(9 bytes)" in page


def test_generic_mode_child_notification_consumed_only_while_away() -> None:
    r = Rig(pi_mode=False, bridge=False, reemit=True)
    assert not r.decisions.consume("osc777")  # the user is looking (present, not idle)
    r.c.relay_event(FocusReport("out"))  # the step hands the byte path new rules
    assert r.decisions.consume("osc777")
    r.clear()
    r.c.relay_event(ChildNotification("osc777", "aider", "Waiting for input", True))
    [translated] = r.logged("translation")
    assert translated["source"] == "osc777" and translated["terminal"] == "osc777"
    assert [n[0] for n in r.calls("FakeDelivery", "notify")] == ["needs-input"]


def test_a_failing_consume_policy_lets_the_notification_pass() -> None:
    class Broken(OutputRules):
        def takes_out(self, protocol: str, now: float) -> bool:
            raise RuntimeError("boom")

    r = Rig(pi_mode=False, bridge=False, reemit=True)
    r.decisions.set_rules(Broken())
    assert r.decisions.consume("osc777") is False  # the notification passes as it is


def test_rules_that_cannot_be_made_leave_the_last_ones_on_the_byte_path() -> None:
    r = Rig(pi_mode=False, bridge=False, reemit=True)
    r.c.relay_event(FocusReport("out"))
    last = r.rules[-1]
    assert last.takes_out("osc777", 0.0)
    r.c.state = None  # type: ignore[assignment]  # the engine's state broken
    r.c._down.rules(r.c.state)
    assert "rules" in [e["where"] for e in r.logged("internal_error")]
    assert r.decisions.rules is last
