"""A test hook, private to cuewrap: ``CUEWRAP_DEBUG_FAULT=sink,tracker,focus`` makes those
parts raise, to prove cuewrap fails open; ``build:<part>`` makes the cue side's build fail
right before that part (keys, delivery, bridge, publisher, activity, screen, answer, tmux,
controller; ``wired``: after the controller, in the session). Used by the test suite.
Imported only when the variable is set."""

from __future__ import annotations

from collections.abc import Mapping

from cuewrap.relay.events import RelayEvent
from cuewrap.term.focus import FocusFilter, Item
from cuewrap.term.tracker import OutputTracker, Scan
from cuewrap.wiring.pending import PendingCueSide


class Fault(Exception):
    """Raised on purpose."""


class RaisingCueSide(PendingCueSide):
    """The relay's cue side, raising on every event (the relay reports it and goes on)."""

    def relay_event(self, event: RelayEvent) -> None:
        raise Fault("injected fault")


class RaisingFocus(FocusFilter):
    def feed(self, data: bytes) -> list[Item]:
        raise Fault("injected fault")


class RaisingTracker(OutputTracker):
    def feed(self, data: bytes) -> Scan:
        raise Fault("injected fault")


def fail_before(part: str, env: Mapping[str, str]) -> None:
    """``CUEWRAP_DEBUG_FAULT=build:<part>``: the cue side's build fails right before ``part``
    (cuewrap.wiring.cueside), to prove that what was built before is closed again."""
    if f"build:{part}" in env.get("CUEWRAP_DEBUG_FAULT", "").split(","):
        raise Fault(f"injected fault before {part}")
