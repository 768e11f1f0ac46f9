"""The token of the open answerable wait, and what may be done with it (pure: no clock, no I/O).

One session has at most one live ticket: the token of the dialog open now, bound to the wait
and to the dialog as cuewrap read it (title, options, selection). It is single-use and dies
when its dialog closes by any means, another opens, the user types in the session, at
``/reload``, ``/new`` and exit (``kill``). A claim takes it: from then on the token is burnt
whatever happens, and the answer is in flight until the dialog closes or the edge gives up.
The edge makes the tokens (``secrets``) and keeps the time.
"""

from __future__ import annotations

import hmac
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from cuewrap.answer.dialog import Dialog, resolve_choice

# the reasons an answer is refused (the one line ``cuewrap answer`` prints)
NO_SESSION = "no such session"
NOTHING = "nothing to answer"
# the program waits on a dialog cuewrap could not read (several questions, a multi-select, one
# taller than the screen, a layout not known): no token was ever issued for it
NOT_READ = "the dialog open now is not one cuewrap can read: answer it in the program"
STALE = "stale token"
NO_OPTION = "no such option"
NOT_SHOWN = "the screen does not show that dialog"
NOT_CLOSED = "the dialog did not close"
BUSY = "an answer is already on its way"
UNSAFE = "the input is in the middle of a key sequence or a paste"

BURNT = 64  # spent tokens remembered (a replay of one says "stale token")


def took_line(asked: int, took: int | None, program: str = "Pi") -> str:
    """The line ``cuewrap answer`` prints once the dialog closed after option ``asked`` was
    typed (1-based): the option the program says it closed with (``took``: 0 none, None not
    said). Numbers only: a label is not the command's to print."""
    if took is None:
        return f"option {asked} typed; the dialog closed (which option it took is not reported)"
    if took == asked:
        return f"{program} took option {asked}"
    if took == 0:
        return f"{program} closed the dialog without an option, not {asked}"
    return f"{program} took option {took}, not {asked}"


class Ticket(NamedTuple):
    token: str
    wait: int  # the answerer's count of answerable waits
    kind: str  # confirm | select | ask
    dialog: Dialog


class Claim(NamedTuple):
    ticket: Ticket
    option: int  # the chosen option, 0-based


class Book:
    def __init__(self) -> None:
        self.current: Ticket | None = None
        self.in_flight: Claim | None = None
        self._burnt: deque[str] = deque(maxlen=BURNT)

    def issue(self, ticket: Ticket) -> None:
        """A new answerable dialog: its ticket replaces any other (that token dies)."""
        self.kill()
        self.current = ticket

    def kill(self) -> Ticket | None:
        """The live token dies (its dialog closed, another opened, a key, reload, exit)."""
        ticket, self.current = self.current, None
        if ticket is not None:
            self._burnt.append(ticket.token)
        return ticket

    def claim(
        self,
        token: str | None,
        choice: str,
        allow: Callable[[Ticket, int], str | None] | None = None,
    ) -> Claim | str:
        """Take the live ticket for ``choice`` (``token`` None: by the session's pid). A
        refusal is one of the reasons above; a bad choice leaves the token alive, and so does
        one ``allow(ticket, index)`` refuses (its reason: an option not to be chosen so)."""
        ticket = self.current
        if self.in_flight is not None:
            return BUSY
        if token is not None:
            if ticket is None or not hmac.compare_digest(
                token.encode("utf-8", "replace"), ticket.token.encode()
            ):
                return STALE
        elif ticket is None:
            return NOTHING
        assert ticket is not None
        index = resolve_choice(ticket.dialog.options, choice)
        if index is None:
            return NO_OPTION
        refused = allow(ticket, index) if allow is not None else None
        if refused is not None:
            return refused
        self.kill()
        claim = Claim(ticket, index)
        self.in_flight = claim
        return claim

    def settle(self) -> Claim | None:
        """The answer in flight is over (the dialog closed, or the edge gave up)."""
        claim, self.in_flight = self.in_flight, None
        return claim
