"""What a program's drawn content may not carry, besides the guarded OSCs (docs/terminal-guard.md,
"Content that acts outside the window"): pure recognisers the output tracker asks about a
sequence it found inside content (a frame the child draws, or a ``content_only`` child's
output) with the sequence guard on.

- queries that make the terminal type its answer into the program's input: device attributes
  (DA1/2/3), status and cursor reports (DSR, DECXCPR), window reports (``CSI 11…21 t``), mode
  reports (DECRQM), XTVERSION, the kitty keyboard query, XTQMODKEYS, XTSMGRAPHICS, DECREQTPARM,
  DEC's presentation, terminal-state, checksum, extent and locator reports, XTREPORTSGR
  (:func:`csi_query`);
- every DCS but a sixel image (DECRQSS, XTGETTCAP, tmux's and screen's passthrough, key
  definitions, kitty's remote control, iTerm2's tmux mode, …) (:func:`dcs_class`);
- kitty graphics that read a file, a temporary file or shared memory (``t=f|t|s``)
  (:func:`apc_class`);
- C1 controls written as UTF-8 (U+0080–U+009F), which VTE and WezTerm act on
  (:data:`C1_UTF8`): replaced by U+FFFD, which ends whatever they would have begun.

Each ``what`` is the name a removed sequence carries (:data:`CONTENT_WHATS`).
"""

from __future__ import annotations

import re

PASS = 0  # not one of these: it stays
UNDECIDED = 1  # its head is not complete yet: it could still be one
REMOVE = 2  # one of these, inside content: removed whole

C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")  # a C1 control as UTF-8 (U+0080..U+009F)
REPLACEMENT = "\ufffd".encode()  # what takes a C1 control's place

# the window reports of CSI Ps t (xterm's ctlseqs): 11 state, 13 position, 14 size in pixels,
# 15 screen size in pixels, 16 cell size, 18 text area in characters, 19 screen in characters,
# 20 icon label, 21 title
WINDOW_REPORTS = frozenset((11, 13, 14, 15, 16, 18, 19, 20, 21))

# (marker, intermediates, final) -> what, for the queries that answer whatever their parameters
_QUERIES: dict[tuple[bytes, bytes, int], str] = {
    (b"", b"", ord("c")): "da1",
    (b"", b"", ord("n")): "dsr",
    (b"", b"", ord("x")): "decreqtparm",
    (b"", b"$", ord("p")): "decrqm",
    (b"", b"$", ord("w")): "decrqpsr",
    (b"", b"$", ord("u")): "decrqtsr",
    (b"", b"*", ord("y")): "decrqcra",
    (b"", b'"', ord("v")): "decrqde",
    (b"", b"'", ord("|")): "decrqlp",
    (b"", b"#", ord("|")): "xtreportsgr",
    (b"?", b"", ord("n")): "dsr",
    (b"?", b"$", ord("p")): "decrqm",
    (b"?", b"", ord("u")): "kitty-keyboard-query",
    (b"?", b"", ord("m")): "xtqmodkeys",
    (b"?", b"", ord("S")): "xtsmgraphics",
    (b">", b"", ord("c")): "da2",
    (b">", b"", ord("q")): "xtversion",
    (b"=", b"", ord("c")): "da3",
}
# intermediates a query can have, by marker (an unfinished CSI with others cannot become one)
_QUERY_INTERS: dict[bytes, frozenset[bytes]] = {}
for _m, _i, _ in _QUERIES:
    _QUERY_INTERS[_m] = _QUERY_INTERS.get(_m, frozenset()) | {_i}

CONTENT_WHATS = frozenset(
    (
        *_QUERIES.values(),
        "window-report",
        "decrqss",
        "xtgettcap",
        "dcs-tmux",
        "dcs",
        "kitty-graphics-file",
        "c1",
    )
)

_FIRST = re.compile(rb"[0-9]*")
_DCS_HEAD = re.compile(rb"([\x30-\x3f]*)([\x20-\x2f]*)([\x40-\x7e]?)")
_SIXEL_PARAMS = re.compile(rb"[0-9;]*")
HEAD_MAX = 4096  # bytes of a string's head looked at; longer undecided: removed
_C0 = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]")  # ignored in a string's head


