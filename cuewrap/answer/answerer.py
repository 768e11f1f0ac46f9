"""The session side of answering (docs/answering.md), held by the controller, on the loop: the
shell of the state machine (``machine.py``).

When the engine opens a needs-input wait on Pi's ``confirm`` or ``select``, the answerer
starts a dialog reader (``screen.py``), reads the dialog from the screen, checks it against
the bridge (kind, title) and issues a fresh token (``secrets``, 192 bits). An answer (the
control socket, ``control.py``) claims the token (``book.py``), has the screen read again,
and types the keys only if the screen still shows the same dialog with the selection where
it was: one write, at a safe point of the input (``Reactions.type_to_child``). The dialog must
then close (``ui_prompt_end``) within ``CLOSE_WITHIN`` seconds, or the answer has failed and
nothing more is typed; when ``ui_prompt_end`` says which option the dialog closed with (the
bridge sees the dialog's result), it must be the one asked for, or the answer has failed.
Every attempt is one ``answer`` record in the decision log (where from, the option's number,
the option taken, the result, why; never a label).

What is decided (the phase of the dialog, the token, every refusal) is ``machine.Machine``'s;
this shell owns the timers, the screen reader, the key writer and the replies, and runs the
actions the machine returns. What differs by program is its ``Program`` (Pi's:
``pi.PiDialogs``; a program's own in generic mode: ``generic.py``, ``opencode.py``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Collection
from typing import Any, NamedTuple, Protocol

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import machine as M
from cuewrap.answer.keysin import ONE_WRITE, Typing
from cuewrap.answer.pi import LOOK_EVERY, MAX_BUTTONS, pi_keys
from cuewrap.answer.screen import DialogReader, OutputRing
from cuewrap.answer.wire import Request
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.effects import Action
from cuewrap.loop import Loop, Timer

__all__ = ["LOOK_EVERY", "MAX_BUTTONS", "ONE_WRITE", "Answerer", "Program", "Typing", "pi_keys"]

CLOSE_WITHIN = M.CLOSE_WITHIN  # seconds the dialog has to close after the keys
# the answer buttons' keys (a notification's actions) and the option each picks
# (keys up to the longest list: a program's dialog may give its own options' buttons)
BUTTON_KEYS = {f"answer-{i}": i for i in range(1, D.MAX_OPTIONS + 1)}
BUTTON_CUES = 8  # notifications whose buttons' tokens are remembered
LOOKS = M.LOOKS

Reply = Callable[[bool, str], None]
TypeKeys = Callable[[bytes], "str | None"]


class Program(Protocol):
    """What differs between programs' dialogs (a strategy: ``pi.PiDialogs`` the model)."""

    name: str  # who closes the dialog (the line cuewrap answer prints)
    twice: bool  # a token only once the same dialog was read twice in a row
    by_screen: bool  # a dialog gone from the screen closed
    first_look: float  # seconds before the first read of the screen
    # seconds the dialog must have been on the screen before keys are typed into it (an
    # answer that comes sooner waits, then the screen is read again)
    settle: float
    ready_within: float  # seconds a needs-input notification may wait for the token

    def fact(self, m: M.Machine, fact: F.Fact, waits: Collection[str]) -> list[M.Action]: ...
    def keys(self) -> D.Keys | str: ...
    def read(self, kind: str, lines: list[str] | None) -> D.Dialog | None: ...
    def agrees(self, dialog: D.Dialog, kind: str, check: str | None) -> bool: ...
    def keys_for(self, seen: D.Dialog, option: int, keys: D.Keys) -> bytes: ...
    def allow(self, ticket: B.Ticket, index: int, req: Request, source: str) -> str | None: ...
    def buttons(self, ticket: B.Ticket, summary: bool) -> list[tuple[int, str]]: ...
    def shown(self, ticket: B.Ticket, summary: bool) -> bool: ...

    typing: Typing  # how its answer's keys go in (``keysin.py``)


class _Asker(NamedTuple):
    reply: Reply
    source: str
    keys: D.Keys


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits


