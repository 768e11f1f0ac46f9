"""Pi's dialogs, the answerer's strategy in Pi mode (docs/answering.md): ``confirm`` and
``select`` (``dialog.parse``) and Ask's single-choice question (``dialog.parse_ask``), each
checked against the bridge's word on it (kind, title); the keys under Pi's keybindings file.
The answerer (``answerer.py``) holds one ``PiDialogs``; a program's own dialogs in generic
mode have theirs (``generic.py``'s ``OwnProgram``, ``opencode.py``'s ``OpencodeProgram``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping

from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer.wire import Request

MAX_BUTTONS = 3  # a longer list gets no buttons
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


class PiDialogs:
    """Pi's dialogs: read by kind, agreed with the bridge's title check (``bridge_key``: the
    bridge's token, the key of its checks), picked by the selector's keys (``keys``, read at
    each answer); every option may be chosen from afar; labels leave the session with
    ``privacy.body = "summary"``, or a confirm's (Yes / No)."""

    name = "Pi"  # who closes the dialog (the line cuewrap answer prints)
    twice = False  # a token at the first read that agrees

    def __init__(self, bridge_key: str, keys: Callable[[], D.Keys | str]) -> None:
        self.bridge_key = bridge_key
        self.keys = keys

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
