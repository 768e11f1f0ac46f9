"""A program's own dialogs read from screen lines, for generic mode (pure; docs/answering.md).

A program that reports its waits itself (OSC 7501 ``blocked:kind=…``) is answerable when its
screen shows a dialog of the report's kind, read here from the screen model's lines. The
layouts are Claude Code's (2.1.x), as it draws them at the bottom of its screen:

``kind=permission`` (every tool: Bash, Write, Edit, WebFetch, MCP tools …)::

    ────────────────────────────────           a solid border, full width
     Bash command                               what is asked (title, command, preview …)
     Run the release step
    ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
     echo RELEASED > released.txt
    ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌
     Do you want to proceed?                    the question
     ❯ 1. Yes                                   the numbered options, ❯ the selected one
       2. Yes, and always allow access to … from this project
       3. No
                                                (blank)
     Esc to cancel · Tab to amend               the key hints (not always there)

``kind=question`` (``AskUserQuestion`` with one single-choice question)::

    ────────────────────────────────
     ☐ Color                                    the question's header: its only tab
                                                (blank)
    Which color should the button be?           the question (may wrap)
                                                (blank)
    ❯ 1. Blue                                   the options …
         The calm default                       … each with its description
      2. Red
      3. Type something.                        free text: not an option here
    ────────────────────────────────
      4. Chat about this                        not an option here
                                                (blank)
    Enter to select · ↑/↓ to navigate · Esc to cancel

The dialog must be the last thing on the screen (below it only the hints and blank rows):
the transcript above it, where the model's text is drawn, is never read as the dialog.
Anything that does not fit is no dialog (None): nothing is answered from a guess.

Keys: Claude Code picks option N at the digit N, wherever the selection is, and confirms it
in the same key; so one digit, absolute. Typed into anything else (the dialog gone) a digit
is one character in the prompt, never a submission (an arrow could recall history, an Enter
could send a draft). Hence at most 9 options.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cuewrap.answer import own
from cuewrap.answer.dialog import MAX_LABEL, MAX_TITLE, Dialog, ask_options, numbered_options

MAX_OPTIONS = 9  # one digit each
MAX_ABOVE = 60  # rows between the border and the question (a long preview does not fit)


_BORDER = re.compile(r"^─{10,}$")
_PERM_OPTION = re.compile(r"^ (❯| ) ([1-9])\. (\S.*?)\s*$")
_PERM_MORE = re.compile(r"^ {5,}(\S.*?)\s*$")  # a long option wrapped onto the next row
_PERM_HINT = re.compile(r"^ Esc to cancel\b")
_QUESTION = re.compile(r"^ Do you want\b.*\?$")
_ASK_HINT = re.compile(r"^Enter to select · ↑/↓ to navigate\b.*\bEsc to cancel\b")
_ASK_CHAT = re.compile(r"^  \d\. Chat about this$")
_ASK_OPTION = re.compile(r"^(❯| ) ([1-9])\. (\S.*?)\s*$")
_ASK_DESC = re.compile(r"^ {5,}\S")
_ASK_HEADER = re.compile(r"^ ☐ (\S.*?)\s*$")
_TABS = ("☐", "☒", "✔", "✓", "←", "→", "Submit")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _trimmed(lines: Sequence[str]) -> list[str]:
    rows = [line.rstrip() for line in lines]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def read(kind: str | None, lines: Sequence[str]) -> Dialog | None:
    """The dialog of the reported ``kind`` the screen shows, or None (another kind, another
    layout: the report and the screen do not agree)."""
    if kind == "permission":
        return parse_permission(lines)
    if kind == "question":
        return parse_question(lines)
    return None


def _wrapped_label(row: str, options: list[str]) -> bool:
    """A permission option's label wrapped onto the next row: it extends the last one."""
    more = _PERM_MORE.match(row)
    if not options or more is None:
        return False
    options[-1] = f"{options[-1]} {more.group(1)}"
    return True


def _description(row: str, options: list[str]) -> bool:
    """A question's description row: it belongs under an option."""
    return bool(options)


