"""The dialog reader's worker, with the cells' backgrounds: ``python -m cuewrap.answer.bgworker
COLS ROWS`` (``worker.py``'s, one query answered with more).

opencode marks the selected button of its permission dialog only by its background
(``answer/opencode.py``): a query gets the screen's lines, then one line per row that says, for
each column, which background its cell has — a letter per distinct background in that row, in
order of first appearance (``a`` the row's first). Rows then signatures: ``2 × ROWS`` strings.
"""

from __future__ import annotations

import string
import sys
from typing import Any

from cuewrap.answer.worker import run, screen_lines
from cuewrap.screen.worker import serve

_MARKS = string.ascii_letters + string.digits  # more distinct backgrounds in a row: "?"


def backgrounds(screen: Any) -> list[str]:
    """Each row's background signature (see the module's docstring)."""
    rows = []
    for y in range(screen.lines):
        line = screen.buffer[y]
        seen: dict[str, str] = {}
        marks = []
        for x in range(screen.columns):
            bg = line[x].bg
            mark = seen.get(bg)
            if mark is None:
                mark = _MARKS[len(seen)] if len(seen) < len(_MARKS) else "?"
                seen[bg] = mark
            marks.append(mark)
        rows.append("".join(marks))
    return rows


def lines_and_backgrounds(screen: Any) -> list[str]:
    return screen_lines(screen) + backgrounds(screen)


def main(argv: list[str] | None = None) -> int:
    return serve(lambda i, o, c, r: run(i, o, c, r, lines=lines_and_backgrounds), argv)


if __name__ == "__main__":
    sys.exit(main())
