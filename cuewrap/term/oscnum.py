"""How terminals read the number of an OSC (docs/terminal-guard.md#how-terminals-read-the-number).

Pure. The guard asks :func:`readings` what a sequence is: each way one of the terminals we know
reads the OSC whose content is given, as (number, payload). A sequence is of a guarded class
when any of those readings makes it one, so every spelling a terminal acts on is found:

- kitty takes at most 5 leading digits as the number (none: 0) and skips a ``;`` only if one
  follows: ``52c;…`` is OSC 52, ``777notify;…`` OSC 777, ``title`` and ``2title`` titles, and
  ``000052;…`` OSC 5 with ``2;…`` after it;
- xterm, VTE, foot, WezTerm, Ghostty and Alacritty take the whole digit run, then ``;`` or
  the end (leading zeros count in xterm, VTE and foot: ``000052;`` is OSC 52 there; foot's
  number wraps at 2**32, so ``4294967348;`` is OSC 52 in foot);
- xterm takes ``l`` after the digits (none too; a number above 65535 it ignores) as a window
  title and ``L`` / ``I`` as the icon's (WezTerm reads ``l`` / ``L`` first the same way): given
  here as OSC 2 and OSC 1.
"""

from __future__ import annotations

import re

_DIGITS = re.compile(rb"[0-9]*")
_KITTY_DIGITS = 5  # kitty's parser reads at most this many digits
_WRAP = 0xFFFFFFFF  # foot's unsigned number
_WRAP_DIGITS = 32  # 10**32 is a multiple of 2**32: the last 32 digits give the wrapped value
_SUN = {0x6C: 2, 0x4C: 1, 0x49: 1}  # xterm: l (title), L (icon label), I (icon file)
# the digits xterm reads as a number: at most 65535 (it ignores a sequence with a larger one)
_XTERM_MAX = re.compile(
    rb"0*(?:[0-9]{0,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
)


def readings(content: bytes) -> list[tuple[int, bytes]]:
    """Each (number, payload) a terminal reads the complete OSC ``content`` as (C0 controls
    already removed, no terminator), without repeats; the first is kitty's."""
    k = _DIGITS.match(content).end()  # type: ignore[union-attr]
    if 0 < k <= _KITTY_DIGITS and content[k : k + 1] == b";":  # the common spelling
        if content[0] != 0x30 or k == 1:  # no leading zero: every terminal agrees
            return [(int(content[:k]), content[k + 1 :])]
    k5 = k if k <= _KITTY_DIGITS else _KITTY_DIGITS
    i = k5 + 1 if content[k5 : k5 + 1] == b";" else k5
    found = [(int(content[:k5]) if k5 else 0, content[i:])]
    nxt = content[k : k + 1]
    if not nxt or nxt == b";":
        one = (int(content[max(0, k - _WRAP_DIGITS) : k]) & _WRAP if k else 0, content[k + 1 :])
        if one != found[0]:
            found.append(one)
    elif nxt[0] in _SUN and _XTERM_MAX.fullmatch(content, 0, k) is not None:
        found.append((_SUN[nxt[0]], content[k + 1 :]))
    return found


def open_number(content: bytes) -> bool:
    """The unfinished OSC ``content`` is all digits so far: the number any terminal reads is
    not known yet (a digit run can still become any number: kitty's, and foot's wrap)."""
    return _DIGITS.fullmatch(content) is not None