class Answerer:
    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        ring: OutputRing,
        program: Program,
        *,
        summary: bool,
        on_change: Callable[[], None] = lambda: None,
        type_keys: TypeKeys | None = None,
        make_reader: Callable[[int, int], DialogReader] | None = None,
    ) -> None:
        self.loop = loop
        self.log = log
        self.ring = ring
        self.program = program
        self.summary = summary
        self.on_change = on_change
        self.type_keys = type_keys  # the relay's (None: nothing can be typed)
        self.settle = program.settle
        self.machine = M.Machine(program.name, twice=program.twice, by_screen=program.by_screen)
        self.book = self.machine.book
        self.last: str | None = None  # the last attempt, for /cue
        self._make = make_reader or (
            lambda cols, rows: DialogReader(loop, cols, rows, on_error=log.error)
        )
        self._reader: DialogReader | None = None
        self._look: Timer | None = None
        self._deadline: Timer | None = None
        self._hold: Timer | None = None  # an answer waiting for the dialog to settle
        self._issued_at = float("-inf")  # when the live token was issued (the loop's clock)
        self._asker: _Asker | None = None  # the answer in flight's
        self._started = 0.0
        self._typed_at = 0.0
        self._ready: list[Callable[[], None]] = []  # notifications waiting for the token
        # cue -> the token its buttons were made for, and the options they offer (1-based)
        self._button_tokens: dict[int, tuple[str, frozenset[int]]] = {}
        self._ready_timer: Timer | None = None

    # -- facts (the controller, after each engine step) and keys ----------------------------
    def fact(self, fact: F.Fact, waits: Collection[str]) -> None:
        """A fact of the engine's step, read by the program's strategy (its dialogs open and
        close so; ``waits``: the engine's open waits)."""
        self.run(self.program.fact(self.machine, fact, waits))

    def typed(self) -> None:
        """The user typed in this session: the token dies (an answer not yet typed fails)."""
        actions = self.machine.key()
        if actions:  # none, mostly (no dialog open): this runs at every key
            self.run(actions)

    # -- the actions the machine returns -----------------------------------------------------
    def run(self, actions: list[M.Action], asker: _Asker | None = None) -> None:
        """Carry out the machine's actions (``asker``: the request they answer)."""
        for act in actions:
            if isinstance(act, M.StartReader):
                rows, cols = self.ring.size
                reader = self._make(cols, rows)
                if reader.start():
                    for chunk in self.ring.kept():
                        reader.feed(chunk)
                    self.ring.reader = self._reader = reader
                self.run(self.machine.started(self._reader is not None))
            elif isinstance(act, M.Look):
                self._schedule_look(act.wait, act.tries)
            elif isinstance(act, M.StopReader):
                if self._look is not None:
                    self._look.cancel()
                    self._look = None
                old, self._reader = self._reader, None
                self.ring.reader = None
                if old is not None:
                    old.stop()
            elif isinstance(act, M.Issued):
                self._issued_at = self.loop.clock()
            elif isinstance(act, M.Changed):
                self.on_change()
            elif isinstance(act, M.Release):
                self._release()
            elif isinstance(act, M.Log):
                self.log.write("answer", **act.fields)
            elif isinstance(act, M.Refuse) and asker is not None:
                self._attempt(asker.source, act.option, False, act.why)
                asker.reply(False, act.why)
            elif isinstance(act, M.Claimed):
                self._asker = asker
                self._started = self._typed_at = time.monotonic()
            elif isinstance(act, M.Verify):
                self._verify(act.claim)
            elif isinstance(act, M.Type):
                keys = self._asker.keys if self._asker is not None else D.DEFAULT_KEYS
                self.write(act.claim, self.program.keys_for(act.claim.ticket.dialog,
                                                            act.claim.option, keys))  # fmt: skip
            elif isinstance(act, M.AwaitClose):
                self._typed_at = time.monotonic()
                self.program.typing.keys_in(self)
            elif isinstance(act, M.CheckGone):
                self._check_gone(act.claim, act.final)
            elif isinstance(act, M.Finish):
                self._finish(act)

    def _schedule_look(self, wait: int, tries: int) -> None:
        def look() -> None:
            self._look = None
            if self._reader is not None:
                self._reader.query(lambda lines: self._seen(wait, tries, lines))

        first = self.program.first_look
        self._look = self.loop.call_later(first if tries == 0 else LOOK_EVERY, look)

    def _seen(self, wait: int, tries: int, lines: list[str] | None) -> None:
        m = self.machine
        dialog = self.program.read(m.kind, lines)
        if dialog is not None and not self.program.agrees(dialog, m.kind, m.check):
            dialog = None
        self.run(m.seen(wait, tries, dialog, lines is not None, new_token()))

    def _verify(self, claim: B.Claim) -> None:
        """The screen read again right before the keys (once the dialog settled)."""

        def verify() -> None:
            self._hold = None
            reader = self._reader
            if reader is None:
                self.run(self.machine.verified(claim, None, screen=False))
            else:
                reader.query(lambda lines: self.program.typing.verified(self, claim, lines))

        wait = self._issued_at + self.settle - self.loop.clock()
        if wait > 0 and self._reader is not None:
            self._hold = self.loop.call_later(wait, verify)
        else:
            verify()

    def write(self, claim: B.Claim, data: bytes) -> bool:
        """One write of the answer's keys, at a safe point of the input: written, and the
        answer still in flight?"""
        if self.type_keys is None:
            self.run(self.machine.fail(B.NOT_SHOWN, "no input to type into"))
            return False
        why = self.type_keys(data)
        self.run(self.machine.wrote(claim, why))
        return why is None and self.book.in_flight is claim

    def close_within(self, seconds: float) -> None:
        """The keys went in: the dialog has ``seconds`` to close, or the answer failed."""
        self._deadline = self.loop.call_later(seconds, self._too_late)

    def look_after(self, seconds: float, then: Callable[[list[str] | None], None]) -> None:
        """The screen read after ``seconds`` (``then(None)``: no reader), held as the answer's
        one pending timer."""

        def look() -> None:
            self._hold = None
            reader = self._reader
            if reader is None:
                then(None)
            else:
                reader.query(then)

        self._hold = self.loop.call_later(seconds, look)

    def _too_late(self) -> None:
        self._deadline = None
        self.run(self.machine.deadline())

    def _check_gone(self, claim: B.Claim, final: bool) -> None:
        """Is the claim's dialog gone from the screen (then it closed)?"""
        reader = self._reader
        if reader is None:
            self.run(self.machine.shown(claim, False, final))
            return

        def seen(lines: list[str] | None) -> None:
            shown = self.program.read(claim.ticket.kind, lines)
            gone = lines is not None and shown != claim.ticket.dialog
            self.run(self.machine.shown(claim, gone, final))

        reader.query(seen)

    def _finish(self, done: M.Finish) -> None:
        """The answer in flight is over: its record, and the reply (``done.line``: the line
        ``cuewrap answer`` prints)."""
        for timer in (self._hold, self._deadline):
            if timer is not None:
                timer.cancel()
        self._hold = self._deadline = None
        now = time.monotonic()
        ms = round((now - self._started) * 1000, 1)
        keys_ms = round((now - self._typed_at) * 1000, 1) if done.typed else None
        asker, self._asker = self._asker, None
        source = asker.source if asker is not None else ""
        self._attempt(source, done.option, done.ok, done.why, ms, keys_ms, done.took)
        if asker is not None:
            asker.reply(done.ok, done.line)

    # -- an answer -------------------------------------------------------------------------
    def request(self, req: Request, reply: Reply, source: str | None = None) -> None:
        src = source or ("token" if req.token is not None else "command line")
        keys = self.program.keys()
        unusable = keys if isinstance(keys, str) else None
        asker = _Asker(reply, src, D.DEFAULT_KEYS if isinstance(keys, str) else keys)
        allow = lambda ticket, index: self.program.allow(ticket, index, req, src)  # noqa: E731
        self.run(self.machine.request(req.token, req.choice, allow, unusable), asker)

    def answer_token(self, choice: str, token: str, reply: Reply, source: str) -> None:
        """An answer by token from elsewhere (the phone's, docs/phone.md): the very request
        of ``cuewrap answer --token TOKEN CHOICE``, from ``source``."""
        self.request(Request(choice, token), reply, source)

    def _attempt(
        self,
        source: str,
        option: int | None,
        ok: bool,
        why: str,
        ms: float | None = None,
        keys_ms: float | None = None,
        took: int | None = None,
    ) -> None:
        result = "answered" if ok else "refused"
        if took is not None and took != option:
            result = "other option taken"  # the keys went in, the dialog closed otherwise
        fields: dict[str, Any] = {"source": source, "option": option, "result": result,
                                  "why": why}  # fmt: skip
        if took is not None:
            fields["took"] = took  # the option the dialog closed with (0: none), as Pi said
        if ms is not None:
            fields["ms"] = ms  # from the claim
        if keys_ms is not None:
            fields["keys_ms"] = keys_ms  # from the keys written
        self.log.write("answer", **fields)
        at = time.strftime("%H:%M:%S", time.localtime())
        what = f"option {option}" if option is not None else "no option"
        said = f", {self.program.name} took {took or 'none'}" if took is not None else ""
        self.last = f"{at} from the {source}, {what}: {result}{said} ({why})"

    # -- a notification of the wait (notify.command) -------------------------------------
    @property
    def reading(self) -> bool:
        """An answerable dialog is open and being read: its token may come in a moment."""
        return self.machine.reading

    def when_ready(self, callback: Callable[[], None]) -> None:
        """``callback()`` once the token is there, the dialog is found not answerable or
        closed, or after ``ready_within`` seconds, whichever comes first."""
        if not self.reading:
            callback()
            return
        self._ready.append(callback)
        if self._ready_timer is None:
            self._ready_timer = self.loop.call_later(self.program.ready_within, self._release)

    def _release(self) -> None:
        if self._ready_timer is not None:
            self._ready_timer.cancel()
            self._ready_timer = None
        ready, self._ready = self._ready, []
        for callback in ready:
            try:
                callback()
            except Exception as exc:
                self.log.error("answer.notify", exc)

    def notification_answer(self) -> dict[str, Any] | None:
        """``{token, options, count, buttons}`` for a notification of the wait (labels as
        ``wait_info``; the count, so that a hook can offer numbers without the labels; the
        buttons the desktop would offer, ``{option, label}``, so that a hook offers no
        more)."""
        info = self.wait_info()
        ticket = self.book.current
        if info is None or ticket is None:
            return None
        offered = self.program.buttons(ticket, self.summary)
        buttons = [{"option": i + 1, "label": label} for i, label in offered]
        return {"token": info["token"], "options": info["options"], "count": info["count"],
                "buttons": buttons}  # fmt: skip

    def buttons(self, cue_id: int) -> tuple[Action, ...]:
        """Answer buttons for cue ``cue_id``'s notification (its ``actions``): one per option
        the program's strategy offers (Pi: every option of a list of at most ``MAX_BUTTONS``),
        keys ``answer-N`` for option N, labelled as ``ls --json`` shows them (else by number;
        the channel bounds them to one printable line); the token they answer with, and the
        options they offer, are remembered for that cue."""
        ticket = self.book.current
        offered = self.program.buttons(ticket, self.summary) if ticket is not None else []
        if ticket is None or not offered:
            return ()
        self._button_tokens[cue_id] = (ticket.token, frozenset(i + 1 for i, _ in offered))
        while len(self._button_tokens) > BUTTON_CUES:
            del self._button_tokens[next(iter(self._button_tokens))]
        return tuple(Action(f"answer-{i + 1}", label) for i, label in offered)

    def button(self, cue_id: int, key: str) -> None:
        """A click on the button ``key`` of cue ``cue_id``'s notification: one of the answer
        buttons made for it answers with the token they were made for (a dead one, or none,
        is refused as stale); any other key is not the answerer's."""
        option = BUTTON_KEYS.get(key)
        made = self._button_tokens.get(cue_id)
        if option is None or (made is not None and option not in made[1]):
            return  # not one of its buttons
        if made is None:
            self._attempt("desktop", option, False, B.STALE)
            return
        del self._button_tokens[cue_id]
        self.request(Request(str(option), made[0]), lambda ok, why: None, source="desktop")

    # -- for ls --json and scripts ---------------------------------------------------------
    def wait_info(self) -> dict[str, Any] | None:
        ticket = self.book.current
        if ticket is None:
            return None
        options = ticket.dialog.options
        shown = self.program.shown(ticket, self.summary)
        return {
            "kind": ticket.kind,
            "token": ticket.token,
            "options": list(options) if shown else None,
            "count": len(options),
        }

    def close(self) -> None:
        self.run(self.machine.end("exit"))
