"""The session side of answering (docs/answering.md), held by the controller, on the loop.

When the engine opens a needs-input wait on Pi's ``confirm`` or ``select``, the answerer
starts a dialog reader (``screen.py``), reads the dialog from the screen, checks it against
the bridge (kind, title) and issues a fresh token (``secrets``, 192 bits). An answer (the
control socket, ``control.py``) claims the token (``book.py``), has the screen read again,
and types the keys only if the screen still shows the same dialog with the selection where
it was: one write, at a safe point of the input (``Relay.type_to_child``). The dialog must
then close (``ui_prompt_end``) within ``CLOSE_WITHIN`` seconds, or the answer has failed and
nothing more is typed; when ``ui_prompt_end`` says which option the dialog closed with (the
bridge sees the dialog's result), it must be the one asked for, or the answer has failed.
Every attempt is one ``answer`` record in the decision log (where from, the option's number,
the option taken, the result, why; never a label).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer.screen import DialogReader, OutputRing
from cuewrap.answer.wire import Request
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.effects import Action
from cuewrap.loop import Loop, Timer

CLOSE_WITHIN = 2.0  # seconds the dialog has to close after the keys
READY_WITHIN = 1.5  # seconds a needs-input notification may wait for the dialog's token
MAX_BUTTONS = 3  # a longer list gets no buttons
# the answer buttons' keys (a notification's actions) and the option each picks
# (keys up to the longest list: a program's dialog may give its own options' buttons)
BUTTON_KEYS = {f"answer-{i}": i for i in range(1, D.MAX_OPTIONS + 1)}
BUTTON_CUES = 8  # notifications whose buttons' tokens are remembered
LOOK_EVERY = 0.15  # seconds between reads of the screen while the dialog is being drawn
LOOKS = 20  # reads before cuewrap gives up on a dialog (it is then not answerable)
ANSWERABLE = ("confirm", "select")
UNREAD = "the screen does not show that dialog"  # why a dialog got no token: not read
ASK_TOOL = "ask_user_question"
ASK_CALLS = 8  # Ask calls in flight whose checks are kept

Reply = Callable[[bool, str], None]
TypeKeys = Callable[[bytes], "str | None"]


MAX_KEYBINDINGS = 1 << 16  # bytes read of Pi's keybindings file


def pi_keys(env: Mapping[str, str]) -> D.Keys | str:
    """The selector's keys under Pi's keybindings file (``$PI_CODING_AGENT_DIR`` or
    ``~/.pi/agent``, ``keybindings.json``), read at each answer; a file that is missing is
    Pi's defaults, one that cannot be read is a refusal (its keys are unknown)."""
    agent = env.get("PI_CODING_AGENT_DIR") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".pi", "agent"
    )
    path = os.path.join(os.path.expanduser(agent), "keybindings.json")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_KEYBINDINGS + 1)
    except FileNotFoundError:
        return D.DEFAULT_KEYS
    except OSError:
        return "Pi's keybindings file cannot be read"
    if len(raw) > MAX_KEYBINDINGS:
        return "Pi's keybindings file is too long"
    try:
        bindings = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "Pi's keybindings file is not JSON"
    return D.selector_keys(bindings)


def _read(kind: str, lines: list[str] | None) -> D.Dialog | None:
    if lines is None:
        return None
    return D.parse_ask(lines) if kind == "ask" else D.parse(lines)


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits


