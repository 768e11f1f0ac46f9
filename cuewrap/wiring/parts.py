"""The cue side's parts as the controller tells them: one small protocol, one order.

``Parts`` is what the controller is handed (``cueside.build_controller`` builds it; the unit
tests hand in fakes). ``told`` turns it into one sequence of ``CuePart``: each part with the
four things the controller ever tells a part — the user typed, a fact was stepped, a step is
over, the session ends — and the one thing it asks at the end (is something of yours still in
flight?); the controller folds over that sequence instead of naming each part. A hook a part
does not care for is left out of the fold (``hooked``), so the keystroke's fan-out calls the
parts' own methods and nothing else.

The one order (``told``), read forwards by the folds and backwards by ``close``:

- a key: the activity watch (output right after it is its echo), the answerer (its token
  dies at the first key), the engine's key window, tmux (its view may be stale);
- after a step: the screen gate checked (pyte stops once a stronger source is live), the byte
  path told (``wiring/handdown.py``), tmux asked to watch while a change of presence would
  count, the session's state published;
- at the end, whether anything is in flight: delivery (a desktop notification, a
  ``notify.command``), the publisher (tmux's window option being set), tmux (a question);
- closing, last first: tmux (a window option set still in flight is ended before the
  publisher unsets it) and its reaper, the publisher (the registry entry goes), the key
  window, the answerer, the activity watch, the control socket, the ``blocked`` check,
  attention, the screen gate, the wake-up timer, delivery, the bridge last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from cuewrap import facts as F
from cuewrap.engine import glance
from cuewrap.engine.lookahead import waits_on_presence
from cuewrap.engine.status import driving_source

if TYPE_CHECKING:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.control import ControlServer
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.config import Settings
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine import EngineConfig, EngineState
    from cuewrap.generic.activity import OutputWatch
    from cuewrap.screen.gate import ScreenGate
    from cuewrap.sessions.publish import Publisher
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.wiring.attention import Attention
    from cuewrap.wiring.blocked import BlockedCheck
    from cuewrap.wiring.freshview import FreshView
    from cuewrap.wiring.keystrokes import KeyWindow
    from cuewrap.workers import Reaper


@dataclasses.dataclass(frozen=True)
class Parts:
    """What the controller is handed (``cueside.build_controller`` builds them) and the
    engine's config for the session (it depends on what delivery found: ``engine_config``)."""

    config: EngineConfig
    delivery: Delivery  # every channel of a cue
    publisher: Publisher  # the session's state for `cuewrap ls`, tmux's window option, --events
    keys: KeyWindow  # keystrokes for the engine, at most one a second
    bridge: BridgeServer | None = None  # Pi's extension, when its channel is listening
    screen: ScreenGate | None = None  # the screen source (Pi mode)
    activity: OutputWatch | None = None  # output activity and quiet (generic mode)
    tmux: TmuxSide | None = None  # inside tmux, once started: presence and delivery through it
    fresh: FreshView | None = None  # inside tmux: a fact whose cue depends on presence waits
    reaper: Reaper | None = None  # ends tmux's commands in flight (and the publisher's)
    answerer: Answerer | None = None  # answers to Pi's dialogs from elsewhere (Pi mode)
    control: ControlServer | None = None  # the control socket `cuewrap answer` talks to
    blocked: BlockedCheck | None = None  # Pi mode without the bridge: `blocked` needs a dialog
    attention: Attention | None = None  # quiet hours, do-not-disturb, mute (docs/attention.md)


class CuePart(Protocol):
    """One part of the cue side as the controller tells it."""

    where: str  # what a failed close is logged as

    def typed(self) -> None:
        """The user typed (one read of their input)."""

    def fact(self, fact: F.Fact, state: EngineState) -> None:
        """``fact`` was stepped (``state`` is after it), before its effects are performed."""

    def after_step(self, before: EngineState, state: EngineState) -> None:
        """A step and its effects are over."""

    def close(self) -> None:
        """The session ends."""

    def busy(self) -> bool:
        """Something of this part's is still in flight (the session's end waits for it)."""


def _nothing() -> None:
    pass


def _never() -> bool:
    return False


def _no_fact(fact: F.Fact, state: EngineState) -> None:
    pass


