"""Pi's selector dialog read from screen lines, and the keys that pick an option (pure).

Pi draws ``ctx.ui.confirm`` and ``ctx.ui.select`` with one component (docs/answering.md)::

    ────────────────────────────         border
                                         spacer
     Title                               the title (confirm: the title, then its message)
     (more title lines)
                                         spacer
     → Yes                               the options; the arrow marks the selected one
       No
                                         spacer
     ↑↓ navigate  enter select  escape/ctrl+c cancel
                                         spacer
    ────────────────────────────         border

A list longer than Pi shows at once (10) gets a ``(3/12)`` line and scrolls: such a dialog
is not read (its options are not all on the screen). Anything that does not fit this layout
is not a dialog: ``parse`` returns None, and nothing is answered from a guess.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

MAX_OPTIONS = 10  # what Pi shows without scrolling
MAX_LABEL = 200
MAX_TITLE = 500

_HINT = re.compile(r"^\s*↑↓ navigate\s+\S.*\bselect\b.*\bcancel\b\s*$")
_BORDER = re.compile(r"^\s*─{3,}\s*$")
_SELECTED = re.compile(r"^ → (\S.*?)\s*$")
_OTHER = re.compile(r"^   (\S.*?)\s*$")
_SCROLL = re.compile(r"^\s*\(\d+/\d+\)\s*$")


class Dialog(NamedTuple):
    title: str  # the title lines joined by one space (confirm: title and message)
    options: tuple[str, ...]
    selected: int  # 0-based


def _norm(text: str) -> str:
    return " ".join(text.split())


def parse(lines: Sequence[str]) -> Dialog | None:
    """The dialog the screen shows, read from its lines (top to bottom), or None. The last
    hint line on the screen is the dialog's."""
    hint = next((i for i in range(len(lines) - 1, -1, -1) if _HINT.match(lines[i])), None)
    if hint is None:
        return None
    i = hint - 1
    if i < 0 or lines[i].strip():
        return None  # a spacer above the hint
    i -= 1
    options: list[str] = []
    selected: int | None = None
    while i >= 0 and lines[i].strip():
        line = lines[i]
        if _SCROLL.match(line):
            return None  # a scrolled list: not all options are shown
        m = _SELECTED.match(line)
        if m is not None:
            if selected is not None:
                return None
            selected = len(options)
        else:
            m = _OTHER.match(line)
            if m is None:
                return None
        options.append(m.group(1))
        i -= 1
    if selected is None or not options or len(options) > MAX_OPTIONS:
        return None
    options.reverse()
    selected = len(options) - 1 - selected
    # the title block: above one spacer, up to the spacer under the border
    if i < 0 or lines[i].strip():
        return None
    i -= 1
    title: list[str] = []
    while i >= 0 and lines[i].strip() and not _BORDER.match(lines[i]):
        title.append(lines[i].strip())
        i -= 1
    if not title or i < 1 or lines[i].strip() or not _BORDER.match(lines[i - 1]):
        return None
    title.reverse()
    labels = tuple(o[:MAX_LABEL] for o in options)
    return Dialog(_norm(" ".join(title))[:MAX_TITLE], labels, selected)


# -- the Ask questionnaire (rpiv-ask-user-question), one single-choice question ---------------
#
#     ────────────────────────────        border
#                                         spacer
#       Color                             the header
#                                         spacer
#      Which color should the button be?  the question (may wrap)
#                                         spacer
#     ❯ 1. Blue                           the options, numbered; ❯ marks the selected one
#          The calm default               each option's description, indented
#       2. Red
#          Loud and urgent
#       3. Type something.                the free-text row (not an option here)
#                                         spacer
#     ────────────────────────────        border
#                                         spacer
#      Enter to select · ↑/↓ to navigate · n to add notes · Esc to cancel · …

_ASK_HINT = re.compile(r"^\s*Enter to select · ↑/↓ to navigate\b.*\bEsc to cancel\b")
_ASK_OPTION = re.compile(r"^(❯| ) (\d{1,2})\. (\S.*?)\s*$")
_ASK_FREE = "Type something."


