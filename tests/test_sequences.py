"""cuewrap.term.sequences: constants, builders and sanitizing, hostile inputs included."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuewrap.term import sequences as seq

pytestmark = pytest.mark.unit

ST = b"\x1b\\"
HOSTILE = "a\x1b]0;evil\x07b\x9cc\x1b\\d\r\ne\x00f\x7fg\x85h\u2028i;j\ud800k"


def no_controls(payload: bytes) -> bool:
    """No C0 (ESC, BEL …), DEL or C1 anywhere in the decoded payload."""
    text = payload.decode("utf-8")
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


def test_constants() -> None:
    assert seq.FOCUS_REPORTING_ON == b"\x1b[?1004h"
    assert seq.FOCUS_REPORTING_OFF == b"\x1b[?1004l"
    assert seq.TITLE_PUSH == b"\x1b[22;0t"
    assert seq.TITLE_POP == b"\x1b[23;0t"
    assert seq.FOCUS_IN == b"\x1b[I"
    assert seq.FOCUS_OUT == b"\x1b[O"
    assert seq.BEL == b"\x07"
    assert seq.ST == ST
    assert seq.MODIFY_OTHER_KEYS_OFF == b"\x1b[>4;0m"


def test_mode_builders() -> None:
    assert seq.dec_set(25) == b"\x1b[?25h"
    assert seq.dec_reset(1049) == b"\x1b[?1049l"
    assert seq.kitty_keyboard_pop(3) == b"\x1b[<3u"
    assert seq.kitty_keyboard_pop(0) == b""


# --- sanitize -------------------------------------------------------------------------------


def test_sanitize_drops_controls_and_collapses_whitespace() -> None:
    assert seq.sanitize("  hello\n\tworld  ", 100) == "hello world"
    assert seq.sanitize("a\x1b[31mb", 100) == "a[31mb"
    assert seq.sanitize("x\x07y\x9cz\x7f", 100) == "xyz"
    assert seq.sanitize("line1\r\nline2\u2028line3\x85end", 100) == "line1 line2 line3 end"
    assert seq.sanitize("lone \ud800 surrogate", 100) == "lone surrogate"
    assert seq.sanitize("π - work ✓", 100) == "π - work ✓"


def test_sanitize_limit() -> None:
    assert seq.sanitize("x" * 1000, 10) == "x" * 10
    assert seq.sanitize("abc def", 4) == "abc"  # no trailing space after the cut
    assert seq.sanitize("abc", 0) == ""
    assert seq.sanitize("", 5) == ""
    assert len(seq.sanitize("é" * 500)) == 200  # default limit (docs/design.md#privacy)


@given(st.text(), st.integers(min_value=0, max_value=300))
def test_sanitize_property(text: str, limit: int) -> None:
    out = seq.sanitize(text, limit)
    assert len(out) <= limit
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in out)
    assert "  " not in out and out == out.strip()
    out.encode("utf-8")  # no lone surrogate left


# --- titles ---------------------------------------------------------------------------------


def test_set_title() -> None:
    assert seq.set_title("[?] π - work") == "\x1b]2;[?] π - work".encode() + ST
    evil = seq.set_title(HOSTILE)
    assert evil.startswith(b"\x1b]2;") and evil.endswith(ST)
    assert no_controls(evil[4:-2])
    assert len(seq.set_title("t" * 10_000).decode()) == 4 + 200 + 2


# --- OSC 777 ----------------------------------------------------------------------------------


def test_osc777() -> None:
    assert seq.osc777("Pi", "finished") == b"\x1b]777;notify;Pi;finished" + ST


def test_osc777_hostile() -> None:
    out = seq.osc777("a;b\x1b]c", "x;y\x07z\n")
    assert out == b"\x1b]777;notify;a,b]c;x,yz" + ST
    body = seq.osc777(HOSTILE, HOSTILE)
    inner = body[len(b"\x1b]777;notify;") : -2]
    assert inner.count(b";") == 1  # exactly the title/body separator
    assert no_controls(inner)


# --- OSC 9 ------------------------------------------------------------------------------------


def test_osc9() -> None:
    assert seq.osc9("Pi finished") == b"\x1b]9;Pi finished" + ST


@pytest.mark.parametrize("body", ["4;3", "4;0;", "12", "9;1;100", "1;hello", "0", "\n4;3"])
def test_osc9_never_a_command(body: str) -> None:
    out = seq.osc9(body)
    payload = out[len(b"\x1b]9;") : -2].decode()
    assert not re.match(r"[0-9]+(;|$)", payload)
    assert ";" not in payload


@given(st.text())
def test_osc9_property(body: str) -> None:
    out = seq.osc9(body)
    assert out.startswith(b"\x1b]9;") and out.endswith(ST)
    payload = out[4:-2]
    assert no_controls(payload)
    assert not re.match(rb"[0-9]+(;|$)", payload)


# --- OSC 99 -----------------------------------------------------------------------------------


def test_osc99_title_and_body() -> None:
    assert seq.osc99("Pi", "finished") == (
        b"\x1b]99;i=cuewrap:d=0:a=focus:p=title;Pi" + ST + b"\x1b]99;i=cuewrap:p=body;finished" + ST
    )


def test_osc99_empty_body_sends_title_only() -> None:
    assert seq.osc99("Pi", "") == b"\x1b]99;i=cuewrap:a=focus:p=title;Pi" + ST


def test_osc99_identifier_is_sanitized() -> None:
    out = seq.osc99("t", "b", ident="a:b;c=d\x1b7")
    assert out.startswith(b"\x1b]99;i=abcd7:d=0:a=focus:p=title;")
    assert seq.osc99("t", "b", ident=";;::").startswith(b"\x1b]99;i=cuewrap:")


def test_osc99_hostile_payload() -> None:
    out = seq.osc99(HOSTILE, HOSTILE)
    chunks = out.split(ST)
    assert chunks[-1] == b"" and len(chunks) == 3
    for chunk in chunks[:2]:
        assert chunk.startswith(b"\x1b]99;")
        assert no_controls(chunk[1:])
        meta, _, _payload = chunk[len(b"\x1b]99;") :].partition(b";")
        assert re.fullmatch(rb"[a-z]=[A-Za-z0-9_.+-]+(:[a-z]=[A-Za-z0-9_.+-]+)*", meta)


# --- tmux -------------------------------------------------------------------------------------


def test_tmux_passthrough_doubles_every_esc() -> None:
    payload = seq.osc777("Pi", "done")
    out = seq.tmux_passthrough(payload)
    assert out == b"\x1bPtmux;" + payload.replace(b"\x1b", b"\x1b\x1b") + ST
    assert out == b"\x1bPtmux;\x1b\x1b]777;notify;Pi;done\x1b\x1b\\\x1b\\"
    inner = out[len(b"\x1bPtmux;") : -2]
    # inside, ESC only ever appears doubled: tmux cannot see an early ST
    assert re.fullmatch(rb"(?:[^\x1b]|\x1b\x1b)*", inner)


@given(st.binary())
def test_tmux_passthrough_property(payload: bytes) -> None:
    out = seq.tmux_passthrough(payload)
    inner = out[len(b"\x1bPtmux;") : -2]
    assert inner.replace(b"\x1b\x1b", b"\x1b") == payload
    assert re.fullmatch(rb"(?:[^\x1b]|\x1b\x1b)*", inner)
