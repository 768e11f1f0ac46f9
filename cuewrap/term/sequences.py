"""Every escape sequence cuewrap writes, named once, with where it is specified.

References (abbreviations used below):

- xterm ctlseqs: "XTerm Control Sequences", Thomas Dickey, invisible-island.net/xterm/ctlseqs
- kitty-notify: kitty "Desktop notifications" (OSC 99),
  sw.kovidgoyal.net/kitty/desktop-notifications
- kitty-kbd: kitty "Comprehensive keyboard handling" (CSI u),
  sw.kovidgoyal.net/kitty/keyboard-protocol
- ECMA-48: 5th edition, 8.3.89 (OSC), 8.3.143 (ST), 8.3.27 (DCS)

Builders never trust their text: everything that goes inside a sequence passes through
:func:`sanitize` (no C0/C1 controls, no DEL, no ESC, whitespace collapsed, length cut) and
any separator character of the target protocol is replaced.

No I/O here: every function returns bytes for the caller to write.
"""

from __future__ import annotations

import re

ESC = b"\x1b"
# ECMA-48 8.3.143: STRING TERMINATOR, 7-bit form ESC \. Used to end every OSC cuewrap writes.
ST = b"\x1b\\"
# ECMA-48 8.3.3 / xterm ctlseqs "Single-character functions": BEL, ring the bell.
BEL = b"\x07"

# xterm ctlseqs, "FocusIn/FocusOut" (DEC private mode 1004): the terminal sends CSI I / CSI O.
FOCUS_REPORTING_ON = b"\x1b[?1004h"
FOCUS_REPORTING_OFF = b"\x1b[?1004l"
# xterm ctlseqs, mode 1004: the report bytes themselves (forwarded to a child that asked).
FOCUS_IN = b"\x1b[I"
FOCUS_OUT = b"\x1b[O"

# xterm ctlseqs, "CSI Ps ; Ps ; Ps t" window ops, Ps = 22 ; 0 save icon and window title on
# the stack, Ps = 23 ; 0 restore them (docs/design.md#delivery: saved at start, restored at exit).
TITLE_PUSH = b"\x1b[22;0t"
TITLE_POP = b"\x1b[23;0t"

# xterm ctlseqs, "CSI > Pp ; Pv m" (XTMODKEYS), Pp = 4 modifyOtherKeys; Pv = 0 turns it off.
MODIFY_OTHER_KEYS_OFF = b"\x1b[>4;0m"

# DEC private modes named in restore sequences (xterm ctlseqs, "CSI ? Pm h" / "CSI ? Pm l").
MODE_CURSOR_KEYS = 1  # DECCKM, application cursor keys
MODE_AUTOWRAP = 7  # DECAWM
MODE_X10_MOUSE = 9
MODE_CURSOR_VISIBLE = 25  # DECTCEM
MODE_ALT_SCREEN_47 = 47
MODE_MOUSE_NORMAL = 1000
MODE_MOUSE_HILITE = 1001
MODE_MOUSE_BUTTON = 1002
MODE_MOUSE_ANY = 1003
MODE_FOCUS = 1004
MODE_MOUSE_UTF8 = 1005
MODE_MOUSE_SGR = 1006
MODE_ALT_SCROLL = 1007
MODE_MOUSE_URXVT = 1015
MODE_MOUSE_SGR_PIXELS = 1016
MODE_ALT_SCREEN_1047 = 1047
MODE_ALT_SCREEN_1049 = 1049  # alt screen + save/restore cursor
MODE_BRACKETED_PASTE = 2004
# "Synchronized Output" (Christian Parpart's spec, gist.github.com/christianparpart,
# d8a62cc1ab659194337d73e399004036); Pi wraps every frame in ?2026h … ?2026l.
MODE_SYNC_OUTPUT = 2026
# contour "Color palette update notifications" (docs/vt-extensions/
# color-palette-update-notifications.md in contour-terminal/contour); Pi turns it on.
MODE_COLOR_SCHEME = 2031


def dec_set(mode: int) -> bytes:
    """xterm ctlseqs "CSI ? Pm h" (DECSET) for one mode."""
    return b"\x1b[?%dh" % int(mode)


