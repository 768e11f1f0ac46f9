"""What every part of one session shares, in one value: the loop (and so the clock), the
settings, the decision log and the environment.

Built once by the composition root (``wiring/session.py``) and handed to each part that needs
more than one of them, instead of the same four parameters threaded by hand through every
constructor and builder (docs/architecture.md, "The composition root"). Imported before the
child is spawned: no ``typing``, no ``dataclasses`` (``records.NamedTuple``).
"""

from __future__ import annotations

from cuewrap.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from cuewrap.config import Settings
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.loop import Loop


class Context(NamedTuple):
    """One session's shared parts. ``env`` is the child's environment (what cuewrap reads
    from it, and what it adds before the spawn)."""

    loop: Loop
    settings: Settings
    log: DecisionLog
    env: Mapping[str, str]

    @property
    def clock(self) -> Callable[[], float]:
        """The session's one clock: the loop's (tests give the loop a fake one)."""
        return self.loop.clock
