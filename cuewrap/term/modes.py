"""The terminal modes a child left on, read from its output, and the bytes that undo them.

The output tracker (``term/tracker.py``) parses the child's private CSI sequences and tells a
:class:`ModeState` what they did; this module holds what that adds up to, and the bytes that
undo it when cuewrap gives the terminal back: at the end of the session, and before the
shell's prompt after a stop, with the modes set again when the child continues
(docs/design.md#real-environments, ``relay/jobs.py``).

    CSI ? Pm h | l              DEC private modes of TRACKED_MODES: on, or explicitly off
    CSI > flags u               kitty keyboard: push (the stack is bounded, as kitty's is)
    CSI < n u                   kitty keyboard: pop n (default 1)
    CSI = flags ; mode u        kitty keyboard: set flags (non-zero: at least one entry)
    CSI > 4 ; n m, CSI > m      xterm modifyOtherKeys: level n (0: off), reset
"""

from __future__ import annotations

from cuewrap.term import sequences as seq
from cuewrap.term.grammar import ints

KITTY_STACK_MAX = 64  # kitty keeps a bounded stack; so do we

# modes undone by restore_sequence, in the order written (mouse first, then the rest)
RESTORE_OFF = (
    seq.MODE_MOUSE_SGR_PIXELS,
    seq.MODE_MOUSE_URXVT,
    seq.MODE_MOUSE_SGR,
    seq.MODE_MOUSE_UTF8,
    seq.MODE_MOUSE_ANY,
    seq.MODE_MOUSE_BUTTON,
    seq.MODE_MOUSE_HILITE,
    seq.MODE_MOUSE_NORMAL,
    seq.MODE_X10_MOUSE,
    seq.MODE_ALT_SCROLL,
    seq.MODE_FOCUS,
    seq.MODE_BRACKETED_PASTE,
    seq.MODE_COLOR_SCHEME,
    seq.MODE_CURSOR_KEYS,
)
RESTORE_ON = (seq.MODE_AUTOWRAP, seq.MODE_CURSOR_VISIBLE)  # default on; undo an "off"
ALT_SCREENS = (seq.MODE_ALT_SCREEN_1049, seq.MODE_ALT_SCREEN_1047, seq.MODE_ALT_SCREEN_47)
TRACKED_MODES = frozenset(
    (seq.MODE_SYNC_OUTPUT, *RESTORE_OFF, *RESTORE_ON, *ALT_SCREENS, 12, 2027, 2048)
)


class ModeState:
    """What the child's output did to the terminal's modes so far.

    - ``on``: DEC private modes of :data:`TRACKED_MODES` last set on (``CSI ? Pm h``).
    - ``off``: tracked modes last reset (``CSI ? Pm l``): ``25`` in it means the cursor was
      hidden, ``7`` that autowrap was turned off.
    - ``kitty_keyboard_depth``: entries pushed on the kitty keyboard stack (bounded at 64).
    - ``modify_other_keys``: xterm modifyOtherKeys is on (``CSI > 4 ; n m``, n > 0).
    """

    __slots__ = ("kitty_keyboard_depth", "modify_other_keys", "off", "on")

    def __init__(self) -> None:
        self.on: set[int] = set()
        self.off: set[int] = set()
        self.kitty_keyboard_depth = 0
        self.modify_other_keys = False

    def set(self, mode: int, on: bool) -> None:
        """``CSI ? mode h`` (on) or ``l``; modes outside :data:`TRACKED_MODES` are not kept."""
        if mode in TRACKED_MODES:
            if on:
                self.on.add(mode)
                self.off.discard(mode)
            else:
                self.on.discard(mode)
                self.off.add(mode)

    def keys(self, marker: int, final: int, params: bytes) -> None:
        """A ``CSI >|<|= params final`` (``params[0]`` is the marker): the kitty keyboard
        stack and modifyOtherKeys. Anything else is not a key mode: ignored."""
        if marker == 0x3E:  # >
            if final == 0x75:  # CSI > flags u: push
                self.kitty_keyboard_depth = min(self.kitty_keyboard_depth + 1, KITTY_STACK_MAX)
            elif final == 0x6D:  # CSI > 4 ; n m
                vals = ints(params[1:])
                if vals == [None]:  # CSI > m: reset all key modifier resources
                    self.modify_other_keys = False
                elif vals[0] == 4 and len(vals) <= 2:
                    level = vals[1] if len(vals) == 2 else None
                    self.modify_other_keys = bool(level)
        elif marker == 0x3C:  # <
            if final == 0x75:  # CSI < n u: pop n (default 1)
                vals = ints(params[1:])
                count = (vals[0] if vals else None) or 1
                self.kitty_keyboard_depth = max(0, self.kitty_keyboard_depth - count)
        elif marker == 0x3D and final == 0x75:  # CSI = flags ; mode u: set flags
            vals = ints(params[1:])
            flags = vals[0] if vals else None
            if flags:
                self.kitty_keyboard_depth = max(self.kitty_keyboard_depth, 1)

    def restore_sequence(self) -> bytes:
        """Bytes that undo every mode the child left on; b"" when nothing is on.

        Order: end a synchronized-output frame, pop the kitty keyboard stack and reset
        modifyOtherKeys (while still on the child's screen: kitty keeps one stack per
        screen), mouse/focus/paste/… off, autowrap and cursor back on, leave the alt screen.
        """
        on = self.on
        parts: list[bytes] = []
        if seq.MODE_SYNC_OUTPUT in on:
            parts.append(seq.dec_reset(seq.MODE_SYNC_OUTPUT))
        if self.kitty_keyboard_depth > 0:
            parts.append(seq.kitty_keyboard_pop(self.kitty_keyboard_depth))
        if self.modify_other_keys:
            parts.append(seq.MODIFY_OTHER_KEYS_OFF)
        parts.extend(seq.dec_reset(m) for m in RESTORE_OFF if m in on)
        parts.extend(seq.dec_set(m) for m in RESTORE_ON if m in self.off)
        parts.extend(seq.dec_reset(m) for m in ALT_SCREENS if m in on)
        return b"".join(parts)

    def reapply_sequence(self) -> bytes:
        """After a stop: bytes that set again what :meth:`restore_sequence` undid, as the
        child had it (alt screen first). Focus reporting is cuewrap's own (not here); the
        kitty keyboard flags and the modifyOtherKeys level were never recorded (not here)."""
        on = self.on
        parts = [seq.dec_set(m) for m in ALT_SCREENS if m in on]
        parts.extend(seq.dec_set(m) for m in RESTORE_OFF if m in on and m != seq.MODE_FOCUS)
        parts.extend(seq.dec_reset(m) for m in RESTORE_ON if m in self.off)
        return b"".join(parts)