def dec_reset(mode: int) -> bytes:
    """xterm ctlseqs "CSI ? Pm l" (DECRST) for one mode."""
    return b"\x1b[?%dl" % int(mode)


def kitty_keyboard_pop(count: int) -> bytes:
    """kitty-kbd "CSI < number u": pop ``count`` entries of the keyboard mode stack.

    Returns b"" for ``count <= 0`` (``CSI < 0 u`` would be read as the default, 1).
    """
    if count <= 0:
        return b""
    return b"\x1b[<%du" % int(count)


# --- text sanitizing --------------------------------------------------------------------

_DEFAULT_LIMIT = 200  # docs/design.md#privacy: a summary body is at most 200 characters


def sanitize(text: str, limit: int = _DEFAULT_LIMIT) -> str:
    """Make ``text`` safe to put inside an escape sequence.

    Drops C0 controls (ESC and BEL among them), DEL, C1 controls (U+0080–U+009F, e.g. the
    8-bit ST U+009C) and lone surrogates; every whitespace character (newlines, tabs,
    U+2028 …) becomes a space and runs of whitespace collapse to one; the result is stripped
    and cut to at most ``limit`` characters (``limit <= 0`` gives "").
    """
    if limit <= 0 or not text:
        return ""
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if cp < 0x20 or 0x7F <= cp <= 0x9F:
            # control: whitespace-like controls become a space so words do not run together
            if ch.isspace():
                out.append(" ")
        elif 0xD800 <= cp <= 0xDFFF:
            continue
        else:
            out.append(ch)
    cleaned = " ".join("".join(out).split())
    return cleaned[:limit].rstrip()


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


# --- titles -----------------------------------------------------------------------------


def is_title(data: bytes) -> bool:
    """One whole title write of cuewrap's: an OSC 2 from ``set_title``, or the title stack's
    pop and push (what clearing a mark writes when the child never set a title)."""
    if data == TITLE_POP + TITLE_PUSH:
        return True
    return data.startswith(b"\x1b]2;") and data.endswith(b"\x1b\\") and data.count(b"\x1b") == 2


def set_title(text: str, limit: int = _DEFAULT_LIMIT) -> bytes:
    """xterm ctlseqs "OSC Ps ; Pt ST", Ps = 2: set the window title (not the icon name).

    OSC 2 is chosen over OSC 0 so that cuewrap never changes the icon name; the child's own
    OSC 0 keeps setting both. Terminated by ST (ECMA-48), which every terminal that knows
    OSC 2 accepts.
    """
    return b"\x1b]2;" + _utf8(sanitize(text, limit)) + ST


# --- terminal notifications --------------------------------------------------------------


def osc777(title: str, body: str, limit: int = _DEFAULT_LIMIT) -> bytes:
    """rxvt-unicode "notify" extension, also VTE/foot/WezTerm: ``OSC 777 ; notify ; T ; B ST``.

    ``;`` separates the fields, and VTE takes only the next ``;``-field as the body, so a
    ``;`` in the title or the body is replaced with ``,``.
    """
    t = sanitize(title, limit).replace(";", ",")
    b = sanitize(body, limit).replace(";", ",")
    return b"\x1b]777;notify;" + _utf8(t) + b";" + _utf8(b) + ST


_OSC9_COMMAND = re.compile(r"[0-9]")


def osc9(body: str, limit: int = _DEFAULT_LIMIT) -> bytes:
    """iTerm2 "Post a notification" ``OSC 9 ; message ST`` (also WezTerm, ghostty, kitty).

    ConEmu and Windows Terminal read ``OSC 9 ; <digits> ; …`` as commands (``9;4`` is the
    progress bar Pi itself uses). ``;`` is replaced with ``,`` everywhere, and a body that
    starts with a digit gets a leading space, so the body can never be read as a command.
    """
    b = sanitize(body, limit).replace(";", ",")
    if _OSC9_COMMAND.match(b):
        b = " " + b
    return b"\x1b]9;" + _utf8(b) + ST


_KITTY_ID_BAD = re.compile(r"[^A-Za-z0-9_.+-]")


