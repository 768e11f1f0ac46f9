"""Pi's dialogs, the answerer's strategy in Pi mode (docs/answering.md): ``confirm`` and
``select`` (``dialog.parse``) and Ask's single-choice question (``dialog.parse_ask``), each
checked against the bridge's word on it (kind, title); the keys under Pi's keybindings file.
The answerer (``answerer.py``) holds one ``PiDialogs``; a program's own dialogs in generic
mode have theirs (``generic.py``'s ``OwnProgram``, ``opencode.py``'s ``OpencodeProgram``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Mapping

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import machine as M
from cuewrap.answer.keysin import ONE_WRITE, Typing
from cuewrap.answer.wire import Request

MAX_BUTTONS = 3  # a longer list gets no buttons
MAX_KEYBINDINGS = 1 << 16  # bytes read of Pi's keybindings file
LOOK_EVERY = 0.15  # seconds between reads of the screen while the dialog is being drawn
READY_WITHIN = 1.5  # seconds a needs-input notification may wait for the dialog's token
ANSWERABLE = ("confirm", "select")
ASK_TOOL = "ask_user_question"
ASK_CALLS = 8  # Ask calls in flight whose checks are kept


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


class PiDialogs:
    """Pi's dialogs: read by kind, agreed with the bridge's title check (``bridge_key``: the
    bridge's token, the key of its checks), picked by the selector's keys (``keys``, read at
    each answer); every option may be chosen from afar; labels leave the session with
    ``privacy.body = "summary"``, or a confirm's (Yes / No)."""

    name = "Pi"  # who closes the dialog (the line cuewrap answer prints)
    twice = False  # a token at the first read that agrees
    by_screen = False  # it closed when the bridge says so (``ui_prompt_end``), not before
    first_look = LOOK_EVERY  # seconds before the first read (Pi draws after it says so)
    settle = 0.0  # seconds the dialog must have been shown before keys go in
    ready_within = READY_WITHIN
    typing: Typing = ONE_WRITE  # its keys in one write (answer/keysin.py)

    def __init__(self, bridge_key: str, keys: Callable[[], D.Keys | str]) -> None:
        self.bridge_key = bridge_key
        self.keys = keys
        self._ask_checks: dict[str, str | None] = {}  # Ask call id -> its question's check

    def fact(self, m: M.Machine, fact: F.Fact, waits: Collection[str]) -> list[M.Action]:
        """Pi's facts as the machine's events: its dialogs (``ui_prompt_start`` / ``_end``),
        Ask's questionnaire, the session's end or reload."""
        if isinstance(fact, F.UiPromptStart):
            if fact.kind in ANSWERABLE and "ui" in waits and not m.open:
                return m.opened(fact.kind, fact.dialog)
            if not (fact.kind == "custom" and m.open and m.kind == "ask"):
                return m.end("another dialog opened")  # (Pi wraps Ask's overlay as custom)
        elif isinstance(fact, F.UiPromptEnd):
            return m.closed(fact.option)
        elif isinstance(fact, F.ToolStart) and fact.tool_name == ASK_TOOL:
            self._ask_checks[fact.tool_call_id] = fact.dialog
            while len(self._ask_checks) > ASK_CALLS:
                del self._ask_checks[next(iter(self._ask_checks))]
        elif isinstance(fact, F.AskBlocked):
            return self._ask_blocked(m, fact, waits)
        elif isinstance(fact, F.ToolEnd) and fact.tool_name == ASK_TOOL:
            self._ask_checks.pop(fact.tool_call_id, None)
            if m.open and m.kind == "ask":
                return m.closed()
        elif isinstance(fact, F.SessionShutdown | F.BridgeGone | F.ChildExit) or (
            isinstance(fact, F.SessionStart) and fact.reason != "startup"
        ):
            return m.end("the session ended or reloaded")
        return []

    def _ask_blocked(
        self, m: M.Machine, fact: F.AskBlocked, waits: Collection[str]
    ) -> list[M.Action]:
        """Ask's questionnaire opened (``active``) or closed. Answerable only for one call in
        flight whose single-choice question the bridge announced, with its wait pending."""
        if not fact.active:
            return m.closed() if m.open and m.kind == "ask" else []
        if m.open:
            return m.end("another dialog opened")
        calls = [fact.tool_call_id] if fact.tool_call_id else list(self._ask_checks)
        check = self._ask_checks.get(calls[0]) if len(calls) == 1 else None
        if check is not None and any(k.startswith("ask:") for k in waits):
            return m.opened("ask", check)
        return [M.Log({"state": "not answerable", "dialog": "ask",
                       "why": "not one single-choice question the bridge announced"})]  # fmt: skip

    def read(self, kind: str, lines: list[str] | None) -> D.Dialog | None:
        """The dialog of ``kind`` on the screen (None: none, or the screen is gone)."""
        if lines is None:
            return None
        return D.parse_ask(lines) if kind == "ask" else D.parse(lines)

    def agrees(self, dialog: D.Dialog, kind: str, check: str | None) -> bool:
        """The dialog read is the one the wait is about (the bridge's title check)."""
        if kind == "ask":
            return D.ask_matches(dialog, check, self.bridge_key)
        return D.matches_bridge(dialog, kind, check, self.bridge_key)

    def keys_for(self, seen: D.Dialog, option: int, keys: D.Keys) -> bytes:
        """The bytes that pick ``option`` (0-based) on the dialog ``seen``."""
        return D.keys_for(seen.selected, option, keys)

    def allow(self, ticket: B.Ticket, index: int, req: Request, source: str) -> str | None:
        """May option ``index`` be chosen so from afar? None, or why not."""
        return None

    def buttons(self, ticket: B.Ticket, summary: bool) -> list[tuple[int, str]]:
        """The options (0-based, label) the notification's buttons offer."""
        if len(ticket.dialog.options) > MAX_BUTTONS:
            return []
        shown = self.shown(ticket, summary)
        return [
            (i, label if shown else str(i + 1)) for i, label in enumerate(ticket.dialog.options)
        ]

    def shown(self, ticket: B.Ticket, summary: bool) -> bool:
        """May the options' labels leave the session (``ls --json``, notify.command)?"""
        return summary or ticket.kind == "confirm"
