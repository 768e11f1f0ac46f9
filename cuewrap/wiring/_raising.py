"""The parts that raise on purpose (``CUEWRAP_DEBUG_FAULT``: ``wiring/_faults.py``), imported
only when a fault names them: the relay's cue side, the focus filter, the output tracker."""

from __future__ import annotations

from cuewrap.relay.events import RelayEvent
from cuewrap.term.focus import FocusFilter, Item
from cuewrap.term.tracker import OutputTracker, Scan
from cuewrap.wiring._faults import Fault
from cuewrap.wiring.pending import PendingCueSide


class RaisingCueSide(PendingCueSide):
    """The relay's cue side, raising on every event (the relay reports it and goes on)."""

    def relay_event(self, event: RelayEvent) -> None:
        raise Fault("injected fault")


class RaisingFocus(FocusFilter):
    def passes(self, data: bytes) -> bool:
        return False  # every read goes through ``feed``, which raises

    def feed(self, data: bytes) -> list[Item]:
        raise Fault("injected fault")


class RaisingTracker(OutputTracker):
    def feed(self, data: bytes) -> Scan:
        raise Fault("injected fault")
