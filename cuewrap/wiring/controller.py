"""The cue side of a session: facts in, engine step, effects handed to the edge.

Sources (relay events through ``relay_event``, the bridge, the screen gate, the output watch,
tmux) call ``fact()``; the pure engine decides; each effect goes to its effector
(``wiring/effectors.py``, a table by effect type, like the engine's own dispatch):
``deliver.delivery.Delivery`` (title marks, terminal and desktop notifications and their
withdrawal, ``notify.command``, progress, keep-awake), the decision log, a wake-up timer, or
a notice in Pi. A relay event is read by its row of the event table (``wiring/eventtable.py``:
its record, its fact, its reaction). The parts are told through one protocol
(``wiring/parts.py``: typed, fact, after_step, close, busy), in one order: the controller folds over
them (after each step the screen gate is told, so pyte stops once a stronger source is live,
the byte path gets what changed, ``wiring/handdown.py``, and the session's state goes to the
publisher). Every call in here is on the one loop and fails open: an exception is logged and
the Pi session goes on.

The controller builds nothing: its constructor calls the factory it is given
(``cueside.build_controller``'s, which asks tmux, or the unit tests', which hand in fakes:
``tests/test_controller.py``) with itself, so each part gets the controller's methods it calls
in its own constructor and the controller gets the parts back — nothing is assigned
afterwards, no forwarder stands in for a controller not built yet. Downward it calls only what
it is given: ``on_unseen`` (the relay's gathering time), ``on_rules`` (the byte path's
decisions: ``relay/decisions.py``, handed a new :class:`OutputRules` after each step that
changes them — the byte path never calls up for a decision) and ``on_focus``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cuewrap import facts as F
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine import Event, initial_state, is_eligible, step
from cuewrap.engine.effects import Eligibility
from cuewrap.engine.output import OutputRules
from cuewrap.wiring.cuepage import CuePage
from cuewrap.wiring.effectors import Effectors
from cuewrap.wiring.eventtable import EVENTS, IGNORED, read
from cuewrap.wiring.handdown import HandDown
from cuewrap.wiring.hostanswers import HostAnswers
from cuewrap.wiring.parts import Part, Parts, hooked, told

if TYPE_CHECKING:
    from cuewrap.context import Context
    from cuewrap.relay.events import RelayEvent
    from cuewrap.relay.relay import OutputTap
    from cuewrap.term.answers import TerminalAnswer


class Controller:
    def __init__(
        self,
        ctx: Context,
        *,
        parts: Callable[[Controller], Parts],
        on_unseen: Callable[[bool], None] | None = None,
        on_rules: Callable[[OutputRules], None] | None = None,
        on_focus: Callable[[bool], None] | None = None,
    ) -> None:
        """``parts`` makes the parts, given this controller (a part calls it only from the
        loop, which does not run meanwhile: a fact before the end of this constructor is
        dropped as after ``close``). ``on_unseen``: told now and at each change whether
        nobody looks at the output (docs/design.md#unseen-output); ``on_rules``: the byte
        path's rules, now and after each step that changes them; ``on_focus``: the child
        (generic mode, its preset asks: opencode) told whether the user looks, when it turns
        focus reporting on and at each change (``Reactions.tell_focus``)."""
        self.loop = ctx.loop
        self.settings = ctx.settings
        self.log: DecisionLog = ctx.log
        self.env: Mapping[str, str] = dict(ctx.env)
        self._closed = True  # until the parts are made
        made = parts(self)
        self._closed = False
        self.delivery = made.delivery
        self.publisher = made.publisher
        self.keys = made.keys
        self.bridge = made.bridge
        self.screen = made.screen
        self.activity = made.activity
        self.tmux = made.tmux
        self.fresh = made.fresh
        self._reaper = made.reaper  # tmux's commands in flight (closed with the parts)
        self.answerer = made.answerer
        self.control = made.control
        self.blocked = made.blocked
        self.attention = made.attention
        self.state = initial_state(made.config)
        # Pi mode (the engine's config says: built from the session's mode, cueside.py)
        self.pi = not made.config.generic
        self._effectors = Effectors(
            self.loop, self.log, made, step=self.fact, state=lambda: self.state,
            closed=lambda: self._closed,
        )  # fmt: skip
        self._down = HandDown(
            self.log, self.state, clipboard=self.settings.guard.clipboard,
            on_unseen=on_unseen, on_rules=on_rules, on_focus=on_focus,
        )  # fmt: skip
        self._host = HostAnswers(
            self.log, self.settings, self.delivery, bridge=made.bridge is not None
        )
        self.page = CuePage(self.loop, self.settings, self.env, made)
        each = told(
            made, self.log, self.settings,
            down=Part("handdown", after_step=self._down.after_step),
            wake=Part("wake.cancel", close=self._effectors.cancel_wake),
        )  # fmt: skip
        # the folds, fixed once (``wiring/parts.py``): who hears a key, a fact, a step's end
        self.on_key = hooked(each, "typed")
        self._on_fact = hooked(each, "fact")
        self._after_step = hooked(each, "after_step")
        self._in_flight = hooked(each, "busy")  # what the session's end waits for
        # what ``close`` ends, last part first, each on its own: one that fails is logged
        # and the others are still ended
        self._closing = contextlib.ExitStack()
        for part in each:
            self._closing.callback(self._end, part.where, part.close)
        self._host.log_channels()
        self._down.start(self.state)

    def terminal_answer(self, answer: TerminalAnswer | None) -> None:
        """An answer of the host terminal to cuewrap's start-up query; None: no more will come
        (it did not answer in time). The plan is made again once the query is closed."""
        self._host.answer(answer)

    @property
    def output_tap(self) -> OutputTap | None:
        """What sees every output chunk: the screen gate (Pi mode) or the output watch."""
        if self.screen is not None:
            return self.screen
        return self.activity

    # -- sources ----------------------------------------------------------------------------
    def relay_event(self, event: RelayEvent) -> None:
        """What the relay saw, read by its row of the event table (``wiring/eventtable.py``):
        ``first`` may take it (a key: the parts that hear one told, and nothing more)."""
        row = EVENTS.get(event.__class__, IGNORED)
        first = row.first
        if first is None or not first(self, event):
            read(self, event, row)

    def fact(self, fact: Event) -> None:
        """Any fact (or Tick) from any source: one engine step, effects performed. Inside
        tmux a fact whose cue depends on presence first waits for tmux's answer of now, and
        the facts after it with it (``wiring/freshview.py``)."""
        if self._closed:
            return
        if self.fresh is not None:
            try:
                if self.fresh.offer(self.state, fact, self.loop.clock()):
                    return
            except Exception as exc:  # fail open: stepped as it is
                self.log.error("freshview", exc)
        before = self.state
        self.state, effects = step(before, fact, self.loop.clock())
        if isinstance(fact, F.Fact):
            for tell in self._on_fact:  # before the effects
                tell(fact, self.state)
        perform = self._effectors.perform
        for effect in effects:
            try:
                perform(effect)
            except Exception as exc:  # fail open, per effect
                self.log.error(f"effect:{type(effect).__name__}", exc)
        for after in self._after_step:
            after(before, self.state)

    def tell_focus(self) -> None:
        """The child asked to be told whether the user looks (``HandDown.focus``)."""
        self._down.focus(self.state)

    def child_fact(self, fact: Event) -> None:
        """A fact from the output watch (called from the relay's hot path): never raises."""
        try:
            self.fact(fact)
        except Exception as exc:
            self.log.error("child_fact", exc)

    def eligible(self, eligibility: Eligibility) -> bool:
        """May a cue still be delivered (asked right before each asynchronous delivery)?"""
        return is_eligible(self.state, eligibility)

    def stronger_source_live(self) -> bool:
        """The bridge or OSC 7501 is live: the screen source is not needed."""
        return self.state.bridge_live or "osc7501" in self.state.trusted

    # -- /cue --------------------------------------------------------------------------------
    def request(self, action: str, reply: Callable[[str], None]) -> None:
        """``/cue ACTION`` from the bridge: ``reply`` gets the text (``wiring/cuepage.py``)."""
        self.page.reply(action, lambda: self.state, reply)

    # -- teardown ----------------------------------------------------------------------------
    def finish(self, grace: float) -> None:
        """After the child is gone: let pending desktop notifications complete, then close."""
        try:
            deadline = self.loop.clock() + grace
            while any(busy() for busy in self._in_flight):
                left = deadline - self.loop.clock()
                if left <= 0:
                    break
                self.loop.run_once(max_timeout=left)
        except Exception as exc:
            self.log.error("finish", exc)
        self.close()

    def close(self) -> None:
        """Every part ended, in the one order (``wiring/parts.py``), each on its own: one that
        fails is logged and the others are still ended."""
        if self.fresh is not None:  # what waits for tmux is decided by its last answer
            self._end("freshview.close", self.fresh.close)
        self._closed = True
        self._closing.close()

    def _end(self, where: str, end: Callable[[], None]) -> None:
        try:
            end()
        except Exception as exc:
            self.log.error(where, exc)
