"""The output tracker's policies, decided on the byte path: which of the child's notifications
are taken out, which clipboard sequences reach the terminal (docs/terminal-guard.md,
docs/generic-mode.md).

The tracker asks in the middle of a scan (``consume``, ``clipboard``: the
``NoticePolicy`` and ``ClipboardPolicy`` it is built with). Nothing here calls up into the
cue side: the answers come from the rules the cue side handed down last
(:class:`cuewrap.engine.output.OutputRules`, :meth:`OutputDecisions.set_rules` after each
engine step that changed them), the user's last keystroke (the relay says it:
:meth:`typed`) and the clock, read only when a sequence asks. Until the cue side is built the
rules are the engine's at start (``initial``): the user counts as looking, nothing is taken
out, a clipboard write passes only right after a keystroke.

The reason for each clipboard decision is kept (at most ``KEEP``) and paired with the
tracker's event once the scan is over (:meth:`explain`): the decision log says why.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Callable

from cuewrap.engine.output import OutputRules
from cuewrap.term.clipboard import ClipboardSequence

KEEP = 16  # reasons kept for events still to come (a sequence that never ended loses its own)
NOT_ASKED = "already on its way (not asked)"


class OutputDecisions:
    def __init__(self, clock: Callable[[], float], rules: OutputRules) -> None:
        self._clock = clock
        self.rules = rules
        self._key_at = -math.inf  # the user's last keystroke
        self._why: deque[str] = deque(maxlen=KEEP)

    @classmethod
    def initial(cls, clock: Callable[[], float], clipboard: str, pi: bool) -> OutputDecisions:
        """Before the cue side's first rules: the engine's at start (``pi``: the session's
        mode is Pi's)."""
        return cls(clock, OutputRules(clipboard=clipboard, pi=pi))

    def set_rules(self, rules: OutputRules) -> None:
        """The cue side's rules after its last step (handed down, never asked for)."""
        self.rules = rules

    def typed(self) -> None:
        """The user typed (the relay read their input)."""
        self._key_at = self._clock()

    # -- the tracker's policies ------------------------------------------------------------
    def consume(self, protocol: str) -> bool:
        """Take this notification of the child out of the output now?"""
        try:
            return self.rules.takes_out(protocol, self._clock())
        except Exception:  # fail open: the notification passes as it is
            return False

    def clipboard(self, read: bool, framed: bool) -> bool:
        """Does this clipboard sequence reach the terminal? An error removes it (a missed
        copy is harmless, a leaked one is not)."""
        try:
            passed, why = self.rules.clipboard_passes(read, framed, self._clock() - self._key_at)
        except Exception:
            passed, why = False, "error"
        self._why.append(why)
        return passed

    def explain(self, event: ClipboardSequence) -> ClipboardSequence:
        """``event`` with the reason of its decision (a kitty write's data and end were never
        asked: their start's reason was given)."""
        if event.what in ("osc5522 data", "osc5522 end"):
            return event
        why = self._why.popleft() if self._why else NOT_ASKED
        return dataclasses.replace(event, why=why)
