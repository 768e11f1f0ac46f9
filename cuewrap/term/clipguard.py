"""The clipboard guard, for the output tracker (``clipboard`` policy, docs/terminal-guard.md):
every clipboard sequence (OSC 52, iTerm2's ``OSC 1337 ; Copy=`` and file downloads, kitty's
OSC 5522; what each is: ``term/clipboard.py``), and with the sequence guard the OSCs that are
content (inside a frame, or a title posing as one of cuewrap's marks), is passed or removed
whole; one at a chunk end is held until its header is known, then streamed to its end. It
works on the scan's shared state (``term/scanstate.py``)."""

from __future__ import annotations

import re

from cuewrap.term.clipboard import (
    CLIP,
    GUARDED_WHATS,
    NOT_CLIP,
    ClipboardPolicy,
    clip_event,
    clip_head,
)
from cuewrap.term.grammar import ESC, ESCB, OSC_STOP, seq_end
from cuewrap.term.openseq import OpenSequence
from cuewrap.term.oscnum import open_number, readings
from cuewrap.term.outevents import Events
from cuewrap.term.scanstate import CAP, NEUTRAL, Cuts, ScanState

OSC_C0 = re.compile(rb"[\x00-\x06\x08-\x17\x19\x1c-\x1f]")
_ESC_OPEN = re.compile(rb"\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*")  # ESC [C0…]
_OSC_INTRO = re.compile(rb"\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*\]")  # ESC [C0…] ]