class Answerer:
    # seconds before the first read of the screen (Pi draws its dialog after it says so)
    first_look = LOOK_EVERY
    # seconds the dialog must have been on the screen before keys are typed into it (an
    # answer that comes sooner waits, then the screen is read again)
    settle = 0.0
    program = "Pi"  # who closes the dialog (the line cuewrap answer prints)
    ready_within = READY_WITHIN  # seconds a needs-input notification may wait for the token

    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        ring: OutputRing,
        *,
        keys: Callable[[], D.Keys | str],
        summary: bool,
        bridge_key: str,
        on_change: Callable[[], None] = lambda: None,
        type_keys: TypeKeys | None = None,
        make_reader: Callable[[int, int], DialogReader] | None = None,
    ) -> None:
        self.loop = loop
        self.log = log
        self.ring = ring
        self.keys = keys
        self.summary = summary
        self.bridge_key = bridge_key  # the bridge's token: the key of its title checks
        self.on_change = on_change
        self.type_keys = type_keys  # the relay's (None: nothing can be typed)
        self.book = B.Book()
        self.last: str | None = None  # the last attempt, for /cue
        self._make = make_reader or (
            lambda cols, rows: DialogReader(loop, cols, rows, on_error=log.error)
        )
        self._reader: DialogReader | None = None
        self._open: tuple[int, str, str | None] | None = None  # (seq, kind, bridge check)
        # the open dialog gets no token, and why ("": it may still get one)
        self._gave_up = ""
        self._seq = 0
        self._look: Timer | None = None
        self._deadline: Timer | None = None
        self._hold: Timer | None = None  # an answer waiting for the dialog to settle
        self._issued_at = float("-inf")  # when the live token was issued (the loop's clock)
        self._reply: Reply | None = None
        self._typed = False  # the keys of the answer in flight were written
        self._source = ""
        self._started = 0.0
        self._typed_at = 0.0
        self._ready: list[Callable[[], None]] = []  # notifications waiting for the token
        # cue -> the token its buttons were made for, and the options they offer (1-based)
        self._button_tokens: dict[int, tuple[str, frozenset[int]]] = {}
        self._ask_checks: dict[str, str | None] = {}  # Ask call id -> its question's check
        self._ready_timer: Timer | None = None

    # -- facts (the controller, after each engine step) ------------------------------------
    def fact(self, fact: F.Fact, waits: Collection[str]) -> None:
        if isinstance(fact, F.UiPromptStart):
            if fact.kind in ANSWERABLE and "ui" in waits and self._open is None:
                self._start(fact.kind, fact.dialog)
            elif not (fact.kind == "custom" and self._open is not None and self._open[1] == "ask"):
                self._end("another dialog opened")  # (Pi wraps Ask's own overlay as custom)
        elif isinstance(fact, F.UiPromptEnd):
            self._closed(fact.option)
        elif isinstance(fact, F.ToolStart) and fact.tool_name == ASK_TOOL:
            self._ask_checks[fact.tool_call_id] = fact.dialog
            while len(self._ask_checks) > ASK_CALLS:
                del self._ask_checks[next(iter(self._ask_checks))]
        elif isinstance(fact, F.AskBlocked):
            self._ask_blocked(fact, waits)
        elif isinstance(fact, F.ToolEnd) and fact.tool_name == ASK_TOOL:
            self._ask_checks.pop(fact.tool_call_id, None)
            if self._open is not None and self._open[1] == "ask":
                self._closed()
        elif isinstance(fact, F.SessionShutdown | F.BridgeGone | F.ChildExit):
            self._end("the session ended or reloaded")
        elif isinstance(fact, F.SessionStart) and fact.reason != "startup":
            self._end("the session ended or reloaded")

    def typed(self) -> None:
        """The user typed in this session: the token dies (an answer not yet typed fails)."""
        if self.book.current is not None:
            self._kill("you pressed a key")
        if self.book.in_flight is not None and not self._typed:
            self._finish(False, B.STALE, "you pressed a key")
        if self.reading:  # no token comes for this dialog any more
            self._give_up("you pressed a key")

    def _ask_blocked(self, fact: F.AskBlocked, waits: Collection[str]) -> None:
        """Ask's questionnaire opened (``active``) or closed. Answerable only for one call in
        flight whose single-choice question the bridge announced, with its wait pending."""
        if not fact.active:
            if self._open is not None and self._open[1] == "ask":
                self._closed()
            return
        if self._open is not None:
            self._end("another dialog opened")
            return
        calls = [fact.tool_call_id] if fact.tool_call_id else list(self._ask_checks)
        check = self._ask_checks.get(calls[0]) if len(calls) == 1 else None
        if check is not None and any(k.startswith("ask:") for k in waits):
            self._start("ask", check)
        else:
            self.log.write("answer", state="not answerable", dialog="ask",
                           why="not one single-choice question the bridge announced")  # fmt: skip

    # -- the dialog ------------------------------------------------------------------------
    def _start(self, kind: str, title: str | None) -> None:
        self._seq += 1
        self._open = (self._seq, kind, title)
        self._gave_up = ""
        self._stop_reader()
        rows, cols = self.ring.size
        reader = self._make(cols, rows)
        if not reader.start():
            self._give_up("the dialog reader did not start")
            return
        for chunk in self.ring.kept():
            reader.feed(chunk)
        self.ring.reader = self._reader = reader
        self._schedule_look(self._seq, 0)

    def _schedule_look(self, seq: int, tries: int) -> None:
        def look() -> None:
            self._look = None
            if self._reader is not None:
                self._reader.query(lambda lines: self._seen(seq, tries, lines))

        self._look = self.loop.call_later(self.first_look if tries == 0 else LOOK_EVERY, look)

    def _seen(self, seq: int, tries: int, lines: list[str] | None) -> None:
        if self._open is None or self._open[0] != seq or self._gave_up:
            return  # over, or given up
        if self.book.current is not None:
            return
        _, kind, title = self._open
        dialog = self._read(kind, lines)
        if dialog is not None and self._agrees(dialog, kind, title):
            self.book.issue(B.Ticket(new_token(), seq, kind, dialog))
            self._issued_at = self.loop.clock()
            self.log.write("answer", state="answerable", wait=seq, dialog=kind,
                           count=len(dialog.options), selected=dialog.selected + 1)  # fmt: skip
            self.on_change()
            self._release()
        elif tries + 1 < LOOKS and lines is not None:
            self._schedule_look(seq, tries + 1)
        else:
            self._give_up(UNREAD if lines is not None else "the screen model is gone")

    def _give_up(self, why: str) -> None:
        """This dialog gets no token: read no more, notifications go without one."""
        if self._open is None:
            return
        self.log.write("answer", state="not answerable", wait=self._open[0], why=why)
        self._gave_up = why
        if self._look is not None:
            self._look.cancel()
            self._look = None
        self._stop_reader()
        self._release()

    def _closed(self, took: int | None = None) -> None:
        """The dialog closed; ``took``: the option it closed with, when the program said it
        (Pi's bridge: ``ui_prompt_end``'s ``option``; 0 none)."""
        claim = self.book.in_flight
        if claim is not None and self._typed:
            asked = claim.option + 1
            line = B.took_line(asked, took, self.program)
            if took is None or took == asked:
                self._finish(True, line, "the dialog closed", took=took)
            else:
                self._finish(False, line, "another option was taken", took=took)
        self._end("the dialog closed")

    def _end(self, why: str) -> None:
        if self.book.in_flight is not None:
            self._finish(False, B.NOT_CLOSED if self._typed else B.NOT_SHOWN, why)
        self._kill(why)
        self._open = None
        self._release()
        if self._look is not None:
            self._look.cancel()
            self._look = None
        self._stop_reader()

    def _kill(self, why: str) -> None:
        ticket = self.book.kill()
        if ticket is not None:
            self.log.write("answer", state="token dead", wait=ticket.wait, why=why)
            self.on_change()

    def _stop_reader(self) -> None:
        reader, self._reader = self._reader, None
        self.ring.reader = None
        if reader is not None:
            reader.stop()

    # -- what differs between Pi's dialogs and a program's own (answer.generic) ----------
    def _read(self, kind: str, lines: list[str] | None) -> D.Dialog | None:
        """The dialog of ``kind`` on the screen (None: none, or the screen is gone)."""
        return _read(kind, lines)

    def _agrees(self, dialog: D.Dialog, kind: str, check: str | None) -> bool:
        """The dialog read is the one the wait is about (Pi: the bridge's title check)."""
        if kind == "ask":
            return D.ask_matches(dialog, check, self.bridge_key)
        return D.matches_bridge(dialog, kind, check, self.bridge_key)

    def _keys_for(self, seen: D.Dialog, option: int, keys: D.Keys) -> bytes:
        """The bytes that pick ``option`` (0-based) on the dialog ``seen``."""
        return D.keys_for(seen.selected, option, keys)

    def _allow(self, ticket: B.Ticket, index: int, req: Request, source: str) -> str | None:
        """May option ``index`` be chosen so from afar? None, or why not."""
        return None

    def _button_options(self, ticket: B.Ticket) -> list[tuple[int, str]]:
        """The options (0-based, label) the notification's buttons offer."""
        if len(ticket.dialog.options) > MAX_BUTTONS:
            return []
        shown = self.summary or ticket.kind == "confirm"
        return [
            (i, label if shown else str(i + 1)) for i, label in enumerate(ticket.dialog.options)
        ]

    def _shown(self, ticket: B.Ticket) -> bool:
        """May the options' labels leave the session (``ls --json``, notify.command)?"""
        return self.summary or ticket.kind == "confirm"

    # -- an answer -------------------------------------------------------------------------
    def request(self, req: Request, reply: Reply, source: str | None = None) -> None:
        src = source or ("token" if req.token is not None else "command line")
        keys = self.keys()
        if isinstance(keys, str):
            self._attempt(src, None, False, keys)
            reply(False, keys)
            return
        claim = self.book.claim(
            req.token, req.choice, lambda ticket, index: self._allow(ticket, index, req, src)
        )
        if isinstance(claim, str):
            if claim == B.NOTHING and self._open is not None and self._gave_up == UNREAD:
                claim = B.NOT_READ  # a wait stands, but on a dialog cuewrap cannot read
            text = req.choice.strip()
            option = int(text) if text.isdecimal() and len(text) <= 4 else None
            if option is None and self.book.current is not None:  # a label: its number
                found = D.resolve_choice(self.book.current.dialog.options, req.choice)
                option = found + 1 if found is not None else None
            self._attempt(src, option, False, claim)
            reply(False, claim)
            return
        self.on_change()  # the token is spent
        self._reply, self._typed, self._source = reply, False, src
        self._started = self._typed_at = time.monotonic()
        if self._reader is None:
            self._finish(False, B.NOT_SHOWN, "no screen model")
            return

        def verify() -> None:
            self._hold = None
            reader = self._reader
            if reader is None:
                self._finish(False, B.NOT_SHOWN, "no screen model")
                return
            reader.query(lambda lines: self._verified(claim, keys, lines))

        wait = self._issued_at + self.settle - self.loop.clock()
        if wait > 0:
            self._hold = self.loop.call_later(wait, verify)
        else:
            verify()

    def answer_token(self, choice: str, token: str, reply: Reply, source: str) -> None:
        """An answer by token from elsewhere (the phone's, docs/phone.md): the very request
        of ``cuewrap answer --token TOKEN CHOICE``, from ``source``."""
        self.request(Request(choice, token), reply, source)

    def _verified(self, claim: B.Claim, keys: D.Keys, lines: list[str] | None) -> None:
        if self.book.in_flight is not claim:
            return  # over meanwhile (a key, the dialog closed)
        seen = self._read(claim.ticket.kind, lines)
        if seen is None or seen != claim.ticket.dialog:
            self._finish(False, B.NOT_SHOWN, "the screen changed")
            return
        if self.type_keys is None:
            self._finish(False, B.NOT_SHOWN, "no input to type into")
            return
        why = self.type_keys(self._keys_for(seen, claim.option, keys))
        if why is not None:
            self._finish(False, why, why)
            return
        self._typed = True
        self._typed_at = time.monotonic()
        self._deadline = self.loop.call_later(CLOSE_WITHIN, self._too_late)

    def _too_late(self) -> None:
        self._deadline = None
        if self.book.in_flight is not None:
            self._finish(False, B.NOT_CLOSED, f"no ui_prompt_end within {CLOSE_WITHIN:g} s")

    def _finish(self, ok: bool, reply_why: str, why: str, took: int | None = None) -> None:
        """The answer in flight is over: its record, and the reply (``reply_why``: the line
        ``cuewrap answer`` prints)."""
        claim = self.book.settle()
        if self._hold is not None:
            self._hold.cancel()
            self._hold = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        option = claim.option + 1 if claim is not None else None
        now = time.monotonic()
        ms = round((now - self._started) * 1000, 1)
        keys_ms = round((now - self._typed_at) * 1000, 1) if self._typed else None
        self._attempt(self._source, option, ok, why, ms=ms, keys_ms=keys_ms, took=took)
        reply, self._reply = self._reply, None
        if reply is not None:
            reply(ok, reply_why)

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
        said = f", {self.program} took {took or 'none'}" if took is not None else ""
        self.last = f"{at} from the {source}, {what}: {result}{said} ({why})"

    # -- a notification of the wait (notify.command) -------------------------------------
    @property
    def reading(self) -> bool:
        """An answerable dialog is open and being read: its token may come in a moment."""
        return self._open is not None and not self._gave_up and self.book.current is None

    def when_ready(self, callback: Callable[[], None]) -> None:
        """``callback()`` once the token is there, the dialog is found not answerable or
        closed, or after ``ready_within`` seconds, whichever comes first."""
        if not self.reading:
            callback()
            return
        self._ready.append(callback)
        if self._ready_timer is None:
            self._ready_timer = self.loop.call_later(self.ready_within, self._release)

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
        buttons = [{"option": i + 1, "label": label} for i, label in self._button_options(ticket)]
        return {"token": info["token"], "options": info["options"], "count": info["count"],
                "buttons": buttons}  # fmt: skip

    def buttons(self, cue_id: int) -> tuple[Action, ...]:
        """Answer buttons for cue ``cue_id``'s notification (its ``actions``): one per option
        ``_button_options`` offers (Pi: every option of a list of at most ``MAX_BUTTONS``),
        keys ``answer-N`` for option N, labelled as ``ls --json`` shows them (else by number;
        the channel bounds them to one printable line); the token they answer with, and the
        options they offer, are remembered for that cue."""
        ticket = self.book.current
        offered = self._button_options(ticket) if ticket is not None else []
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
        shown = self._shown(ticket)
        return {
            "kind": ticket.kind,
            "token": ticket.token,
            "options": list(options) if shown else None,
            "count": len(options),
        }

    def close(self) -> None:
        self._end("exit")