def _no_step(before: EngineState, state: EngineState) -> None:
    pass


class Part:
    """A ``CuePart`` made of a part's own methods, bound once here (a fold calls them
    directly); each hook it does not care for does nothing and is left out of the folds."""

    __slots__ = ("after_step", "busy", "close", "fact", "typed", "where")

    def __init__(
        self,
        where: str,
        *,
        typed: Callable[[], None] = _nothing,
        fact: Callable[[F.Fact, EngineState], None] = _no_fact,
        after_step: Callable[[EngineState, EngineState], None] = _no_step,
        close: Callable[[], None] = _nothing,
        busy: Callable[[], bool] = _never,
    ) -> None:
        self.where = where
        self.typed = typed
        self.fact = fact
        self.after_step = after_step
        self.close = close
        self.busy = busy


_IDLE: dict[str, object] = {
    "typed": _nothing,
    "fact": _no_fact,
    "after_step": _no_step,
    "close": _nothing,
    "busy": _never,
}


def hooked(parts: Sequence[CuePart], hook: str) -> tuple[Callable[..., Any], ...]:
    """Each part's ``hook``, in the parts' order, without those that do nothing."""
    return tuple(told for told in (getattr(p, hook) for p in parts) if told is not _IDLE[hook])


def told(
    made: Parts,
    log: DecisionLog,
    settings: Settings,
    *,
    down: CuePart,
    wake: CuePart,
) -> tuple[CuePart, ...]:
    """The parts in the one order (the module's docstring): the byte path's ``down`` (told
    after each step) and the wake-up timer (``wake``, cancelled at the close) among them."""
    log_error = log.error
    parts: list[CuePart] = []
    if made.bridge is not None:
        parts.append(Part("bridge.close", close=made.bridge.close))
    parts.append(Part("delivery.close", close=made.delivery.close, busy=made.delivery.pending))
    parts.append(wake)
    if made.screen is not None:
        gate = made.screen
        parts.append(Part("screen.close", after_step=lambda b, s: gate.check(), close=gate.close))
    parts.append(down)
    for where, part in (
        ("attention.close", made.attention),
        ("blocked.close", made.blocked),
        ("control.close", made.control),
    ):
        if part is not None:
            parts.append(Part(where, close=part.close))
    if made.activity is not None:
        parts.append(Part("activity.close", typed=made.activity.input, close=made.activity.close))
    if made.answerer is not None:
        answerer = made.answerer

        def answering(fact: F.Fact, state: EngineState) -> None:
            try:  # before the effects: a wait's notification may wait for its token
                answerer.fact(fact, state.wait_keys)
            except Exception as exc:
                log_error("answerer", exc)

        parts.append(
            Part("answerer.close", typed=answerer.typed, fact=answering, close=answerer.close)
        )
    parts.append(Part("keys.close", typed=made.keys.key, close=made.keys.close))
    side = made.tmux
    if side is not None:  # tmux is asked while a change of presence would count
        parts.append(Part("tmux.watch", after_step=lambda b, s: side.watch(waits_on_presence(s))))
    parts.append(_publishing(made.publisher, settings, log))
    if side is not None:
        if made.reaper is not None:  # its commands in flight (the window option's)
            parts.append(Part("reaper.close", close=made.reaper.close))
        parts.append(
            Part("tmux.close", typed=side.keystroke, close=side.close, busy=lambda: side.busy)
        )
    return tuple(parts)


def _publishing(publisher: Publisher, settings: Settings, log: DecisionLog) -> CuePart:
    """The session's state for the overview after each step: only what changed goes out
    (``sessions/publish.py``); a failure is logged and the session goes on."""
    marks = settings.notify.title_marks

    def publish(before: EngineState, s: EngineState) -> None:
        try:
            mark = s.mark_shown if marks else None
            changes = glance.changes(before, s)
            publisher.publish(
                changes, session_label(s), glance.presence(s), mark, driving_source(s)
            )
        except Exception as exc:
            log.error("publish", exc)

    return Part(
        "publisher.close", after_step=publish, close=publisher.close, busy=lambda: publisher.busy
    )


def session_label(state: EngineState) -> str:
    """The session's name as a cue and the overview say it."""
    return state.session_name or state.config.label
