"""Inside tmux, a fact whose cue depends on presence waits for tmux's answer of now.

cuewrap keeps no control-mode client on the user's tmux server (docs/tmux-and-ssh.md#presence):
what it knows of the pane is tmux's last answer, which can be seconds old. A run that settles
the moment after the user switched windows would be judged by the old answer (rule 6: a run
that settled in front of the user gives nothing when they later leave): no reminder. So a fact
that would give another cue with the user away than with the user looking
(``engine.lookahead.depends_on_presence``) is held while tmux is asked, and so is every fact
that comes after it, in order; the answer's presence is stepped first, then the held facts.
A view younger than ``TmuxSide.stale`` allows is taken as it is. An answer that does not come
within ``HOLD_MAX`` releases the facts anyway (decided by the last view, as before the hold):
nothing is lost, at worst a cue is judged by an older view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cuewrap.engine.lookahead import depends_on_presence
from cuewrap.facts import Presence

if TYPE_CHECKING:
    from cuewrap.engine import EngineState, Event
    from cuewrap.loop import Loop, Timer
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.tmux.view import PaneView

HOLD_MAX = 1.0  # seconds a fact waits for tmux's answer at most
MAX_HELD = 10_000  # facts held at once at most (the rest go on undelayed, counted)


class FreshView:
    def __init__(
        self,
        loop: Loop,
        side: TmuxSide,
        step: Callable[[Event], None],
        log: Callable[..., None],
    ) -> None:
        self.loop = loop
        self.side = side
        self.step = step  # the controller's fact(): steps a released fact
        self.log = log
        self.held: list[Event] | None = None
        self.holds = 0  # facts that waited for an answer (for the tests and the log)
        self.overflow = 0
        self._timer: Timer | None = None
        self._releasing = False
        self._since = 0.0  # when the facts began to wait

    def offer(self, state: EngineState, event: Event, now: float) -> bool:
        """True: ``event`` is held (stepped later, in order); False: step it now."""
        if self._releasing or isinstance(event, Presence):
            return False  # presence is what the held facts wait for
        if self.held is not None:
            if len(self.held) >= MAX_HELD:
                self.overflow += 1
                return False
            self.held.append(event)
            return True
        if not self.side.stale or not depends_on_presence(state, event, now):
            return False
        self.held = [event]
        self.holds += 1
        self._since = self.loop.clock()
        self._timer = self.loop.call_later(HOLD_MAX, lambda: self._release("no answer in time"))
        self.side.refresh(self._answered)  # tmux not run: released at once (stepped)
        return True

    def _answered(self, view: PaneView | None) -> None:
        self._release("answered" if view is not None else "tmux could not be asked")

    def _release(self, why: str) -> None:
        held, self.held = self.held, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if held is None:
            return
        waited = round((self.loop.clock() - self._since) * 1000, 1)
        self.log("tmux_hold", facts=len(held), state=why, waited_ms=waited)
        self._releasing = True
        try:
            for event in held:
                self.step(event)
        finally:
            self._releasing = False

    def close(self) -> None:
        """The session ends: what is held is stepped now (decided by the last view)."""
        self._release("closing")
