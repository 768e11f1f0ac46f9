"""A test hook, private to cuewrap: ``CUEWRAP_DEBUG_FAULT=sink,tracker,focus`` makes those
parts raise, to prove cuewrap fails open; ``build:<part>`` makes the cue side's build fail
right before that part (keys, delivery, bridge, publisher, activity, screen, answer, tmux,
controller; ``wired``: after the controller, in the session). Used by the test suite.

The variable is read here only, once, by the composition root (``faults_of``); the ``Faults``
value goes to whatever injects a fault. Imported right after the spawn (no ``typing``); the
parts that raise (``wiring/_raising.py``) are imported only when a fault names them."""

from __future__ import annotations

from cuewrap.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

VARIABLE = "CUEWRAP_DEBUG_FAULT"


class Fault(Exception):
    """Raised on purpose."""


class Faults(NamedTuple):
    """The faults asked for: ``names``, the variable's comma-separated items; ``on``: the
    variable is set (not empty), even to no fault cuewrap knows (the host terminal is then
    not asked what it is: its answers would take the place of a focus filter that raises)."""

    names: frozenset[str] = frozenset()
    on: bool = False

    def raises(self, part: str) -> bool:
        """Does ``part`` (sink, tracker, focus) raise on purpose?"""
        return part in self.names

    def before(self, part: str) -> None:
        """``build:<part>``: the cue side's build fails right before ``part``
        (``wiring/cueside.py``), to prove that what was built before is closed again."""
        if f"build:{part}" in self.names:
            raise Fault(f"injected fault before {part}")


NO_FAULTS = Faults()


def faults_of(env: Mapping[str, str]) -> Faults:
    """The faults the environment asks for (none without the variable)."""
    raw = env.get(VARIABLE, "")
    return Faults(frozenset(filter(None, raw.split(","))), bool(raw)) if raw else NO_FAULTS
