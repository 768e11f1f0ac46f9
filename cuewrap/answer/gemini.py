"""Gemini CLI's tool approval dialog read from screen lines (generic mode; pure;
docs/answering.md).

Gemini CLI (0.61.0) reports no state; its own notification "Gemini CLI needs your attention" /
"Approval required" (engine/notices.py: ``permission``) says it waits for an approval, and it
draws the dialog as a box under the transcript, the last thing on the screen (as pyte reads
it; blank rows below)::

    ╭──────────────────────────────────────────╮    the box's top
    │ ? Shell  touch made-by-the-tool          │    the tool and what it runs
    │ ╭──────────────────────────────────────╮ │    (a box of the command, a diff …)
    │ │ touch made-by-the-tool               │ │
    │ ╰──────────────────────────────────────╯ │
    │ Allow execution of [Shell]?              │    the question
    │                                          │
    │ ● 1. Allow once                          │    the numbered options, ● the selected
    │   2. Allow for this session              │
    │   3. No, suggest changes (esc)           │
    ╰──────────────────────────────────────────╯    the box's bottom

Keys (measured with 0.61.0): a digit picks that option and confirms it at once, wherever the
selection is (``1`` ran the command, ``3`` cancelled it: "Request cancelled."); a digit typed
into its prompt is one character. So the default: one digit, absolute.

The one-time yes: "Allow once". The refusal: "No, suggest changes". Everything else widens
or is another action ("Allow for this session", "Allow for all future sessions", "Modify
with external editor", an option not known): only by its exact label with the session's pid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cuewrap.answer import own
from cuewrap.answer.dialog import MAX_TITLE, Dialog

MAX_ROWS = 60  # rows of the box (a long diff does not fit)

_TOP = re.compile(r"^╭─+╮$")
_BOTTOM = re.compile(r"^╰─+╯$")
_ROW = re.compile(r"^│ (.*?)\s*│$")
_OPTION = re.compile(r"^(●| ) ([1-9])\. (\S.*?)$")
_QUESTION = re.compile(r"^(Allow \S.*\?|Apply this change\?|Do you want to \S.*\?)$")
_HEADER = re.compile(r"^[?] (\S.*)$")
ONCE = ("Allow once",)
NO = ("No, suggest changes",)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _never(row: str, options: list[str]) -> bool:
    return False


def parse(lines: Sequence[str]) -> Dialog | None:
    """Gemini CLI's approval box as the last thing on the screen, or None. Its title is the
    header (the tool and what it runs) and the question, one line; one option must be the
    one-time yes and one the refusal."""
    rows = [line.rstrip() for line in lines]
    while rows and not rows[-1]:
        rows.pop()
    if not rows or not _BOTTOM.match(rows[-1]):
        return None
    top = len(rows) - 2
    while top >= 0 and len(rows) - top <= MAX_ROWS and not _TOP.match(rows[top]):
        top -= 1
    if top < 0 or not _TOP.match(rows[top]) or len(rows[top]) != len(rows[-1]):
        return None
    inner: list[str] = []
    for row in rows[top + 1 : -1]:
        m = _ROW.match(row)
        if m is None or len(row) != len(rows[-1]):
            return None
        inner.append(m.group(1))
    block: list[str] = []
    i = len(inner) - 1
    while i >= 0 and _OPTION.match(inner[i]):
        block.append(inner[i])
        i -= 1
    block.reverse()
    found = own.listed_options(block, _OPTION, _never, ONCE, NO)
    if found is None:
        return None
    labels, selected = found
    while i >= 0 and not inner[i]:
        i -= 1
    if i < 0 or not _QUESTION.match(inner[i]):
        return None
    header = _HEADER.match(inner[0]) if inner else None
    if header is None:
        return None
    title = _norm(f"{header.group(1)} {inner[i]}")[:MAX_TITLE]
    return Dialog(title, labels, selected)


GEMINI = own.Listed("gemini", parse, ONCE, NO)
