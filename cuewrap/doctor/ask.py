"""``cuewrap doctor`` asks the terminal what it is, as ``cuewrap pi`` does at start.

The same query (XTVERSION, kitty's OSC 99 ``p=?`` where the environment says kitty, the
Program Status query ``OSC 7501 ; ?`` as in generic mode, DA1 as the sentinel) and the same
filter (``term.answers``). Doctor can wait for the answers (up to ``timeout``): raw mode
while it waits (no echo of the answers), the user's settings restored on every path. Anything
else read meanwhile (a key pressed) is dropped: doctor is not a child's input.
"""

from __future__ import annotations

import os
import select
import termios
import time
import tty
from collections.abc import Mapping

from cuewrap.deliver.plan import Answers
from cuewrap.host import write_all
from cuewrap.term import sequences as seq
from cuewrap.term.answers import AnswerFilter, TerminalAnswer


def ask_terminal(
    env: Mapping[str, str], stdin_fd: int = 0, stdout_fd: int = 1, timeout: float = 1.0
) -> Answers | None:
    """The terminal's answers, or None when it cannot be asked here (not a terminal, in tmux:
    tmux answers for itself)."""
    if env.get("TMUX") or not (os.isatty(stdin_fd) and os.isatty(stdout_fd)):
        return None
    kitty = env.get("KITTY_WINDOW_ID") or env.get("TERM") == "xterm-kitty"
    ident = f"cuewrap-q{os.getpid()}" if kitty else None
    try:
        saved = termios.tcgetattr(stdin_fd)
    except termios.error:
        return None
    found = Answers()
    filt = AnswerFilter(ident, status=True)
    try:
        tty.setraw(stdin_fd, termios.TCSANOW)
        query = seq.XTVERSION_QUERY
        if ident is not None:
            query += seq.osc99_query(ident)
        write_all(stdout_fd, query + seq.PROGRAM_STATUS_QUERY + seq.DA1_QUERY)
        deadline = time.monotonic() + timeout
        while filt.active:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdin_fd], [], [], left)[0]:
                break
            data = os.read(stdin_fd, 4096)
            if not data:
                break
            for item in filt.feed(data):
                if isinstance(item, TerminalAnswer):
                    found = _add(found, item)
    except OSError:
        return None
    finally:
        try:
            termios.tcsetattr(stdin_fd, termios.TCSADRAIN, saved)
        except termios.error:
            pass
    return found


def _add(found: Answers, answer: TerminalAnswer) -> Answers:
    if answer.kind == "xtversion":
        return Answers(answer.text[:100], found.osc99, found.complete)
    if answer.kind == "osc99":
        return Answers(found.version, answer.text[:500], found.complete)
    if answer.kind == "osc7501":
        return Answers(found.version, found.osc99, found.complete, program_status=True)
    return Answers(found.version, found.osc99, True, found.program_status)
