"""cuewrap.term.oscnum: how terminals read an OSC's number (docs/terminal-guard.md)."""

from __future__ import annotations

import pytest

from cuewrap.term.oscnum import open_number, readings

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("content", "want"),
    [
        (b"52;c;QQ==", [(52, b"c;QQ==")]),  # the plain spelling: one reading
        (b"052;c;QQ==", [(52, b"c;QQ==")]),
        (b"52c;QQ==", [(52, b"c;QQ==")]),  # kitty: ";" optional
        (b"777notify;T;B", [(777, b"notify;T;B")]),
        (b"2title", [(2, b"title")]),
        (b"title", [(0, b"title")]),  # kitty: no digits is 0
        (b";t", [(0, b"t")]),
        (b"000052;c;QQ==", [(5, b"2;c;QQ=="), (52, b"c;QQ==")]),  # kitty's five digits, xterm's
        (b"4294967348;c", [(42949, b"67348;c"), (52, b"c")]),  # foot's wrap
        (b"12ltitle", [(12, b"ltitle"), (2, b"title")]),  # xterm's l: a title
        (b"0000065535ltitle", [(0, b"65535ltitle"), (2, b"title")]),
        (b"65536ltitle", [(65536, b"ltitle")]),  # xterm ignores a number above 65535
        (b"4294967348ltitle", [(42949, b"67348ltitle")]),
        (b"Licon", [(0, b"Licon"), (1, b"icon")]),
        (b"2", [(2, b"")]),
        (b"", [(0, b"")]),
        (b"9" * 5000 + b";x", [(99999, b"9" * 4995 + b";x"), (int("9" * 32) & 0xFFFFFFFF, b"x")]),
    ],
)
def test_every_reading(content: bytes, want: list[tuple[int, bytes]]) -> None:
    assert readings(content) == want


def test_a_digit_run_is_not_a_number_yet() -> None:
    assert open_number(b"") and open_number(b"0005")
    assert not open_number(b"5c") and not open_number(b"52;")
