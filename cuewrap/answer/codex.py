"""Codex CLI's approval dialogs read from screen lines (generic mode; pure; docs/answering.md).

Codex CLI (0.171.0) reports ``blocked:kind=permission`` (OSC 7501) when it asks, and draws the
dialog at the bottom of its screen (as pyte reads it, spaces and all)::

      Would you like to run the following command?      the question
                                                        (blank)
      Environment: local                                what is asked: the reason, the
      Reason: Make a file                               command, the edits, the host …
      $ touch made-by-the-tool
                                                        (blank)
    › 1. Yes, proceed (y)                               the numbered options, › the selected
      2. Yes, and don't ask again for commands that start with `touch …` (p)
      3. No, and tell Codex what to do differently (esc)
                                                        (blank)
      Press enter to confirm or esc to cancel           the key hint

The same frame asks "Would you like to make the following edits?", "… grant these
permissions?", "… send input to the existing terminal?" and "Do you want to approve network
access to …?". Each option's shortcut in parentheses is not part of its label.

Keys (measured with 0.171.0): a digit picks that option and confirms it at once, wherever the
selection is (``2`` took "don't ask again", ``3`` refused: the command did not run, Codex
reported ``working`` then ``idle``); a digit typed into its prompt is one character. So the
default: one digit, absolute.

The one-time yes: "Yes, proceed", "Yes, just this once". The refusals: "No, and tell Codex
what to do differently", "No, continue without running it", "No, but continue without it".
Everything else widens or lasts ("don't ask again …", "… for this session", "allow this host
in the future", "No, and block this host in the future", an option not known): only by its
exact label with the session's pid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cuewrap.answer import own
from cuewrap.answer.dialog import MAX_TITLE, Dialog

MAX_ABOVE = 60  # rows between the question and the options (a long diff does not fit)

_HINT = re.compile(r"^  Press enter to confirm or esc to cancel\s*$")
_OPTION = re.compile(r"^(›| ) ([1-9])\. (\S.*?)\s*$")
_MORE = re.compile(r"^ {5,}(\S.*?)\s*$")  # a long option wrapped onto the next row
_QUESTION = re.compile(r"^  (Would you like to \S.*\?|Do you want to approve \S.*\?)\s*$")
ONCE = ("Yes, proceed", "Yes, just this once")
NO = (
    "No, and tell Codex what to do differently",
    "No, continue without running it",
    "No, but continue without it",
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _wrapped(row: str, options: list[str]) -> bool:
    more = _MORE.match(row)
    if not options or more is None:
        return False
    options[-1] = f"{options[-1]} {more.group(1)}"
    return True


def parse(lines: Sequence[str]) -> Dialog | None:
    """Codex's approval dialog at the bottom of the screen, or None. Its title is the
    question and what is asked (the rows between it and the options), one line; one option
    must be the one-time yes and one a refusal."""
    rows = [line.rstrip() for line in lines]
    while rows and not rows[-1]:
        rows.pop()
    i = len(rows) - 1
    if i < 0 or not _HINT.match(rows[i]):
        return None
    i -= 1
    while i >= 0 and not rows[i]:
        i -= 1
    block: list[str] = []
    while i >= 0 and (_OPTION.match(rows[i]) or _MORE.match(rows[i])):
        block.append(rows[i])
        i -= 1
    block.reverse()
    found = own.listed_options(block, _OPTION, _wrapped, ONCE, NO)
    if found is None:
        return None
    labels, selected = found
    top = i
    while top >= 0 and i - top <= MAX_ABOVE and not _QUESTION.match(rows[top]):
        top -= 1
    if top < 0 or not _QUESTION.match(rows[top]):
        return None
    asked = [r.strip() for r in rows[top : i + 1] if r.strip()]
    return Dialog(_norm(" ".join(asked))[:MAX_TITLE], labels, selected)


CODEX = own.Listed("codex", parse, ONCE, NO)
