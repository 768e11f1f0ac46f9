"""A child that asks the Program Status query as Claude Code does (test_status_query_pty.py).

    python status_query.py [split:SECONDS] [rounds:N]

Each round writes ``CSI > 0 q``, ``OSC 7501 ; ? BEL`` and ``CSI c`` (DA1) in one write (with
``split``: the query cut in two writes that far apart), then reads its input (raw mode) until
the DA1 answer and prints ``ROUND k ORDER=WHAT``: ``status-first`` (the query was answered
before DA1, as a terminal that speaks the protocol does), ``no-status`` or ``status-after``.
If a round was answered it then reports ``working`` and ``done`` (app ``fakeagent``) and
prints ``REPORTED``. It exits on ``q``.
"""

from __future__ import annotations

import os
import re
import sys
import termios
import time
import tty

ANSWER = re.compile(rb"\x1b\]7501;\?(?:\x07|\x1b\\)")
DA1 = re.compile(rb"\x1b\[\?[0-9;]*c")


def out(data: bytes) -> None:
    os.write(1, data)


def main() -> int:
    split = 0.0
    rounds = 1
    for arg in sys.argv[1:]:
        key, _, value = arg.partition(":")
        if key == "split":
            split = float(value)
        elif key == "rounds":
            rounds = int(value)
    saved = termios.tcgetattr(0)
    tty.setraw(0)
    answered = False
    try:
        for k in range(1, rounds + 1):
            if split:
                out(b"\x1b[>0q\x1b]75")
                time.sleep(split)
                out(b"01;?\x07\x1b[c")
            else:
                out(b"\x1b[>0q\x1b]7501;?\x07\x1b[c")
            got = b""
            deadline = time.monotonic() + 10
            while DA1.search(got) is None and time.monotonic() < deadline:
                got += os.read(0, 1024)
            da1 = DA1.search(got)
            status = ANSWER.search(got)
            if status is None:
                order = "no-status"
            elif da1 is not None and status.start() < da1.start():
                order = "status-first"
                answered = True
            else:
                order = "status-after"
            out(f"ROUND {k} ORDER={order}\r\n".encode())
        if answered:
            out(b"\x1b]7501;state=working:app=fakeagent\x1b\\")
            time.sleep(0.3)
            out(b"\x1b]7501;state=done:app=fakeagent\x1b\\")
            out(b"REPORTED\r\n")
        while os.read(0, 1) != b"q":
            pass
        out(b"\x1b]7501;state=clear\x1b\\")
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)
    return 0


if __name__ == "__main__":
    sys.exit(main())