def _marker(params: bytes) -> tuple[bytes, bytes]:
    if params[:1] in (b"?", b">", b"=", b"<"):
        return params[:1], params[1:]
    return b"", params


def csi_query(params: bytes, inter: bytes, final: int) -> str | None:
    """A complete CSI (its parameter bytes with any private marker, its intermediates, its
    final byte; C0 controls inside already left out) that makes the terminal answer into the
    program's input: its ``what``, else None. Strict: a query answers whatever its parameters,
    but a window report is one of :data:`WINDOW_REPORTS` (the other ``CSI Ps t`` act on the
    window, answer nothing)."""
    marker, rest = _marker(params)
    what = _QUERIES.get((marker, inter, final))
    if what is not None:
        return what
    if final == 0x74 and not marker and not inter:  # t
        m = _FIRST.match(rest)
        if m is not None and m.end() > 0 and int(m.group()) in WINDOW_REPORTS:
            return "window-report"
    return None


def csi_could_query(params: bytes, inter: bytes) -> bool:
    """An unfinished CSI (no final byte yet) could still become a query."""
    inters = _QUERY_INTERS.get(_marker(params)[0])
    return inters is not None and inter in inters


def _string_body(raw: bytes, final: bool) -> tuple[bytes, bool]:
    """A string's content as classified: C0 controls left out (terminals ignore them in a
    string's head), at most :data:`HEAD_MAX` bytes looked at (then not final)."""
    if len(raw) > HEAD_MAX:
        raw = raw[:HEAD_MAX]
        final = False
    if _C0.search(raw) is not None:
        raw = _C0.sub(b"", raw)
    return raw, final


def dcs_class(raw: bytes, final: bool) -> tuple[int, str]:
    """A DCS's content after ``ESC P``; ``final``: it has ended. Every DCS is removed from
    content but a sixel image (``ESC P [Ps;…] q``): (class, what). Undecided until its head
    (parameters, intermediates, final byte) is complete; one still undecided after
    :data:`HEAD_MAX` bytes is removed."""
    body, final = _string_body(raw, final)
    if body.startswith(b"tmux;"):
        return REMOVE, "dcs-tmux"
    m = _DCS_HEAD.match(body)
    params, inter, fin = m.groups() if m is not None else (b"", b"", b"")
    if not fin:
        if final or (m is not None and m.end() < len(body)):
            return REMOVE, "dcs"  # ended, or not a well-formed head
        return (UNDECIDED if len(raw) <= HEAD_MAX else REMOVE), "dcs"
    if fin == b"t" and not params and not inter and not final and b"tmux;".startswith(body):
        return (UNDECIDED if len(raw) <= HEAD_MAX else REMOVE), "dcs"
    if fin == b"q" and not inter and _SIXEL_PARAMS.fullmatch(params) is not None:
        return PASS, ""  # a sixel image: drawn in the window
    if fin == b"q" and inter == b"$":
        return REMOVE, "decrqss"
    if fin == b"q" and inter == b"+":
        return REMOVE, "xtgettcap"
    return REMOVE, "dcs"


def apc_class(raw: bytes, final: bool) -> tuple[int, str]:
    """An APC's content after ``ESC _``; ``final``: it has ended. A kitty graphics command
    (``G``, then its control data up to ``;``) that reads a file, a temporary file or shared
    memory (``t=f``, ``t=t``, ``t=s``) is removed; the rest stays (a direct transmission,
    ``t=d``, the default, draws in the window). Undecided until its control data is complete;
    one still undecided after :data:`HEAD_MAX` bytes is removed."""
    body, final = _string_body(raw, final)
    if not body:
        if final:
            return PASS, ""
        return (UNDECIDED if len(raw) <= HEAD_MAX else PASS), ""
    if body[:1] != b"G":
        return PASS, ""
    control, semi, _ = body[1:].partition(b";")
    if not semi and not final:
        return (UNDECIDED if len(raw) <= HEAD_MAX else REMOVE), "kitty-graphics-file"
    for item in control.split(b","):
        key, eq, value = item.partition(b"=")
        if key == b"t" and eq and value[:1] in (b"f", b"t", b"s"):
            return REMOVE, "kitty-graphics-file"
    return PASS, ""
