"""tmux control mode (``tmux -C``), the part cuewrap reads: a pure incremental reader of the
client's output lines; and the escaping of text shown by ``display-message``. No I/O here.

Control mode writes one line per item. A command's answer is a block::

    %begin <time> <number> <flags>
    ...output lines...
    %end <time> <number> <flags>        (or %error … when the command failed)

``flags`` is 1 for a command this client wrote and 0 otherwise (the ``attach`` on the
command line, hooks), so answers are matched to our commands in order among the blocks with
flags 1. Outside blocks, every line starting with ``%`` is a notification
(``%session-window-changed $1 @2``, ``%client-detached /dev/pts/3``, ``%exit``, …).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINE = 65536  # a longer line (there is none in what we ask for) is cut there
MAX_BLOCK_LINES = 4096  # lines kept per answer; more are dropped (counted)


@dataclass(frozen=True)
class Notification:
    name: str  # without the leading '%', e.g. "session-window-changed"
    args: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    ok: bool  # %end (True) or %error (False)
    lines: tuple[str, ...]
    ours: bool  # flags == 1: the answer to a command this client wrote


Item = Notification | Reply


class ControlReader:
    """Bytes in, notifications and replies out. Keeps a partial line between feeds."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._block: list[str] | None = None
        self._block_ours = False
        self.dropped = 0  # lines cut or dropped

    def feed(self, data: bytes) -> list[Item]:
        self._buf += data
        out: list[Item] = []
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                if len(self._buf) > MAX_LINE:  # a runaway line: keep its head only
                    self.dropped += 1
                    del self._buf[MAX_LINE:]
                break
            raw = bytes(self._buf[:nl])
            del self._buf[: nl + 1]
            if len(raw) > MAX_LINE:
                raw = raw[:MAX_LINE]
                self.dropped += 1
            item = self._line(raw.decode("utf-8", "replace").rstrip("\r"))
            if item is not None:
                out.append(item)
        return out

    def _line(self, line: str) -> Item | None:
        if self._block is not None:
            head = line.split(" ", 1)[0]
            if head in ("%end", "%error") and _flags(line) == self._block_ours:
                lines, self._block = tuple(self._block), None
                return Reply(head == "%end", lines, self._block_ours)
            if len(self._block) < MAX_BLOCK_LINES:
                self._block.append(line)
            else:
                self.dropped += 1
            return None
        if line.startswith("%begin"):
            self._block = []
            self._block_ours = _flags(line)
            return None
        if line.startswith("%"):
            name, *args = line[1:].split(" ")
            return Notification(name, tuple(args))
        self.dropped += 1  # nothing else is expected outside a block
        return None


def _flags(line: str) -> bool:
    parts = line.split(" ")
    return len(parts) >= 4 and parts[3] == "1"


def literal(text: str) -> str:
    """Text shown by ``display-message``, which expands formats: '#' doubled."""
    return text.replace("#", "##")
