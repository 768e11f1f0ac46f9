"""Answering one session's dialogs as a state machine (pure: no clock, no I/O; docs/answering.md).

The answerer (``answerer.py``) is its shell: it owns the timers, the screen reader, the key
writer and the replies, turns what happens into the events below, and runs the actions each
event returns, in order. The phases of the open dialog::

    IDLE ─opened─> READING ─seen: the dialog, agreed─> ANSWERABLE ─request─> CLAIMED
                     │ seen nothing LOOKS times,     │ a key: the      │ verified,
                     │ a key, no reader              │ token dies      v wrote
                     └─────────────────────────────> SHUT <─finish─── TYPED

    end (the dialog closed, another opened, reload, exit): from every phase back to IDLE;
    a claim that fails (the screen changed, a key before the keys, not at a safe point,
    not closed by the deadline or on another option): a Finish, not ok, to SHUT

A program's strategy (``answerer.Program``) turns its facts into these events (``opened``,
``closed``, ``over``, ``end``); ``by_screen``: the dialog gone from the screen closed too
(``deadline``, ``shown``).

``SHUT``: the dialog is open but gets no (more) token: it was not read (``why``), the user typed,
or its one answer is over. Refusals are transitions with a reason (``book.py``'s lines): a
request that cannot claim the token is ``Refuse``; a claim that does not end with the dialog
closed on the option asked for is a ``Finish`` that is not ok. The token is single-use, dies at
the user's first key, and is issued only for a dialog read on the screen that agrees with what
the program said; the keys go only after the screen was read again and shows that very dialog.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cuewrap.answer import book as B
from cuewrap.answer import dialog as D

LOOKS = 20  # reads before cuewrap gives up on a dialog (it is then not answerable)
UNREAD = "the screen does not show that dialog"  # why a dialog got no token: not read
GONE = "the screen model is gone"
NO_START = "the dialog reader did not start"
KEY = "you pressed a key"
ANSWERED = "its answer is over"  # why a dialog gets no token after its one answer
CLOSE_WITHIN = 2.0  # seconds the dialog has to close after the keys
NOT_GONE = "the program did not report that it goes on, and the dialog is still shown"


class Phase(enum.Enum):
    IDLE = "idle"  # no answerable dialog open
    READING = "reading"  # the screen is read for it: its token may come in a moment
    ANSWERABLE = "answerable"  # its token is live
    CLAIMED = "claimed"  # an answer took the token: the screen is read again before the keys
    TYPED = "typed"  # the keys went in: the dialog must close on the option asked for
    SHUT = "shut"  # open, but no (more) token for it (``Machine.why``)


# -- the actions: what the shell does, in order ------------------------------------------------
@dataclass(frozen=True)
class StartReader:
    """Start a screen reader for dialog ``wait``, then report ``Machine.started``."""

    wait: int


@dataclass(frozen=True)
class Look:
    """Read the screen for dialog ``wait`` (the first read, ``tries`` 0, after the program's
    first delay, the others after ``LOOK_EVERY``), then report ``Machine.seen``."""

    wait: int
    tries: int


@dataclass(frozen=True)
class StopReader:
    """Read no more: the pending look cancelled, the reader stopped."""


@dataclass(frozen=True)
class Issued:
    """A token was issued (the shell notes when: an answer may wait for the dialog to settle)."""

    ticket: B.Ticket


@dataclass(frozen=True)
class Changed:
    """The published wait changed (a token issued, spent or dead)."""


@dataclass(frozen=True)
class Release:
    """Notifications waiting for the token go now (with it, or without)."""


@dataclass(frozen=True)
class Log:
    """One ``answer`` record of the decision log."""

    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Refuse:
    """Reply to the request at hand: refused, ``why`` (the line ``cuewrap answer`` prints);
    ``option``: its number (1-based) when it named one (for the record, never a label)."""

    why: str
    option: int | None


@dataclass(frozen=True)
class Claimed:
    """The request took the token: its reply waits for the end of the answer (``Finish``)."""

    claim: B.Claim


@dataclass(frozen=True)
class Verify:
    """Read the screen again (once the dialog settled), then report ``Machine.verified``."""

    claim: B.Claim


@dataclass(frozen=True)
class Type:
    """Write the keys that pick the claim's option, then report ``Machine.wrote``."""

    claim: B.Claim


@dataclass(frozen=True)
class AwaitClose:
    """The first keys went in: the dialog has its time to close (then ``Machine.fail``)."""


@dataclass(frozen=True)
class CheckGone:
    """Read the screen: is the claim's dialog gone from it? Then report ``Machine.shown``
    (``final``: at the deadline, still shown is a failure)."""

    claim: B.Claim
    final: bool


@dataclass(frozen=True)
class Finish:
    """The answer in flight is over: its record, and the reply (``line``: what ``cuewrap
    answer`` prints; ``why``: the record's); ``option`` 1-based; ``typed``: keys went in;
    ``took``: the option the dialog closed with, as the program said (0 none)."""

    ok: bool
    line: str
    why: str
    option: int | None
    typed: bool
    took: int | None = None