def osc99(title: str, body: str, ident: str = "cuewrap", limit: int = _DEFAULT_LIMIT) -> bytes:
    """kitty-notify: ``OSC 99;i=ID:d=0:a=focus:p=title;TITLE ST`` then
    ``OSC 99;i=ID:p=body;BODY ST``.

    ``a=focus``: a click focuses the window the notification came from (kitty's default,
    asked for explicitly: the way back to Pi). ``d=0`` holds the notification until the body
    chunk (``d`` defaults to 1 = done) arrives.
    The identifier keeps only ``[A-Za-z0-9_.+-]`` (the identifier alphabet of the spec; "cuewrap"
    when nothing is left). The payload is plain UTF-8 (``e=0``); it follows the second ``;``
    so ``;`` and ``:`` need no escaping, only sanitizing. An empty body sends the title only.
    """
    ident = _kitty_ident(ident)
    t = _utf8(sanitize(title, limit))
    b = _utf8(sanitize(body, limit))
    key = b"i=" + ident.encode("ascii")
    if not b:
        return b"\x1b]99;" + key + b":a=focus:p=title;" + t + ST
    head = b"\x1b]99;" + key + b":d=0:a=focus:p=title;"
    return head + t + ST + b"\x1b]99;" + key + b":p=body;" + b + ST


def _kitty_ident(ident: str) -> str:
    return _KITTY_ID_BAD.sub("", ident)[:64] or "cuewrap"


def osc99_close(ident: str) -> bytes:
    """kitty-notify "Closing an existing notification": ``OSC 99 ; i=ID : p=close ; ST``.

    The terminal ignores it when no notification with that id is shown (already closed or
    clicked); the identifier is sanitized exactly as :func:`osc99` does.
    """
    return b"\x1b]99;i=" + _kitty_ident(ident).encode("ascii") + b":p=close;" + ST


def osc99_query(ident: str) -> bytes:
    """kitty-notify "Querying for support": ``OSC 99 ; i=ID : p=? ; ST``. kitty 0.36 and later
    answer ``OSC 99 ; i=ID : p=? ; KEY=VALUES:… ST`` with what they support; older ones ignore it
    (with a "Malformed OSC 99" line on kitty's own stderr)."""
    return b"\x1b]99;i=" + _kitty_ident(ident).encode("ascii") + b":p=?;" + ST


# xterm ctlseqs "CSI > Ps q" (Ps = 0): report the terminal's name and version (XTVERSION),
# answered ``DCS > | NAME(VERSION) ST`` (kitty, xterm, foot, WezTerm, VTE 0.76+; tmux answers
# for itself); "CSI c" (Primary DA): every terminal answers it, in order, so its answer says
# that no answer to an earlier query is still coming.
XTVERSION_QUERY = b"\x1b[>0q"
DA1_QUERY = b"\x1b[c"


# ConEmu "OSC 9 ; 4 ; st ; pr ST" progress (also Windows Terminal, ghostty): st 3 is indeterminate
# (busy), st 0 removes the indicator. docs/pi-facts.md#escape-sequences: Pi itself writes these when
# its ``terminal.showTerminalProgress`` is on.
PROGRESS_BUSY = b"\x1b]9;4;3\x1b\\"
PROGRESS_OFF = b"\x1b]9;4;0\x1b\\"


def tmux_passthrough(payload: bytes) -> bytes:
    """tmux(1) "allow-passthrough": ``ESC P tmux; <payload, every ESC doubled> ESC \\``.

    tmux forwards the payload to the outer terminal only when ``allow-passthrough`` is on
    (off by default, docs/pi-facts.md#tmux). The payload must itself be a complete sequence
    built by this module; an ESC in it is doubled so that tmux does not read it as the end.
    """
    return b"\x1bPtmux;" + payload.replace(ESC, ESC + ESC) + ST


# The Program Status Protocol's query (OSC 7501, body "?"); a terminal that speaks the protocol
# answers with the same body before its DA1 answer. cuewrap asks the host terminal once at
# start and, in generic mode, answers its child's query with the same bytes (docs/generic-mode.md).
PROGRAM_STATUS_QUERY = b"\x1b]7501;?\x1b\\"
PROGRAM_STATUS_ANSWER = PROGRAM_STATUS_QUERY
# What a program writes at its exit (Pi: no app=); cuewrap writes it for a child that reported
# to the host and exited without it.
PROGRAM_STATUS_CLEAR = b"\x1b]7501;state=clear\x1b\\"
