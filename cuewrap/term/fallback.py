"""The guard's fallback: what still stands between the child and the host terminal after the
output tracker failed (docs/terminal-guard.md#when-the-tracker-fails).

A small pure incremental filter that removes whole OSC sequences of the guarded classes and
passes every other byte as it came, however the reads cut them:

- ``clipboard``: clipboard writes and reads and downloads — OSC 52, OSC 1337 ``Copy=`` and
  ``File=`` / ``MultipartFile=`` without ``inline=1``, OSC 5522 (as ``term.clipboard`` tells
  them, the tracker's own definition);
- ``outside`` (the classes that act outside the window, ``GUARDED_WHATS`` of
  ``term.clipboard``): notifications (OSC 9 in every form, OSC 777, OSC 99), status reports
  (OSC 7501, OSC 21337), titles (OSC 0, 1, 2), the current directory (OSC 7), fonts (OSC 50),
  colour queries and iTerm2's commands (OSC 1337 but images, copies and downloads).

Unlike the tracker it cannot tell the child's own sequences from the content it prints, nor
the user's action from the model's: every sequence of a guarded class is removed.

What a sequence is, as the tracker reads it: ``ESC``, C0 controls the terminal ignores, ``]``,
its content (C0 controls in it ignored for classifying; its number read as any terminal reads
it, ``term/oscnum.py``), ended by BEL, ``ESC \\``, CAN, SUB, or
an ``ESC`` not followed by ``\\`` (which begins the next sequence). A removed sequence leaves
``ESC CAN`` in its place: what its ``ESC`` did to the terminal's parser (a half-written UTF-8
character or an unfinished sequence before it is cut off as it would have been), then back to
the ground state. A sequence whose class is not known yet is held back (it is invisible
anyway), never passed undecided; one still undecided after ``HEAD_MAX`` bytes is removed.
Once decided, the rest of it is passed or dropped as it arrives, of any length.
"""

from __future__ import annotations

import re

from cuewrap.term.clipboard import CLIP, MAYBE, clip_head

HEAD_MAX = 8192  # bytes of a sequence held to classify it (the tracker looks at as many)
NEUTRAL = b"\x1b\x18"  # ESC CAN: what a removed sequence leaves in its place

_ESC_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")  # between ESC and ]: ignored
_OSC_STOP = re.compile(rb"[\x07\x18\x1a\x1b]")  # BEL, CAN, SUB, ESC

KEEP, DROP, UNDECIDED = 0, 1, 2
_GROUND, _ESC, _HEAD, _PASS, _DROP, _PASS_ESC, _DROP_ESC = range(7)


def classify(head: bytes, final: bool, clipboard: bool, outside: bool) -> int:
    """KEEP, DROP or UNDECIDED for ``head``: ``ESC [C0…] ] content`` without its terminator;
    ``final``: the terminator has come (the content is complete). The tracker's classes, read
    the tracker's way (``clip_head``: every spelling of the number a terminal reads)."""
    if len(head) > HEAD_MAX:
        return DROP if clipboard or outside else KEEP
    kind, _, _ = clip_head(head, final, clipboard, outside)
    if kind == CLIP:
        return DROP
    return UNDECIDED if kind == MAYBE else KEEP


class GuardFallback:
    """``feed(chunk) -> bytes`` to write to the host; pure, no clock, no I/O. ``removed``:
    sequences removed so far. A lone ``ESC`` or an undecided sequence at the end of a chunk
    is held until the next one (``held``)."""

    def __init__(self, *, clipboard: bool = True, outside: bool = True) -> None:
        self.clipboard = clipboard
        self.outside = outside
        self.removed = 0
        self._state = _GROUND
        self.held_bytes = bytearray()  # ESC [C0…] while _ESC; the sequence's head while _HEAD

    @property
    def held(self) -> bool:
        return bool(self.held_bytes) or self._state in (_PASS_ESC, _DROP_ESC)

    def feed(self, data: bytes) -> bytes:
        if not self.clipboard and not self.outside:
            return data
        out = bytearray()
        i, n = 0, len(data)
        while i < n:
            state = self._state
            if state == _GROUND:
                j = data.find(b"\x1b", i)
                if j < 0:
                    out += data[i:]
                    break
                out += data[i:j]
                self.held_bytes[:] = b"\x1b"
                self._state = _ESC
                i = j + 1
            elif state == _ESC:
                m = _ESC_SKIP.match(data, i)
                j = m.end() if m is not None else i
                self.held_bytes += data[i:j]
                i = j
                if i >= n:
                    if len(self.held_bytes) > HEAD_MAX:  # a runaway run of controls: undecided
                        self.removed += 1
                        out += NEUTRAL  # what follows is text on the host
                        self.held_bytes.clear()
                        self._state = _GROUND
                    break
                if data[i] == 0x5D:  # ]
                    self.held_bytes.append(0x5D)
                    self._state = _HEAD
                    i += 1
                else:  # not an OSC: the ESC and what followed go as they are
                    out += self.held_bytes
                    self.held_bytes.clear()
                    self._state = _GROUND
                    if data[i] == 0x1B:
                        continue  # a new ESC: the ground state finds it
            elif state == _HEAD:
                m = _OSC_STOP.search(data, i)
                j = m.start() if m is not None else n
                self.held_bytes += data[i:j]
                i = j
                final = m is not None
                kind = classify(bytes(self.held_bytes), final, self.clipboard, self.outside)
                if kind == UNDECIDED:
                    if not final and len(self.held_bytes) <= HEAD_MAX:
                        break  # all of the chunk is in the head: wait for more
                    kind = DROP  # never passed undecided
                if kind == DROP:
                    self.removed += 1
                    out += NEUTRAL
                    self._state = _DROP
                else:
                    out += self.held_bytes
                    self._state = _PASS
                self.held_bytes.clear()
            else:  # _PASS / _DROP and their ESC: the rest of a decided sequence
                passing = state in (_PASS, _PASS_ESC)
                if state in (_PASS_ESC, _DROP_ESC):
                    if data[i] == 0x5C:  # ESC \ (ST): the end
                        if passing:
                            out += b"\x1b\\"
                        self._state = _GROUND
                        i += 1
                    else:  # the ESC ended it and begins what follows: held with that
                        self.held_bytes[:] = b"\x1b"
                        self._state = _ESC
                    continue
                m = _OSC_STOP.search(data, i)
                j = m.start() if m is not None else n
                if passing:
                    out += data[i:j]
                if m is None:
                    break
                stop = data[j]
                i = j + 1
                if stop == 0x1B:
                    self._state = _PASS_ESC if passing else _DROP_ESC
                else:  # BEL ends it; CAN, SUB abort it: part of it either way
                    if passing:
                        out.append(stop)
                    self._state = _GROUND
        return bytes(out)

    def flush(self) -> bytes:
        """At the end of the output: a held ``ESC`` (and the controls after it) goes, a
        sequence still undecided is removed."""
        out = b""
        if self._state == _ESC:
            out = bytes(self.held_bytes)
        elif self._state in (_PASS_ESC, _DROP_ESC):
            out = b"\x1b"  # it ended a sequence and begins one that never came
        elif self._state == _HEAD:
            kind = classify(bytes(self.held_bytes), False, self.clipboard, self.outside)
            if kind == KEEP:
                out = bytes(self.held_bytes)
            else:
                self.removed += 1
                out = NEUTRAL
        self.held_bytes.clear()
        self._state = _GROUND
        return out