def numbered_options(
    block: Sequence[str], option: re.Pattern[str], other: Callable[[str, list[str]], bool]
) -> tuple[list[str], int | None] | None:
    """The numbered options of a dialog's ``block`` (its rows, top down): their labels in order
    and the index of the one marked (``❯``, ``›``; None: no row is). ``option`` matches an option's
    row (groups: the mark, the number, the label); any other row is handed to ``other(row,
    options so far)``, which may extend the last label and says whether the row belongs.
    None when one does not, the numbers do not count up from 1, or two rows are marked."""
    options: list[str] = []
    selected: int | None = None
    for row in block:
        m = option.match(row)
        if m is None:
            if not other(row, options):
                return None
            continue
        if int(m.group(2)) != len(options) + 1:
            return None
        if m.group(1).strip():  # the selection's mark (❯, ›)
            if selected is not None:
                return None
            selected = len(options)
        options.append(m.group(3))
    return options, selected


def ask_options(
    block: Sequence[str],
    option: re.Pattern[str],
    other: Callable[[str, list[str]], bool],
    most: int,
) -> tuple[list[str], int] | None:
    """An "ask the user" questionnaire's single choice (Pi's Ask, Claude Code's
    AskUserQuestion: the same shape), from its ``block`` as :func:`numbered_options` reads it:
    the options before the last row's free text ("Type something."), and the one marked. None
    when the free-text row is missing, the mark is on it or on none, there are none or more
    than ``most``, or they are checkboxes (a multi-select)."""
    read = numbered_options(block, option, other)
    if read is None:
        return None
    options, selected = read
    if not options or options[-1] != _ASK_FREE:
        return None
    options.pop()
    if not options or len(options) > most or selected is None or selected >= len(options):
        return None  # (the selection on the free-text row: not read)
    if any(o.startswith("[") for o in options):
        return None  # checkboxes: a multi-select
    return options, selected


def _ask_description(line: str, options: list[str]) -> bool:
    """A description belongs under an option, indented."""
    return bool(options) and line.startswith("     ")


def parse_ask(lines: Sequence[str]) -> Dialog | None:
    """The Ask questionnaire's one single-choice question on the screen, or None (several
    questions show tabs, a multi-select shows checkboxes: neither fits)."""
    hint = next((i for i in range(len(lines) - 1, -1, -1) if _ASK_HINT.match(lines[i])), None)
    if hint is None:
        return None
    i = hint - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i < 0 or not _BORDER.match(lines[i]):
        return None
    i -= 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    block: list[str] = []  # the options and their descriptions, bottom up
    while i >= 0 and lines[i].strip():
        block.append(lines[i])
        i -= 1
    block.reverse()
    read = ask_options(block, _ASK_OPTION, _ask_description, MAX_OPTIONS)
    if read is None:
        return None
    options, selected = read
    # the question: the block above one spacer, itself under a spacer, the header, a spacer
    if i < 0:
        return None
    while i >= 0 and not lines[i].strip():
        i -= 1
    question: list[str] = []
    while i >= 0 and lines[i].strip() and not _BORDER.match(lines[i]):
        question.append(lines[i].strip())
        i -= 1
    question.reverse()
    if len(question) < 1:
        return None
    return Dialog(_norm(" ".join(question))[:MAX_TITLE], tuple(o[:MAX_LABEL] for o in options),
                  selected)  # fmt: skip


def ask_matches(dialog: Dialog, check: str | None, key: str) -> bool:
    """The Ask question on the screen is the one the bridge announced: the question and the
    labels, each one line, joined by NUL, as ``title_check`` makes it."""
    if not check:
        return False
    text = "\0".join([_norm(dialog.title), *(_norm(o) for o in dialog.options)])
    return hmac.compare_digest(title_check(text, key), check)


