"""What the cue side tells the byte path after each engine step (downward calls only).

Three things, each handed in as a callable at construction and each told only when it
changed: whether nobody looks at the output (``on_unseen``: the relay's gathering time,
docs/design.md#unseen-output); the byte path's rules (``on_rules``: ``relay/decisions.py``,
a new :class:`OutputRules` after each step that changes them — the byte path never calls up
for a decision); and the child whether the user looks (``on_focus``: generic mode, when its
preset asks, opencode; ``Relay.tell_focus``), when it turns focus reporting on and at each
change. Each fails open: an exception is logged and the byte path keeps what it had.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cuewrap.engine.output import OutputRules, output_rules, unseen

if TYPE_CHECKING:
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.engine import EngineState


class HandDown:
    """Told after each step (:meth:`after_step`, in the controller's fold over its parts:
    ``wiring/parts.py``)."""

    def __init__(
        self,
        log: DecisionLog,
        state: EngineState,
        *,
        clipboard: str,
        on_unseen: Callable[[bool], None] | None = None,
        on_rules: Callable[[OutputRules], None] | None = None,
        on_focus: Callable[[bool], None] | None = None,
    ) -> None:
        """``state``: the engine's at start (nothing is told yet: :meth:`start`; its config
        says whether this is Pi mode); ``clipboard``: the setting ``guard.clipboard``."""
        self.log = log
        self._clipboard = clipboard
        self._pi = not state.config.generic  # Pi mode
        self._on_unseen = on_unseen
        self._on_rules = on_rules
        self._on_focus = on_focus
        self._unseen = not unseen(state)  # the last value told (told by ``start``)
        self._looking: bool | None = None  # what the child was last told (None: nothing yet)
        self._rules: OutputRules | None = None  # the last rules handed down

    def start(self, state: EngineState) -> None:
        """Told at once: whether anybody looks, the rules at start."""
        self.unseen(state)
        self.rules(state)

    def after_step(self, before: EngineState, state: EngineState) -> None:
        self.unseen(state)
        self.rules(state)
        if self._on_focus is not None and state.looking != self._looking:
            self.focus(state)

    def unseen(self, state: EngineState) -> None:
        now = unseen(state)
        if now != self._unseen and self._on_unseen is not None:
            self._unseen = now
            try:
                self._on_unseen(now)
            except Exception as exc:
                self.log.error("unseen", exc)

    def focus(self, state: EngineState) -> None:
        """The child is told whether the user looks (``on_focus``): the truth of presence,
        so that a program that notifies only while unfocused does so exactly while away."""
        if self._on_focus is None:
            return
        self._looking = state.looking
        try:
            self._on_focus(self._looking)
        except Exception as exc:
            self.log.error("focus", exc)

    def rules(self, state: EngineState) -> None:
        """The byte path's rules as this state makes them, when they changed
        (``engine.output``)."""
        if self._on_rules is None:
            return
        try:
            rules = output_rules(state, self._clipboard, self._pi)
            if rules != self._rules:
                self._rules = rules
                self._on_rules(rules)
        except Exception as exc:  # the byte path keeps the last rules
            self.log.error("rules", exc)
