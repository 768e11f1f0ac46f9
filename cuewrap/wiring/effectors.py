"""The engine's effects performed at the edge: one effector per effect type (``EFFECTORS``, a
table by type, like the engine's own dispatch ``reducer._HANDLERS``).

``deliver.delivery.Delivery`` takes the title marks, terminal and desktop notifications and
their withdrawal, ``notify.command``, progress and keep-awake; the decision log the records;
the one wake-up timer is kept here (a ``Tick`` fact when it fires); a diagnostic is also said
inside Pi through the bridge. The controller performs each effect on its own
(``Controller.fact``): one that raises is logged and the others still happen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cuewrap.engine import Tick, is_eligible, wording
from cuewrap.engine.effects import (
    Diagnostic,
    Effect,
    Eligibility,
    Escalate,
    KeepAwake,
    Notify,
    Progress,
    Record,
    SetMark,
    Wake,
    Withdraw,
)
from cuewrap.wiring.parts import session_label

if TYPE_CHECKING:
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.engine import EngineState, Event
    from cuewrap.loop import Loop, Timer
    from cuewrap.wiring.parts import Parts


class Effectors:
    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        made: Parts,
        *,
        step: Callable[[Event], None],
        state: Callable[[], EngineState],
        closed: Callable[[], bool],
    ) -> None:
        """``step``: the controller's ``fact`` (the wake-up's ``Tick``); ``state``: the
        engine's now; ``closed``: has the session ended (a notification that waited is then
        dropped)."""
        self.loop = loop
        self.log = log
        self.delivery = made.delivery
        self.bridge = made.bridge
        self.answerer = made.answerer
        self._step = step
        self._state = state
        self._closed = closed
        self._wake: Timer | None = None

    def eligible(self, eligibility: Eligibility) -> bool:
        """May a cue still be delivered (asked right before each asynchronous delivery)?"""
        return is_eligible(self._state(), eligibility)

    def _label(self) -> str:
        return session_label(self._state())

    def perform(self, effect: Effect) -> None:
        EFFECTORS[type(effect)](self, effect)

    def record(self, effect: Record) -> None:
        self.log.write(effect.kind, **effect.fields)

    def set_mark(self, effect: SetMark) -> None:
        self.delivery.set_mark(effect.mark)

    def notify(self, effect: Notify) -> None:
        answerer = self.answerer
        if effect.kind == "needs-input" and answerer is not None and answerer.reading:
            # its token is a moment away: the notification carries it (docs/answering.md)
            def later() -> None:
                if self._closed():
                    return
                if not self.eligible(effect.eligibility):
                    self.delivery.record(effect.cue_id, "all", "dropped-ineligible",
                                         "stale while the dialog was read")  # fmt: skip
                    return
                self._deliver(effect)

            answerer.when_ready(later)
            return
        self._deliver(effect)

    def _deliver(self, effect: Notify) -> None:
        self.delivery.notify(effect, eligible=self.eligible, session=self._label())

    def withdraw(self, effect: Withdraw) -> None:
        self.delivery.withdraw(effect)

    def escalate(self, effect: Escalate) -> None:
        self.delivery.escalate(effect.note, eligible=self.eligible, session=self._label())

    def progress(self, effect: Progress) -> None:
        self.delivery.progress(effect.on)

    def set_wake(self, effect: Wake) -> None:
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        if effect.at is not None:
            self._wake = self.loop.call_at(effect.at, self._tick)

    def _tick(self) -> None:
        self._wake = None
        self._step(Tick())

    def cancel_wake(self) -> None:
        """The session ends: no more wake-ups."""
        if self._wake is not None:
            self._wake.cancel()

    def keep_awake(self, effect: KeepAwake) -> None:
        self.delivery.keep_awake(effect.hold)

    def diagnostic(self, effect: Diagnostic) -> None:
        self.log.write("diagnostic", text=effect.text)
        if self.bridge is not None:
            self.bridge.push_notice(wording.in_pi(effect.text))


# one effector per effect type (the engine's own dispatch is ``reducer._HANDLERS``)
EFFECTORS: dict[type, Callable[[Effectors, Any], None]] = {
    Record: Effectors.record,
    SetMark: Effectors.set_mark,
    Notify: Effectors.notify,
    Withdraw: Effectors.withdraw,
    Escalate: Effectors.escalate,
    Progress: Effectors.progress,
    Wake: Effectors.set_wake,
    KeepAwake: Effectors.keep_awake,
    Diagnostic: Effectors.diagnostic,
}
