"""Provenance in Pi mode: which of Pi's output is Pi's own (docs/terminal-guard.md, "Whose
sequence is it").

With the bridge, the extension inside Pi wraps ``process.stdout.write``. Right before Pi's first
frame it writes :data:`MARK` into the output, and from then on every write of Pi's that is made
of nothing but escape sequences acting outside the window (a title, a status report, progress, a
notification, a clipboard write, a query) is sent to cuewrap over the bridge socket instead of
the terminal (an ``own`` message, :func:`own_write_refusal` checks it). So after the mark the
byte stream carries no sequence of Pi's own of those kinds: every one in it is content Pi draws,
and nothing in the stream can say otherwise (the socket accepts only Pi's own process).

Before the mark nothing of content can be in the stream (Pi draws nothing before its first
frame), and a mark that content writes can only make cuewrap stricter, never laxer.

A Pi that draws no frames (``-p``, ``--mode json`` or ``rpc``: :func:`headless`) writes
nothing of its own to the terminal but what its extensions write: all of its output is content
from the first byte (with the bridge, the extension writes the mark at its runtime's start and
diverts those writes as in the TUI).

Pure: :class:`MarkFinder` looks for the mark in the output chunks (incremental: a mark cut
between two reads is found too); :func:`own_write_refusal` is the check of an ``own`` write;
:func:`headless` reads Pi's command line.
"""

from __future__ import annotations

import re

# The extension writes exactly these bytes (cuewrap-bridge.ts, PROVENANCE_MARK): a DCS that no
# terminal acts on (an unknown DCS is ignored), taken out of the output where it is whole.
MARK = b"\x1bP0;cuewrap-provenance-1\x1b\\"
FRAME_ON = b"\x1b[?2026h"
_TAIL = len(MARK) - 1

# One complete escape sequence of an own write: an OSC (BEL or ST), a DCS (ST), a CSI.
_OWN_TOKEN = re.compile(
    rb"\x1b\][^\x07\x1b\x18\x1a]*(?:\x07|\x1b\\)"
    rb"|\x1bP[^\x1b\x18\x1a]*\x1b\\"
    rb"|\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
)
_OWN_WRITE = re.compile(rb"(?:" + _OWN_TOKEN.pattern + rb")+")
# a DEC private mode set or reset (the screen's order depends on it: never an own write)
_PRIVATE_MODE = re.compile(rb"\x1b\[\?[0-9;]*[hl]")
OWN_MAX = 256 * 1024  # bytes of one own write (Pi's /copy: up to 100 000 bytes, base64)


class MarkFinder:
    """Looks for :data:`MARK` in the child's output, chunk by chunk, until it is found or Pi's
    first frame began without it (then the extension is not there, or not wrapping: give up)."""

    def __init__(self) -> None:
        self._tail = b""  # the last bytes of the previous chunk (a mark cut between reads)

    def look(self, data: bytes) -> tuple[int, int] | None:
        """Where the mark is in ``data``: ``(start, end)``, ``start`` negative when the mark
        began in the previous chunk (its first ``-start`` bytes were released already). ``(-1,
        -1)`` is never returned; None: not here. :attr:`gave_up` says whether to stop looking."""
        tail = self._tail
        i = data.find(MARK)
        if i >= 0:
            return i, i + len(MARK)
        if tail:
            joined = tail + data[:_TAIL]
            j = joined.find(MARK)
            if j >= 0:
                start = j - len(tail)
                return start, start + len(MARK)
        self._tail = data[-_TAIL:] if len(data) >= _TAIL else (tail + data)[-_TAIL:]
        return None

    def gave_up(self, data: bytes) -> bool:
        """Pi's first frame began in ``data`` (which held no mark): no mark will come."""
        return data.find(FRAME_ON) >= 0


def own_write_refusal(data: bytes) -> str:
    """Why ``data`` (an ``own`` message's bytes) is not one of Pi's own writes, or "" when it
    is: at most :data:`OWN_MAX` bytes of nothing but complete OSC, DCS and CSI sequences, no DEC
    private mode set among them (the extension sends only those; anything else is refused)."""
    if not data:
        return "empty"
    if len(data) > OWN_MAX:
        return "too_long"
    if _OWN_WRITE.fullmatch(data) is None:
        return "not_sequences"
    if _PRIVATE_MODE.search(data) is not None:
        return "private_mode"
    return ""


# Pi's options that take a value (1.4.0's cli/args.js): their value is never an option itself
_VALUED = frozenset(
    "--provider --model --api-key --system-prompt --append-system-prompt --session --session-id "
    "--fork --session-dir --models --tools -t --exclude-tools -xt --thinking --export "
    "--extension -e --skill".split()
)


def headless(argv: list[str]) -> bool:
    """Pi's arguments (without the program) start it without its TUI: ``-p`` / ``--print``,
    ``--mode json`` or ``--mode rpc`` before a ``--``. Read as Pi reads them where it matters
    (an option's value is skipped); a doubtful reading says headless, the stricter one."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return False
        if arg in ("-p", "--print"):
            return True
        if arg == "--mode":
            if i + 1 < len(argv) and argv[i + 1] in ("json", "rpc"):
                return True
        elif arg in _VALUED:
            i += 1
        i += 1
    return False
