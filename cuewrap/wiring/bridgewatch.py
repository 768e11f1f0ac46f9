"""A lost bridge (docs/bridge-protocol.md, "A lost bridge"): noticed, said, survived.

After Pi's first frame its own titles, status reports, progress and queries reach the terminal
only through the bridge (docs/terminal-guard.md, "Whose sequence is it"). When the connection
that carries them ends while Pi runs, this watch tells the relay to go back to the frame rule
(``Reactions.provenance_lost``: the strictest rule that still lets Pi's own title through; Pi's
extension writes its own to the terminal again, the same way) and, when a new runtime's
connection says hello (a ``/reload`` that works), to read the stream as content again
(``Reactions.provenance_back``).

How the connection ended decides when:

- without a ``session_shutdown`` before its end (the extension failed, its socket broke) or
  ended by cuewrap (it refused one of Pi's own writes): lost at once;
- after a ``session_shutdown`` other than ``quit`` (``/reload``, ``/new``, …): a new runtime
  connects within a second; lost only when none did within :data:`GRACE` seconds (a failed
  ``/reload``), the stream staying content meanwhile;
- after ``session_shutdown quit``: Pi is leaving, nothing is lost.

Said once per loss: at once in the decision log (the relay's ``provenance`` record, ``lost``
with its ``why``); inside Pi (``ctx.ui.notify``) and on ``/cue`` once a bridge is back, since
only a bridge can say anything inside Pi.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.wording import in_pi
from cuewrap.facts import BridgeGone, BridgeHello, Fact, SessionShutdown
from cuewrap.loop import Loop, Timer
from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    from cuewrap.relay.relay import RelayControls

SAY_AFTER = 1.0  # seconds after the new runtime's hello: the notice inside Pi
GRACE = 3.0  # seconds a new runtime has to connect after a session_shutdown (Pi's extension: 4)

WHY_FAILED = (
    "the connection ended without Pi's session_shutdown (an extension error, or a failed socket)"
)
WHY_REFUSED = "cuewrap refused one of Pi's own writes and ended the connection"


class BridgeWatch:
    """Sees every bridge fact before the controller (``on_fact``)."""

    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        relay: RelayControls | None,
        on_fact: Callable[[Fact], None],
        say: Callable[[str], bool],
    ) -> None:
        self._loop = loop
        self._log = log
        self._relay = relay
        self._on_fact = on_fact
        self._say = say  # a line inside Pi, through the current connection
        self._shutdown: str | None = None  # the reason of the last session_shutdown
        self._timer: Timer | None = None  # the grace after a session_shutdown
        self._say_timer: Timer | None = None
        self._lost = ""  # "HH:MM:SS (why)" of a loss not said inside Pi yet
        self.note = ""  # what /cue says

    def fact(self, fact: Fact) -> None:
        try:
            self._see(fact)
        except Exception as exc:  # fail open: the fact still goes on
            self._log.error("bridge_watch", exc)
        self._on_fact(fact)

    def close(self) -> None:
        self._cancel()
        if self._say_timer is not None:
            self._say_timer.cancel()
            self._say_timer = None

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _see(self, fact: Fact) -> None:
        if isinstance(fact, SessionShutdown):
            self._shutdown = fact.reason
        elif isinstance(fact, BridgeGone):
            reason, self._shutdown = self._shutdown, None
            if fact.why == "refused":
                self._lose(WHY_REFUSED)
            elif reason is None:
                self._lose(WHY_FAILED)
            elif reason != "quit":
                self._cancel()
                why = f"no new connection {GRACE:g} s after session_shutdown {reason}"
                self._timer = self._loop.call_later(GRACE, lambda: self._lose(why))
        elif isinstance(fact, BridgeHello):
            self._cancel()
            if self._relay is not None and self._relay.provenance_back():
                self._back()

    def _lose(self, why: str) -> None:
        self._timer = None
        if self._relay is None or not self._relay.provenance_lost(why):
            return  # no provenance to lose (no mark yet, or Pi has exited)
        at = time.strftime("%H:%M:%S")
        self._lost = f"{at} ({why})"
        self.note = f"lost at {at}: {why}; Pi's own titles and reports go by the frame rule"

    def _back(self) -> None:
        at = time.strftime("%H:%M:%S")
        lost, self._lost = self._lost, ""
        self.note = f"lost at {lost}, back at {at}"
        if lost:
            text = in_pi(
                f"the bridge to cuewrap was lost at {lost}; it is back: Pi's own titles and"
                " status reports come through it again"
            )
            # once Pi's new runtime has its UI (a notice during its reload is not shown)
            self._say_timer = self._loop.call_later(SAY_AFTER, lambda: self._said(text))

    def _said(self, text: str) -> None:
        self._say_timer = None
        self._say(text)