def title_check(line: str, key: str) -> str:
    """What the bridge sends for a dialog's title (its first line made one line): the length
    in code points and an HMAC-SHA256 keyed with the bridge's token (the title's text never
    crosses the socket)."""
    mac = hmac.new(key.encode(), line.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"{len(line)}:{mac}"


def matches_bridge(dialog: Dialog, kind: str, check: str | None, key: str) -> bool:
    """The dialog on the screen is the one the bridge opened: a confirm shows exactly Yes /
    No, and the screen's title begins with the bridge's title (``check``: ``title_check``; a
    confirm's message follows its title, a long title wraps over several lines)."""
    if kind == "confirm" and dialog.options != ("Yes", "No"):
        return False
    if kind not in ("confirm", "select") or not check:
        return False
    count, _, _mac = check.partition(":")
    if not count.isdecimal() or not 0 < int(count) <= MAX_TITLE:
        return False
    line = _norm(dialog.title)[: int(count)].rstrip()
    return hmac.compare_digest(title_check(line, key), check)


def resolve_choice(options: Sequence[str], choice: str) -> int | None:
    """CHOICE as a 1-based number or an option's label (case-insensitive): the 0-based
    index, or None."""
    text = choice.strip()
    if text.isdecimal() and len(text) <= 4:
        n = int(text)
        return n - 1 if 1 <= n <= len(options) else None
    folded = text.casefold()
    hits = [i for i, o in enumerate(options) if o.strip().casefold() == folded]
    return hits[0] if len(hits) == 1 else None


class Keys(NamedTuple):
    """The selector's keys as bytes for Pi's input."""

    up: bytes
    down: bytes
    confirm: bytes


DEFAULT_KEYS = Keys(up=b"\x1b[A", down=b"\x1b[B", confirm=b"\r")


def keys_for(selected: int, target: int, keys: Keys = DEFAULT_KEYS) -> bytes:
    """The bytes that move the selection from ``selected`` to ``target`` and confirm."""
    move = keys.down * (target - selected) if target >= selected else keys.up * (selected - target)
    return move + keys.confirm


# -- the user's keybindings (Pi's keybindings.json) -------------------------------------------

_ACTIONS = {
    "up": ("tui.select.up", "selectUp"),
    "down": ("tui.select.down", "selectDown"),
    "confirm": ("tui.select.confirm", "selectConfirm"),
}
_EXPAND = ("app.tools.expand", "expandTools")  # checked before the selector's own keys
_NAMED = {"up": b"\x1b[A", "down": b"\x1b[B", "enter": b"\r", "tab": b"\t", "space": b" "}


def key_bytes(key_id: str) -> bytes | None:
    """A Pi key id as the bytes a terminal sends for it, for the few cuewrap can type:
    ``up``, ``down``, ``enter``, ``tab``, ``space``, ``ctrl+<letter>``, one letter or digit."""
    k = key_id.strip().lower()
    if k in _NAMED:
        return _NAMED[k]
    if k.startswith("ctrl+") and len(k) == 6 and "a" <= k[5] <= "z":
        return bytes([ord(k[5]) - 96])
    if len(k) == 1 and (k.isascii() and k.isalnum()):
        return k.encode()
    return None


def _ids(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def selector_keys(bindings: object) -> Keys | str:
    """The selector's keys under the user's keybindings (the parsed file; anything not a
    JSON object counts as none), or why cuewrap cannot know them."""
    if not isinstance(bindings, dict):
        return DEFAULT_KEYS
    chosen: dict[str, bytes] = {}
    for action, names in _ACTIONS.items():
        value = next((bindings[n] for n in names if n in bindings), None)
        if value is None:
            chosen[action] = getattr(DEFAULT_KEYS, action)
            continue
        ids = _ids(value)
        typed = [b for b in (key_bytes(i) for i in ids or ()) if b is not None]
        if not typed:
            return f"Pi's keybindings map the selector's {action} key to keys cuewrap cannot type"
        chosen[action] = typed[0]
    expand = next((bindings[n] for n in _EXPAND if n in bindings), None)
    taken = {key_bytes(i) for i in _ids(expand) or ()} if expand is not None else set()
    if expand is None and b"\x0f" in chosen.values():
        taken = {b"\x0f"}  # ctrl+o, the default of app.tools.expand
    if taken & set(chosen.values()):
        return "Pi's keybindings give a selector key to another action"
    return Keys(up=chosen["up"], down=chosen["down"], confirm=chosen["confirm"])