Action = (
    StartReader | Look | StopReader | Issued | Changed | Release | Log | Refuse | Claimed
    | Verify | Type | AwaitClose | CheckGone | Finish
)  # fmt: skip


def _option_number(choice: str, ticket: B.Ticket | None) -> int | None:
    """The number a refused request named (for the record): its digits, or a label's number."""
    text = choice.strip()
    if text.isdecimal() and len(text) <= 4:
        return int(text)
    if ticket is not None:
        found = D.resolve_choice(ticket.dialog.options, choice)
        return found + 1 if found is not None else None
    return None


class Machine:
    """One session's answering, one dialog at a time. ``program``: who closes the dialog (the
    line of an answer); ``twice``: a token only once the same dialog was read twice in a row
    (a read may land in the middle of one of the program's frames); ``by_screen``: a dialog
    gone from the screen closed (a program that does not always say so)."""

    def __init__(
        self, program: str = "Pi", *, twice: bool = False, by_screen: bool = False
    ) -> None:
        self.program = program
        self.twice = twice
        self.by_screen = by_screen
        self.book = B.Book()
        self.phase = Phase.IDLE
        self.wait = 0  # the count of answerable dialogs opened (the open one's number)
        self.kind = ""  # the open dialog's kind
        self.check: str | None = None  # what the program said of it (Pi: the title check)
        self.why = ""  # SHUT: why it gets no token; TYPED: why the screen is read no more
        self._candidate: D.Dialog | None = None  # ``twice``: the dialog read once

    @property
    def open(self) -> bool:
        return self.phase is not Phase.IDLE

    # -- the dialog ------------------------------------------------------------------------
    def opened(self, kind: str, check: str | None) -> list[Action]:
        """An answerable dialog opened (the program said so, and the engine opened its wait)."""
        acts = self.end("another dialog opened") if self.open else []
        self.wait += 1
        self.phase, self.kind, self.check, self.why = Phase.READING, kind, check, ""
        self._candidate = None
        return [*acts, StopReader(), StartReader(self.wait)]

    def started(self, ok: bool) -> list[Action]:
        """The reader started (it has the output kept so far), or did not."""
        if self.phase is not Phase.READING:
            return []
        return [Look(self.wait, 0)] if ok else self.give_up(NO_START)

    def seen(
        self, wait: int, tries: int, dialog: D.Dialog | None, screen: bool, token: str
    ) -> list[Action]:
        """Look ``tries`` of dialog ``wait`` read ``dialog`` (None: not the one the program said;
        ``screen`` False: no screen to read). ``token``: a fresh one, the edge's."""
        if self.phase is not Phase.READING or wait != self.wait:
            return []  # over, given up, or answerable already
        if dialog is not None and self.twice and dialog != self._candidate and tries + 1 < LOOKS:
            self._candidate = dialog  # once more, to be sure it is drawn whole
            return [Look(wait, tries + 1)]
        if dialog is not None:
            ticket = B.Ticket(token, wait, self.kind, dialog)
            self.book.issue(ticket)
            self.phase = Phase.ANSWERABLE
            count, selected = len(dialog.options), dialog.selected + 1
            record = Log({"state": "answerable", "wait": wait, "dialog": self.kind,
                          "count": count, "selected": selected})  # fmt: skip
            return [Issued(ticket), record, Changed(), Release()]
        if screen and tries + 1 < LOOKS:
            return [Look(wait, tries + 1)]
        return self.give_up(UNREAD if screen else GONE)

    def give_up(self, why: str) -> list[Action]:
        """The dialog being read gets no token: read no more, notifications go without one."""
        return self._shut(why) if self.phase is Phase.READING else []

    def key(self) -> list[Action]:
        """The user typed in this session: the token dies, an answer not yet typed fails, no
        token comes for this dialog any more."""
        phase = self.phase
        if phase is Phase.IDLE or phase is Phase.SHUT:  # every key, mostly: nothing built
            return []
        acts = self._kill(KEY)
        if self.phase is Phase.CLAIMED:
            acts += self._finish(False, B.STALE, KEY)
        return [*acts, *self._shut(KEY)]

    def closed(self, took: int | None = None) -> list[Action]:
        """The dialog closed; ``took``: the option it closed with, when the program said it
        (Pi's bridge: ``ui_prompt_end``'s ``option``; 0 none)."""
        acts: list[Action] = []
        claim = self.book.in_flight
        if claim is not None and self.phase is Phase.TYPED:
            asked = claim.option + 1
            line = B.took_line(asked, took, self.program)
            if took is None or took == asked:
                acts = self._finish(True, line, "the dialog closed", took)
            else:
                acts = self._finish(False, line, "another option was taken", took)
        return [*acts, *self.end("the dialog closed")]

    def end(self, why: str) -> list[Action]:
        """The dialog is over (it closed, another opened, reload, exit): an answer in flight has
        failed, the token dies."""
        acts: list[Action] = []
        if self.book.in_flight is not None:
            typed = self.phase is Phase.TYPED
            acts += self._finish(False, B.NOT_CLOSED if typed else B.NOT_SHOWN, why)
        acts += self._kill(why)
        self.phase, self.why = Phase.IDLE, ""
        return [*acts, Release(), StopReader()]

    # -- an answer -------------------------------------------------------------------------
    def request(
        self,
        token: str | None,
        choice: str,
        allow: Callable[[B.Ticket, int], str | None],
        unusable: str | None = None,
    ) -> list[Action]:
        """An answer: ``choice`` by ``token`` (None: by the session's pid); ``allow(ticket,
        index)``: the program's word on choosing that option so; ``unusable``: why no keys can
        be made now (Pi's keybindings file)."""
        if unusable is not None:
            return [Refuse(unusable, None)]
        current = self.book.current
        claim = self.book.claim(token, choice, allow)
        if isinstance(claim, str):
            if claim == B.NOTHING and self.phase is Phase.SHUT and self.why == UNREAD:
                claim = B.NOT_READ  # a wait stands, but on a dialog cuewrap cannot read
            return [Refuse(claim, _option_number(choice, current))]
        self.phase = Phase.CLAIMED
        return [Changed(), Claimed(claim), Verify(claim)]

    def verified(
        self, claim: B.Claim, seen: D.Dialog | None, *, screen: bool = True, can_type: bool = True
    ) -> list[Action]:
        """The screen read again right before the keys shows ``seen`` (``screen`` False: no
        screen model; ``can_type`` False: no input to type into)."""
        if self.book.in_flight is not claim:
            return []  # over meanwhile (a key, the dialog closed)
        if not screen:
            return self._finish(False, B.NOT_SHOWN, "no screen model")
        if seen is None or seen != claim.ticket.dialog:
            return self._finish(False, B.NOT_SHOWN, "the screen changed")
        if not can_type:
            return self._finish(False, B.NOT_SHOWN, "no input to type into")
        return [Type(claim)]

    def wrote(self, claim: B.Claim, why: str | None) -> list[Action]:
        """The keys were written (``why`` None), or refused by the input (not at a safe point)."""
        if self.book.in_flight is not claim:
            return []
        if why is not None:
            return self._finish(False, why, why)
        if self.phase is Phase.TYPED:
            return []  # more keys of the same answer (a program's moves, then Enter)
        self.phase = Phase.TYPED
        return [AwaitClose()]

    def deadline(self) -> list[Action]:
        """``CLOSE_WITHIN`` seconds after the keys: not closed, the answer has failed (read off
        the screen first, ``by_screen``)."""
        claim = self.book.in_flight
        if claim is not None and self.by_screen:
            return [CheckGone(claim, True)]
        return self.fail(B.NOT_CLOSED, f"no ui_prompt_end within {CLOSE_WITHIN:g} s")

    def shown(self, claim: B.Claim, gone: bool, final: bool) -> list[Action]:
        """The screen read for the claim's dialog: ``gone`` from it, it closed (answered);
        still shown at the deadline (``final``), the answer has failed."""
        if self.book.in_flight is not claim:
            return []  # the report came meanwhile
        if gone:
            return self.closed()
        return self.fail(B.NOT_CLOSED, NOT_GONE) if final else []

    def over(self, why: str) -> list[Action]:
        """The program says more (a new report, its next words): the dialog it was about is
        over, answered if the keys went in."""
        return self.closed() if self.phase is Phase.TYPED else self.end(why)

    def fail(self, line: str, why: str) -> list[Action]:
        """The answer in flight has failed (the dialog did not close in time, or not so)."""
        return self._finish(False, line, why) if self.book.in_flight is not None else []

    # -- what the shell shows ----------------------------------------------------------------
    @property
    def reading(self) -> bool:
        """An answerable dialog is open and being read: its token may come in a moment."""
        return self.phase is Phase.READING

    @property
    def typed(self) -> bool:
        return self.phase is Phase.TYPED

    def _kill(self, why: str) -> list[Action]:
        ticket = self.book.kill()
        if ticket is None:
            return []
        return [Log({"state": "token dead", "wait": ticket.wait, "why": why}), Changed()]

    def _shut(self, why: str) -> list[Action]:
        record = Log({"state": "not answerable", "wait": self.wait, "why": why})
        if self.phase is Phase.TYPED:  # (a key after the keys) the answer stands: the
            self.why = why  # dialog's close decides it, the screen is read no more
        else:
            self.phase, self.why = Phase.SHUT, why
        return [record, StopReader(), Release()]

    def _finish(self, ok: bool, line: str, why: str, took: int | None = None) -> list[Action]:
        typed = self.phase is Phase.TYPED
        claim = self.book.settle()
        option = claim.option + 1 if claim is not None else None
        if self.phase in (Phase.CLAIMED, Phase.TYPED):
            self.phase, self.why = Phase.SHUT, ANSWERED  # one answer per dialog
        return [Finish(ok, line, why, option, typed, took), StopReader()]
