"""A test hook, private to cuewrap: ``CUEWRAP_DEBUG_FAULT=sink,tracker,focus`` makes those
parts raise, to prove cuewrap fails open (used by the test suite). Imported only when the
variable is set."""

from __future__ import annotations

from cuewrap.relay.events import RelayEvent
from cuewrap.term.focus import FocusFilter, Item
from cuewrap.term.tracker import OutputTracker, Scan


class Fault(Exception):
    """Raised on purpose."""


def raising_sink(event: RelayEvent) -> None:
    raise Fault("injected fault")


class RaisingFocus(FocusFilter):
    def feed(self, data: bytes) -> list[Item]:
        raise Fault("injected fault")


class RaisingTracker(OutputTracker):
    def feed(self, data: bytes) -> Scan:
        raise Fault("injected fault")
