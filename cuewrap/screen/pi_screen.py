"""Is Pi working? Read from the bottom lines of a screen (pure: no pyte, no I/O).

Pi 1.4.0's layout, bottom of the screen, top to bottom (docs/pi-facts.md#screen)::

    ── ⠋ Working ──────────────────────   editor top border: the run status while working
                                           editor line(s)
    ───────────────────────────────────   editor bottom border
    /home/me/project                       cwd line
    ↑200 ↓20 0.1%/128k (auto)  fake-model  stats line

Working: the top border carries a spinner frame (``⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏``) and a message (``Working``,
``Retrying (1/2) in 1s... (escape to cancel)``, ``Auto-compacting...``, or whatever an
extension set). Idle: the top border is a plain ``────`` line. A dialog (``ctx.ui.confirm``,
select, the Ask questionnaire) replaces the editor and the spinner but keeps plain borders
around it, so it is recognised by its key hints and is never read as idle.

Only the bottom ``WINDOW`` lines are read. Anything that does not fit the layout is
``unknown``: the screen source never claims idle on a guess (a false idle would be a false
"finished" cue), while a false working only delays a cue.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Verdict = Literal["working", "idle", "dialog", "unknown"]

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
WINDOW = 8  # editor top border, editor line, bottom border, cwd, stats, and some slack

# `── ⠋ Working ───…`; the message may be cut at the right edge on a narrow terminal.
_STATUS_BORDER = re.compile(rf"^─{{2,}} [{SPINNER_FRAMES}] \S")
_PLAIN_BORDER = re.compile(r"^─{8,}$")
# Key hints of dialogs: native `↑↓ navigate  enter select  escape/ctrl+c cancel`, the Ask
# questionnaire `Enter to select … Esc to cancel`. Broad on purpose: a false "dialog" (say,
# the user typed such words into the editor) only withholds an idle verdict.
_DIALOG_HINT = re.compile(
    r"\b(?:esc|escape)\b.*\bcancel\b|\benter\b.*\b(?:select|submit|confirm)\b", re.I
)


def classify(lines: Sequence[str]) -> Verdict:
    """The verdict for a screen given as its display lines (top to bottom; only the last
    ``WINDOW`` are read)."""
    window = [ln.strip() for ln in lines[-WINDOW:]]
    if any(_STATUS_BORDER.match(ln) for ln in window):
        return "working"
    if any(_DIALOG_HINT.search(ln) for ln in window):
        return "dialog"
    borders = [i for i, ln in enumerate(window) if _PLAIN_BORDER.match(ln)]
    # Idle needs the editor's two plain borders with at least one editor line between them.
    if len(borders) >= 2 and borders[-1] - borders[-2] >= 2:
        return "idle"
    return "unknown"


def dialog_shown(lines: Sequence[str]) -> bool:
    """Does Pi show a dialog in its editor's place? Stricter than ``classify``'s "dialog":
    read on the whole screen (its blank rows at the bottom left out, as when Pi's output does
    not fill it yet), the last key hint must be followed by exactly one plain border (the
    dialog's bottom one, then Pi's cwd and stats lines) and no run status. A hint in the
    output above an idle editor has the editor's two borders below it; while Pi works, the
    editor's top border carries the spinner. So only a dialog Pi draws says yes (what
    ``--no-bridge`` requires of a ``blocked`` report: docs/terminal-guard.md)."""
    rows = [ln.strip() for ln in lines]
    while rows and not rows[-1]:
        rows.pop()
    window = rows[-WINDOW:]
    if any(_STATUS_BORDER.match(ln) for ln in window):
        return False
    hints = [i for i, ln in enumerate(window) if _DIALOG_HINT.search(ln)]
    if not hints:
        return False
    below = [ln for ln in window[hints[-1] + 1 :] if _PLAIN_BORDER.match(ln)]
    return len(below) == 1
