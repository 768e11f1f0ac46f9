"""How an answer's keys go in (docs/answering.md), once the answer is claimed and the screen
was read again: a strategy of each program's (``Program.typing``, ``answerer.py``). Most
programs take them in one write, then their dialog has ``CLOSE_WITHIN`` seconds to close
(``OneWrite``); opencode's are moves checked on the screen, then Enter
(``opencode.MovesThenEnter``). A strategy acts through the shell (``Answerer.run``, ``write``,
``close_within``, ``look_after``); what is decided stays the machine's (``machine.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from cuewrap.answer import machine as M

if TYPE_CHECKING:
    from cuewrap.answer import book as B
    from cuewrap.answer import dialog as D
    from cuewrap.loop import Loop

CLOSE_WITHIN = M.CLOSE_WITHIN  # seconds the dialog has to close after the keys


class Reads(Protocol):
    def read(self, kind: str, lines: list[str] | None) -> D.Dialog | None: ...


class Shell(Protocol):
    """What a strategy may use of the answerer (``answerer.Answerer``)."""

    loop: Loop
    machine: M.Machine
    book: B.Book
    type_keys: Callable[[bytes], str | None] | None

    @property
    def program(self) -> Reads: ...
    def run(self, actions: list[M.Action]) -> None: ...
    def write(self, claim: B.Claim, data: bytes) -> bool: ...
    def close_within(self, seconds: float) -> None: ...
    def look_after(self, seconds: float, then: Callable[[list[str] | None], None]) -> None: ...


class Typing(Protocol):
    """How a program's answer goes in (see the module's docstring)."""

    def verified(self, shell: Shell, claim: B.Claim, lines: list[str] | None) -> None:
        """The screen, read again before the keys (``lines``; None: not read)."""

    def keys_in(self, shell: Shell) -> None:
        """The keys went in: whatever keeps the time until the dialog closes."""


class OneWrite:
    """The keys in one write, if the screen still shows the claimed dialog; then the dialog
    has ``CLOSE_WITHIN`` seconds to close."""

    def verified(self, shell: Shell, claim: B.Claim, lines: list[str] | None) -> None:
        seen = shell.program.read(claim.ticket.kind, lines)
        shell.run(shell.machine.verified(claim, seen, can_type=shell.type_keys is not None))

    def keys_in(self, shell: Shell) -> None:
        shell.close_within(CLOSE_WITHIN)


ONE_WRITE = OneWrite()
