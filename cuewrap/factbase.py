"""The base of the typed facts (``cuewrap.facts``, where every fact is described) and the two
facts the output tracker reads from the child's output: a program status report (OSC 7501)
and a progress report (OSC 9;4). Kept apart so that the relay, set up while the child boots,
does not create every fact's dataclass (docs/architecture.md#start-up-the-child-first);
``cuewrap.facts`` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Source = Literal[
    "bridge", "osc7501", "child", "screen", "exit", "focus", "keys", "tmux", "job", "attention"
]
PresenceState = Literal["focused", "away", "unknown"]


@dataclass(frozen=True)
class Fact:
    """Base class of all facts (carries no fields of its own)."""


@dataclass(frozen=True)
class ProgramStatus(Fact):
    """``ESC ] 7501 ; state=…:app=…[:kind=…][:msg=…] ST``. ``msg`` is private: only an
    ``error`` report's is kept, decoded, as ``summary`` (Pi's first line of the error), and a
    ``blocked`` one's (what is asked: Claude Code's "approve Bash: <command>"), used only with
    ``privacy.body = "summary"``; the decision log keeps its length."""

    state: str  # working | done | error | idle | blocked | clear
    app: str | None = None
    kind: str | None = None
    has_msg: bool = False
    summary: str | None = None
    source: Source = "osc7501"


@dataclass(frozen=True)
class ChildProgress(Fact):
    """The child wrote ``OSC 9 ; 4 ; state …`` (Pi with ``terminal.showTerminalProgress``)."""

    state: int
    source: Source = "child"
