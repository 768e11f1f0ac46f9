"""The dialog reader: ``python -m cuewrap.answer.worker COLS ROWS`` (pyte, in its own process).

It runs only while an answerable dialog is open (docs/answering.md). Its stdin carries the
screen worker's frames (``cuewrap.screen.worker``: ``D`` data, ``S`` size) plus ``Q``: write
the screen as it is after everything before the query, one JSON line (the list of the
screen's lines, top to bottom). EOF ends it. Its stderr is /dev/null.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from cuewrap.screen.worker import HEADER, parse_size, serve

DATA, SIZE, QUERY = b"D", b"S", b"Q"
MAX_PAYLOAD = 1 << 22


def screen_lines(screen: Any) -> list[str]:
    cols = screen.columns
    return ["".join(screen.buffer[y][x].data for x in range(cols)).rstrip()
            for y in range(screen.lines)]  # fmt: skip


def run(
    in_fd: int,
    out_fd: int,
    cols: int,
    rows: int,
    lines: Callable[[Any], list[str]] = screen_lines,
) -> int:
    """Serve the queries; ``lines``: what a query gets of the screen (its lines; a program's
    reader may want more: ``answer/opencode.py`` its cells' backgrounds too)."""
    import pyte

    from cuewrap.screen.worker import _make_screen

    screen = _make_screen(cols, rows)
    stream = pyte.ByteStream(screen)
    buf = bytearray()
    while True:
        chunk = os.read(in_fd, 1 << 18)
        if not chunk:
            return 0
        buf += chunk
        pos = 0
        while len(buf) - pos >= HEADER.size:
            kind, size = HEADER.unpack_from(buf, pos)
            if size > MAX_PAYLOAD or kind not in (DATA, SIZE, QUERY):
                return 2
            end = pos + HEADER.size + size
            if end > len(buf):
                break
            payload = bytes(buf[pos + HEADER.size : end])
            pos = end
            if kind == DATA:
                try:
                    stream.feed(payload)
                except Exception:  # a pyte bug on odd input: a fresh parser, the cells kept
                    stream = pyte.ByteStream(screen)
            elif kind == SIZE:
                c, r = parse_size(payload)
                screen.resize(lines=r, columns=c)
            else:
                os.write(out_fd, json.dumps(lines(screen)).encode() + b"\n")
        del buf[:pos]


def main(argv: list[str] | None = None) -> int:
    return serve(run, argv)


if __name__ == "__main__":
    sys.exit(main())
