"""Answering a program's own dialogs in generic mode (docs/answering.md, "Claude Code and
other programs").

The program says it waits: OSC 7501 ``blocked`` with a ``kind`` (Claude Code: ``permission``
at a permission prompt, ``question`` at ``AskUserQuestion``; Codex CLI: ``permission``), which
opens the engine's ``osc`` wait; or, for a program that reports nothing, its own notification
in its known words (engine/notices.py; Gemini CLI's "Approval required"), which opens the
``child`` wait. Then the answerer reads the screen (the relay's output, replayed into a pyte
worker: ``screen.py``) for a dialog of that kind with that program's ``own.Dialogs``
(``layouts.py``); the report and the screen agree when one is found, and only then is a
token issued. ``OwnProgram`` is the answerer's strategy for all this (``answerer.Program``);
everything else is the answerer's (``answerer.py``, its state machine ``machine.py``): the
single-use token, the screen read again right before typing, one write at a safe point of the
input, every attempt logged.

What differs:

- the keys: the option's digit (Claude Code picks and confirms at once, absolutely);
- the close: the program reports anything but ``blocked`` (it works again, or is idle after a
  refusal) within ``CLOSE_WITHIN`` seconds, or (a notifying program) says more or draws again
  with the dialog gone, or the dialog is gone from the screen then; a new ``blocked`` report
  is a new wait (the old token dies);
- what may be chosen from afar: an option that widens what the program may do without asking
  (``prompts.widens``) only by its exact label with the session's pid (``cuewrap answer PID
  LABEL``), never by number, by token or by a button;
- the buttons: a permission prompt's one-time ``Yes`` and its ``No``, nothing else; a
  question's options as Pi's select (at most 3);
- labels leave the session only with ``privacy.body = "summary"``.
"""

from __future__ import annotations

from collections.abc import Collection

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import layouts, own
from cuewrap.answer import machine as M
from cuewrap.answer.keysin import ONE_WRITE, Typing
from cuewrap.answer.pi import MAX_BUTTONS, READY_WITHIN
from cuewrap.answer.wire import Request
from cuewrap.engine import notices as N

WIDENS = (
    "that option lets the program do more without asking: "
    "only its exact label with the session's pid chooses it"
)
NOT_GONE = M.NOT_GONE
SETTLE = 0.5  # seconds


def by_label_only(label: str, req: Request, source: str) -> str | None:
    """An option that widens what the program may do: chosen only by its exact label with
    the session's pid (never by number, by token or by a button)."""
    if req.token is None and source == "command line" and req.choice.strip() == label:
        return None
    return WIDENS


def not_read(kind: str, why: str) -> list[M.Action]:
    return [M.Log({"state": "not answerable", "dialog": kind, "why": why})]


class OwnProgram:
    """The answerer's strategy for a program's own dialogs: the ``own.Dialogs`` of the program
    whose wait is open (``dialogs``, set at each wait), its digit the key; ``notices``: the
    preset whose own notifications are read (engine/notices.py)."""

    name = "the program"  # it does not say which option it took: the line says so
    twice = False
    by_screen = True  # a program that does not report may only be seen to close
    first_look = 0.0  # Claude Code has drawn its dialog when it reports the wait
    # Claude Code drops a key that comes right after its dialog is drawn (2.1.328: within
    # 50 ms always, at 100 ms not in these runs, and once at about 100 ms after cuewrap saw
    # it): an answer sooner than this after the token waits, then the screen is read again
    settle = SETTLE
    ready_within = READY_WITHIN
    typing: Typing = ONE_WRITE  # its keys in one write (answer/keysin.py)

    def __init__(self, notices: str = "") -> None:
        self.notices = notices
        self.dialogs: own.Dialogs | None = None
        self._by_notice = False  # the open wait came from its notification, not a report

    # -- facts (the controller, after each engine step) ------------------------------------
    def fact(self, m: M.Machine, fact: F.Fact, waits: Collection[str]) -> list[M.Action]:
        if isinstance(fact, F.ProgramStatus):
            if fact.state != "blocked":  # it goes on (or is idle after a refusal)
                return m.closed() if m.open else []
            acts = m.over("a new report") if m.open else []  # a new report: a new wait
            dialogs = layouts.for_report(fact.app, fact.kind)
            if dialogs is None or "osc" not in waits or fact.kind is None:
                why = "not a program or kind of dialog cuewrap reads"
                return [*acts, *not_read(fact.kind or "", why)]
            self.dialogs, self._by_notice = dialogs, False
            return [*acts, *m.opened(fact.kind, None)]
        if isinstance(fact, F.ChildNotice):
            return self._notice(m, fact, waits)
        if isinstance(fact, F.OutputActive) and self._by_notice:
            claim = m.book.in_flight
            if m.typed and claim is not None:  # it draws again: is the dialog gone?
                return [M.CheckGone(claim, False)]
        elif isinstance(fact, F.ChildExit):
            return m.end("the program exited")
        return []

    def _notice(self, m: M.Machine, fact: F.ChildNotice, waits: Collection[str]) -> list[M.Action]:
        """A program that reports no state, in its own notification's words: it waits (the
        wait ``child`` open), or its turn ended."""
        said = N.meaning(self.notices, fact.title, fact.body)
        if said is None:
            return []
        acts = m.over("the program said more") if m.open else []  # the dialog is over
        dialogs = layouts.for_notice(self.notices, said)
        if dialogs is not None and "child" in waits:
            self.dialogs, self._by_notice = dialogs, True
            return [*acts, *m.opened(said, None)]
        if said not in ("ended",):
            return [*acts, *not_read(said, "not a dialog cuewrap reads")]
        return acts

    # -- the dialogs -----------------------------------------------------------------------
    def keys(self) -> D.Keys | str:
        return D.DEFAULT_KEYS  # not used: the keys are digits

    def read(self, kind: str, lines: list[str] | None) -> D.Dialog | None:
        dialogs = self.dialogs
        return dialogs.read(kind, lines) if lines is not None and dialogs is not None else None

    def agrees(self, dialog: D.Dialog, kind: str, check: str | None) -> bool:
        return True  # read by the report's kind: found is agreed

    def keys_for(self, seen: D.Dialog, option: int, keys: D.Keys) -> bytes:
        assert self.dialogs is not None  # a dialog was read with them
        return self.dialogs.key_for(seen, option)

    def allow(self, ticket: B.Ticket, index: int, req: Request, source: str) -> str | None:
        label = ticket.dialog.options[index]
        if self.dialogs is None or not self.dialogs.widens(ticket.kind, label):
            return None
        return by_label_only(label, req, source)

    def buttons(self, ticket: B.Ticket, summary: bool) -> list[tuple[int, str]]:
        options = ticket.dialog.options
        dialogs = self.dialogs
        if dialogs is None:
            return []
        if ticket.kind == "permission":
            yes = [(i, "Yes") for i, o in enumerate(options) if dialogs.once(o)][:1]
            no = [(i, "No") for i, o in enumerate(options) if dialogs.is_no(o)][:1]
            return yes + no if yes and no else []
        if len(options) > MAX_BUTTONS:
            return []
        return [(i, o if summary else str(i + 1)) for i, o in enumerate(options)]

    def shown(self, ticket: B.Ticket, summary: bool) -> bool:
        return summary
