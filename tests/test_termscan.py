"""tests/termscan.py, the tests' own reader of what reached a terminal: every spelling of a
sequence the guard tests count must be found, and nothing that is not one."""

from __future__ import annotations

import pytest
from termscan import apcs, clip_writes, csis, dcss, notifications, osc_numbers, scan, titles

pytestmark = pytest.mark.unit


def numbers(raw: bytes) -> list[int | None]:
    return [s.number for s in osc_numbers(raw)]


@pytest.mark.parametrize(
    ("raw", "number", "payload"),
    [
        (b"\x1b]52;c;QUJD\x07", 52, b"c;QUJD"),
        (b"\x1b]52c;QUJD\x07", 52, b"c;QUJD"),  # no ';' after the number (kitty)
        (b"\x1b]0052;c;QUJD\x1b\\", 52, b"c;QUJD"),  # zero-padded
        (b"\x1b]777notify;T;B\x07", 777, b"notify;T;B"),
        (b"\x1b]2title\x07", 2, b"title"),
        (b"\x1b]99d=1;x\x1b\\", 99, b"d=1;x"),
        (b"\x1b]9text\x07", 9, b"text"),
        (b"\x1b\x07]9;in\x0ebetween\x07", 9, b"inbetween"),  # C0 between ESC and ], inside
        (b"\xc2\x9d777;notify;T;B\xc2\x9c", 777, b"notify;T;B"),  # C1 in UTF-8
        (b"\x9d7;file://h/\x07", 7, b"file://h/"),  # raw C1
    ],
)
def test_an_osc_is_read_however_it_is_spelled(raw: bytes, number: int, payload: bytes) -> None:
    [seq] = osc_numbers(raw)
    assert (seq.number, seq.payload) == (number, payload)


@pytest.mark.parametrize(
    ("end", "name"),
    [(b"\x07", "bel"), (b"\x1b\\", "st"), (b"\xc2\x9c", "st"), (b"\x18", "can"),
     (b"\x1a", "sub"), (b"\x1b[1m", "esc"), (b"", "eof")],
)  # fmt: skip
def test_every_end_of_an_osc_counts(end: bytes, name: str) -> None:
    [seq] = osc_numbers(b"text \x1b]777;notify;a;b" + end + b" more")
    assert seq.end == name and seq.number == 777


def test_an_esc_inside_a_string_ends_it_and_begins_the_next_one() -> None:
    """tmux's passthrough wrapper, read by a terminal that is not tmux: the DCS ends at the
    doubled ESC, and the OSC after it is a sequence of its own."""
    raw = b"\x1bPtmux;\x1b\x1b]777;notify;T;B\x07\x1b\\"
    assert [s.kind for s in scan(raw)] == ["dcs", "osc", "esc"]
    assert dcss(raw, b"tmux;")[0].end == "esc"
    assert numbers(raw) == [777]


def test_queries_and_other_strings() -> None:
    raw = (
        b"\x1b]11;?\x1b\\\x1b]4;1;?\x07\x1bP$qm\x1b\\\x1b[21t\x1b[20t\x1b[c\x1b[0c"
        b"\x1b_Ga=T,t=f;L2V0Yw==\x1b\\\xc2\x9b21t\xc2\x90$qm\xc2\x9c"
    )
    assert [s.payload for s in osc_numbers(raw, 11, 4)] == [b"?", b"1;?"]
    assert [s.intro for s in dcss(raw, b"$q")] == ["esc", "c1"]
    assert [s.intro for s in csis(raw, b"t", b"21")] == ["esc", "c1"]
    assert len(csis(raw, b"t", b"20")) == 1
    assert [s.data for s in csis(raw, b"c")] == [b"", b"0"]
    assert [s.data for s in apcs(raw, b"G")] == [b"Ga=T,t=f;L2V0Yw=="]


def test_text_is_no_sequence() -> None:
    """UTF-8 whose continuation bytes fall in C1's range (✓ is E2 9C 93, — is E2 80 94) is
    text, and so is everything between sequences."""
    raw = "[✓] π — work ✓✓ \u00e9\u0153".encode()
    assert scan(raw) == []
    assert [s.kind for s in scan(b"\x1b[?2026h" + raw + b"\x1b[?2026l")] == ["csi", "csi"]


def test_a_cancelled_escape_begins_nothing() -> None:
    """``ESC CAN``, what cuewrap leaves where it removed a sequence."""
    assert scan(b"a\x1b\x18]52;c;QUJD\x07") == []


def test_the_plain_readers_of_what_cuewrap_and_pi_write() -> None:
    raw = (
        b"\x1b]0;\xcf\x80 - work\x07\x1b]2;[\xe2\x9c\x93] \xcf\x80 - work\x1b\\"
        b"\x1b]777;notify;Pi \xe2\x80\x94 work;Finished\x1b\\\x1b]52;c;QUJD\x07"
    )
    assert titles(raw) == ["π - work", "[✓] π - work"]
    assert notifications(raw) == [("Pi — work", "Finished")]
    assert clip_writes(raw) == [b"QUJD"]
