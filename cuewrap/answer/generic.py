"""Answering a program's own dialogs in generic mode (docs/answering.md, "Claude Code and
other programs").

The program says it waits: OSC 7501 ``blocked`` with a ``kind`` (Claude Code: ``permission``
at a permission prompt, ``question`` at ``AskUserQuestion``; Codex CLI: ``permission``), which
opens the engine's ``osc`` wait; or, for a program that reports nothing, its own notification
in its known words (engine/notices.py; Gemini CLI's "Approval required"), which opens the
``child`` wait. Then the answerer reads the screen (the relay's output, replayed into a pyte
worker: ``screen.py``) for a dialog of that kind with that program's ``own.Dialogs``
(``layouts.py``); the report and the screen agree when one is found, and only then is a
token issued. Everything else is the answerer's (``answerer.py``, its state machine
``machine.py``): the single-use token, the screen read again right before typing, one write
at a safe point of the input, every attempt logged.

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

from collections.abc import Callable, Collection

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import layouts, own
from cuewrap.answer.answerer import Answerer, TypeKeys
from cuewrap.answer.pi import MAX_BUTTONS
from cuewrap.answer.screen import DialogReader, OutputRing
from cuewrap.answer.wire import Request
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine import notices
from cuewrap.loop import Loop

WIDENS = (
    "that option lets the program do more without asking: "
    "only its exact label with the session's pid chooses it"
)
NOT_GONE = "the program did not report that it goes on, and the dialog is still shown"
SETTLE = 0.5  # seconds


def by_label_only(label: str, req: Request, source: str) -> str | None:
    """An option that widens what the program may do: chosen only by its exact label with
    the session's pid (never by number, by token or by a button)."""
    if req.token is None and source == "command line" and req.choice.strip() == label:
        return None
    return WIDENS


class OwnProgram:
    """The answerer's strategy for a program's own dialogs: the ``own.Dialogs`` of the program
    whose wait is open (``dialogs``, set at each wait), its digit the key."""

    name = "the program"  # it does not say which option it took: the line says so
    twice = False

    def __init__(self) -> None:
        self.dialogs: own.Dialogs | None = None

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


class GenericAnswerer(Answerer):
    first_look = 0.0  # Claude Code has drawn its dialog when it reports the wait
    # Claude Code drops a key that comes right after its dialog is drawn (2.1.328: within
    # 50 ms always, at 100 ms not in these runs, and once at about 100 ms after cuewrap saw
    # it): an answer sooner than this after the token waits, then the screen is read again
    settle = SETTLE

    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        ring: OutputRing,
        *,
        summary: bool,
        on_change: Callable[[], None] = lambda: None,
        type_keys: TypeKeys | None = None,
        make_reader: Callable[[int, int], DialogReader] | None = None,
        notices: str = "",
    ) -> None:
        self.own = self.own_program()
        super().__init__(loop, log, ring, self.own, summary=summary, on_change=on_change,
                         type_keys=type_keys, make_reader=make_reader)  # fmt: skip
        self.notices = notices  # the preset whose own notifications are read (engine/notices)
        self._by_notice = False  # the open wait came from its notification, not a report

    def own_program(self) -> OwnProgram:
        return OwnProgram()

    def _over(self, why: str) -> None:
        """The program says more: the dialog it was about is over (answered, if the keys
        went in)."""
        m = self.machine
        self._run(m.closed() if m.typed else m.end(why))

    # -- facts (the controller, after each engine step) ------------------------------------
    def fact(self, fact: F.Fact, waits: Collection[str]) -> None:
        m = self.machine
        if isinstance(fact, F.ProgramStatus):
            if fact.state != "blocked":
                if m.open:
                    self._run(m.closed())  # it goes on (or is idle after a refusal)
                return
            if m.open:  # a new report: a new wait
                self._over("a new report")
            dialogs = layouts.for_report(fact.app, fact.kind)
            if dialogs is not None and "osc" in waits and fact.kind is not None:
                self.own.dialogs, self._by_notice = dialogs, False
                self._run(m.opened(fact.kind, None))
            else:
                self.log.write("answer", state="not answerable", dialog=fact.kind or "",
                               why="not a program or kind of dialog cuewrap reads")  # fmt: skip
        elif isinstance(fact, F.ChildNotice):
            self._notice(fact, waits)
        elif isinstance(fact, F.OutputActive) and self._by_notice:
            if m.typed:
                self._look_closed(final=False)  # it draws again: is the dialog gone?
        elif isinstance(fact, F.ChildExit):
            self._run(m.end("the program exited"))

    def _notice(self, fact: F.ChildNotice, waits: Collection[str]) -> None:
        """A program that reports no state, in its own notification's words: it waits (the
        wait ``child`` open), or its turn ended."""
        said = notices.meaning(self.notices, fact.title, fact.body)
        if said is None:
            return
        if self.machine.open:  # it says more: the dialog it was about is over
            self._over("the program said more")
        dialogs = layouts.for_notice(self.notices, said)
        if dialogs is not None and "child" in waits:
            self.own.dialogs, self._by_notice = dialogs, True
            self._run(self.machine.opened(said, None))
        elif said not in ("ended",):
            self.log.write("answer", state="not answerable", dialog=said,
                           why="not a dialog cuewrap reads")  # fmt: skip

    # -- the close: a report, else the screen at the deadline -------------------------------
    def _too_late(self) -> None:
        self._deadline = None
        self._look_closed(final=True)

    def _look_closed(self, *, final: bool) -> None:
        """Is the dialog of the answer in flight gone from the screen? Then it closed. Still
        there: at the deadline (``final``) the answer has failed; before it, wait on."""
        claim = self.book.in_flight
        reader = self._reader
        if claim is None:
            return
        if reader is None:
            if final:
                self._run(self.machine.fail(B.NOT_CLOSED, NOT_GONE))
            return

        def seen(lines: list[str] | None) -> None:
            if self.book.in_flight is not claim:
                return  # the report came meanwhile
            shown = self.program.read(claim.ticket.kind, lines)
            if lines is not None and shown != claim.ticket.dialog:
                self._run(self.machine.closed())  # the dialog left the screen: answered
            elif final:
                self._run(self.machine.fail(B.NOT_CLOSED, NOT_GONE))

        reader.query(seen)