class ClipGuard:
    """Clipboard (and guarded) OSCs: complete ones (:meth:`osc`), the one at a chunk end
    (:meth:`end`), titles posing as cuewrap's (:meth:`poses`), on the tracker's state ``s``."""

    def __init__(
        self, s: ScanState, policy: ClipboardPolicy | None, marked_titles: tuple[bytes, ...]
    ) -> None:
        self.s = s
        self.policy = policy  # None passes every OSC 52 unseen
        # Pi mode (docs/terminal-guard.md): a title that begins with one of cuewrap's marks is
        # content posing as cuewrap, removed wherever it is (with the guard on)
        self.marked_titles = marked_titles
        self._kitty_write = False  # the answer for a kitty write begun (OSC 5522)

    def poses(self, s: bytes, final: bool) -> bool:
        """Pi mode: the OSC ``s`` (from its ESC, no terminator; ``final``: its content is
        complete) is, or may still become, a title that begins with one of cuewrap's marks:
        content posing as cuewrap, wherever it stands (docs/terminal-guard.md)."""
        marks = self.marked_titles
        if not marks:
            return False
        m = _OSC_INTRO.match(s)
        if m is None:  # an ESC (and control characters) may still begin one
            return not final and _ESC_OPEN.fullmatch(s) is not None
        content = s[m.end() :]
        if OSC_C0.search(content) is not None:
            content = OSC_C0.sub(b"", content)
        if not final and open_number(content):
            return True  # its number is not known yet: held until it is
        for code, payload in readings(content):
            if code <= 2 and (
                payload.startswith(marks)
                or (not final and any(mark.startswith(payload) for mark in marks))
            ):
                return True
        return False

    def osc(self, work: bytes, j: int, c: int, base: int, events: Events, cuts: Cuts) -> None:
        """A complete OSC at ``j`` (content from ``c``): if it is an OSC 52, decide it."""
        m = OSC_STOP.search(work, c)
        if m is None:
            return
        t = m.start()
        if work[t] == ESC:
            if t + 1 >= len(work):
                return  # its ESC is the last byte: decided at the chunk end
            end = t + 2 if work[t + 1] == 0x5C else t  # a bare ESC begins the next sequence
        else:
            end = t + 1  # BEL, CAN, SUB
        s = self.s
        guard = s._guard and j >= base and (s.framed(work, j) or self.poses(work[j:t], True))
        kind, read, what = clip_head(work[j:t], True, self.policy is not None, guard)
        if kind == NOT_CLIP:
            return
        if kind != CLIP:  # a header longer than 8 KiB: the strictest reading
            read = True
        passed = j < base or self._decide(work, j, read, what)
        events.append((j, clip_event(read, passed, end - j, what)))
        if not passed:
            cuts.append((j, end))
            if not s.removable_at(work, j):
                s._reps[j] = NEUTRAL
            if end == t:
                s._bare_cuts[t] = j

    def release(self, held: bytes) -> bytes | None:
        """What the tracker's ``flush`` releases of the ``held`` bytes when a clipboard (or
        guarded) sequence could begin them: nothing (never released undecided), or all but
        their last ESC (kept held: a report waiting for the "\\" of its ST, whose ESC may yet
        begin an OSC 52). None: not this guard's to say."""
        s = self.s
        guard = s._guard and (s._sync or s._all_content or self.poses(held, False))
        if self.policy is None and not guard:
            return None
        if clip_head(held, False, self.policy is not None, guard)[0] != NOT_CLIP:
            return b""
        if len(held) > 1 and held[-1] == ESC:
            s.held_bytes = ESCB
            s.pending(held[:-1])
            return held[:-1]
        return None

    def as_content(self, work: bytes, j: int, base: int, events: Events, cuts: Cuts) -> None:
        """The complete OSC at ``j`` is content wherever it is: removed whole, as inside a
        frame."""
        s = self.s
        all_content = s._all_content
        s._all_content = True
        try:
            self.osc(work, j, j + 2, base, events, cuts)
        finally:
            s._all_content = all_content

    def _decide(self, work: bytes, j: int, read: bool, what: str) -> bool:
        """Ask the policy about the clipboard sequence at ``j``. A kitty write's data and end
        get its start's answer (never asked: the write passes or goes as a whole)."""
        if what in GUARDED_WHATS:
            return False  # asked for only inside a frame with the guard on: content
        if what == "osc5522 data" or what == "osc5522 end":
            passed = self._kitty_write
            if what == "osc5522 end":
                self._kitty_write = False
            return passed
        clip = self.policy
        passed = clip is not None and clip.clipboard(read, self.s.framed(work, j))
        if what == "osc5522" and not read:
            self._kitty_write = passed
        return passed

    def end(self, work: bytes, k_last: int, base: int, n: int) -> tuple[int, bytes] | None:
        """The unfinished sequence at the end may be an OSC 52: hold it (not decidable yet)
        or decide it and stream the rest (passed or dropped). None: not one of those.
        Returns (end of the output, bytes to append)."""
        if k_last + 1 < n:  # the common case, a chunk cut inside a CSI: not one
            c = work[k_last + 1]
            if c != 0x5D and 0x20 <= c != 0x7F:
                return None
        s = self.s
        clip = self.policy is not None
        start = k_last
        final = False
        if k_last == n - 1:  # a lone ESC: it may end an open OSC 52
            k2 = work.rfind(ESCB, base, k_last)
            if (
                k2 >= 0
                and seq_end(work, k2, k_last) < 0
                and clip_head(
                    work[k2:k_last],
                    True,
                    clip,
                    s._guard and (s.framed(work, k2) or self.poses(work[k2:k_last], True)),
                )[0]
                == CLIP
            ):
                start = k2
                final = True
        head = work[start:k_last] if final else work[start:]
        kind, read, what = clip_head(
            head, final, clip, s._guard and (s.framed(work, start) or self.poses(head, final))
        )
        if kind == NOT_CLIP:
            return None
        if kind != CLIP:  # could still become one, or its header is not complete yet
            if n - start <= CAP:
                if start == n - 1 and s.hold_from(work, k_last, base, n) >= 0:
                    return None  # an OSC 7501 report (or notification) waiting for its "\\"
                s.held_bytes = work[start:]
                s.set_before(work, start)
                return start, b""
            if work[start + 1] != 0x5D:
                # ESC and more than CAP control characters: they act the same before the
                # ESC as after it; release them and keep holding the ESC alone
                s.held_bytes = ESCB
                s.set_before(work, start)
                if not s._pend:  # a control character ends a pending UTF-8 character
                    s._u8 = b""
                    s._safe = True
                return start, work[start + 1 :]
            read = True  # waited long enough: the strictest reading
        passed = self._decide(work, start, read, what)
        s._stream = OpenSequence(
            passing=passed, read=read, what=what, size=(k_last if final else n) - start, esc=final
        )
        if passed:
            s._u8 = b""
            s._safe = False
            return (k_last if final else n), b""  # an ESC at the end: is it ST?
        return s.drop_from(work, start)