def parse_permission(lines: Sequence[str]) -> Dialog | None:
    """Claude Code's permission prompt at the bottom of the screen, or None. Its title is
    everything between the border and the question (what is asked: the tool, the command,
    the file), one line; the first option must be ``Yes`` and one must be a ``No``."""
    rows = _trimmed(lines)
    i = len(rows) - 1
    if i >= 0 and _PERM_HINT.match(rows[i]):
        i -= 1
    while i >= 0 and not rows[i]:
        i -= 1
    block: list[str] = []  # the options' rows, bottom up
    while i >= 0 and (_PERM_OPTION.match(rows[i]) or _PERM_MORE.match(rows[i])):
        block.append(rows[i])
        i -= 1
    block.reverse()
    read = numbered_options(block, _PERM_OPTION, _wrapped_label)
    if read is None:
        return None
    options, selected = read
    if selected is None or len(options) < 2 or len(options) > MAX_OPTIONS:
        return None
    labels = tuple(_norm(o)[:MAX_LABEL] for o in options)
    if labels[0] != "Yes" or not any(is_no(o) for o in labels):
        return None
    if i < 0 or not _QUESTION.match(rows[i]):
        return None
    question = rows[i].strip()
    top = i - 1
    while top >= 0 and not _BORDER.match(rows[top]):
        top -= 1
    if top < 0 or i - top - 1 > MAX_ABOVE or i - top < 2:
        return None
    asked = [r.strip() for r in rows[top + 1 : i] if r.strip() and not set(r.strip()) <= {"╌"}]
    if not asked:
        return None
    title = _norm(" ".join([*asked, question]))[:MAX_TITLE]
    return Dialog(title, labels, selected)


def parse_question(lines: Sequence[str]) -> Dialog | None:
    """``AskUserQuestion``'s one single-choice question at the bottom of the screen, or None
    (several questions show several tabs, a multi-select shows checkboxes: neither fits).
    Its title is the header and the question, one line; the options are the numbered rows
    before "Type something."."""
    rows = _trimmed(lines)
    i = len(rows) - 1
    if i < 0 or not _ASK_HINT.match(rows[i]):
        return None
    i -= 1
    while i >= 0 and not rows[i]:
        i -= 1
    if i >= 0 and _ASK_CHAT.match(rows[i]):
        i -= 1
    if i < 0 or not _BORDER.match(rows[i]):
        return None
    i -= 1
    block: list[str] = []
    while i >= 0 and (_ASK_OPTION.match(rows[i]) or _ASK_DESC.match(rows[i])):
        block.append(rows[i])
        i -= 1
    block.reverse()
    read = ask_options(block, _ASK_OPTION, _description, MAX_OPTIONS)
    if read is None:
        return None
    options, selected = read
    # a blank row, the question, a blank row, its header (the only tab), under the border
    if i < 0 or rows[i]:
        return None
    i -= 1
    question: list[str] = []
    while i >= 0 and rows[i] and not _ASK_HEADER.match(rows[i]) and not _BORDER.match(rows[i]):
        question.append(rows[i].strip())
        i -= 1
    if i >= 0 and not rows[i]:
        i -= 1
    header = _ASK_HEADER.match(rows[i]) if i >= 0 else None
    if header is None or not question or any(t in header.group(1) for t in _TABS):
        return None
    if i < 1 or not _BORDER.match(rows[i - 1]):
        return None
    question.reverse()
    title = _norm(" ".join([header.group(1), *question]))[:MAX_TITLE]
    return Dialog(title, tuple(_norm(o)[:MAX_LABEL] for o in options), selected)


def is_no(label: str) -> bool:
    """A permission prompt's refusal: ``No``, or ``No, and tell Claude what to do …``."""
    return label == "No" or label.startswith("No, ")


def widens(kind: str, label: str) -> bool:
    """Does picking this option let the program do more without asking? In a permission
    prompt everything but the one-time ``Yes`` and a ``No`` counts so ("always allow …",
    "switch to auto mode", "don't ask again …", "allow all edits …", an option not known)."""
    return kind == "permission" and not (label == "Yes" or is_no(label))


def key_for(option: int) -> bytes:
    """The key that picks option ``option`` (0-based) and confirms it: its digit."""
    if not 0 <= option < MAX_OPTIONS:
        raise ValueError(f"option {option + 1} has no digit")
    return str(option + 1).encode()


class ClaudeDialogs(own.Dialogs):
    """Claude Code's dialogs (this module's layouts)."""

    app = "claude-code"
    kinds = ("permission", "question")

    def read(self, kind: str, lines: Sequence[str]) -> Dialog | None:
        return read(kind, lines)

    def once(self, label: str) -> bool:
        return label == "Yes"

    def is_no(self, label: str) -> bool:
        return is_no(label)


CLAUDE = ClaudeDialogs()
