"""opencode's permission dialog read from the screen (``answer/opencode.py``, pure) and the
backgrounds its reader's worker reports (``answer/bgworker.py``): the selected button is told
only by its background, the layout as opencode 1.18.33 draws it (measured: tests/
test_answer_opencode.py runs it)."""

from __future__ import annotations

import pyte
import pytest

from cuewrap.answer.bgworker import lines_and_backgrounds
from cuewrap.answer.dialog import Dialog
from cuewrap.answer.opencode import ALWAYS, read
from cuewrap.screen.worker import _make_screen

pytestmark = pytest.mark.unit

COLS = 100
BUTTONS = "Allow once   Allow always   Reject"
HINT = "ctrl+f fullscreen  ⇆ select  enter confirm"
PANEL, SELECTED, DIALOG, SCREEN = "48;2;28;28;28", "48;2;255;175;95", "48;2;18;18;18", "48;2;8;8;8"


def row(y: int, text: str, bg: str = DIALOG) -> bytes:
    """``text`` at row ``y`` inside the dialog's border, its panel ``bg``."""
    return f"\x1b[{y};1H\x1b[{SCREEN}m  \x1b[{bg}m┃{text:<{COLS - 4}}\x1b[{SCREEN}m  ".encode()


def buttons(y: int, labels: list[str], selected: int, hint: str = HINT) -> bytes:
    out = f"\x1b[{y};1H\x1b[{SCREEN}m  \x1b[{DIALOG}m┃\x1b[{PANEL}m  "
    width = 3
    for i, label in enumerate(labels):
        out += f"\x1b[{SELECTED if i == selected else PANEL}m {label} \x1b[{PANEL}m "
        width += len(label) + 3
    out += " " * (COLS - 4 - width - len(hint)) + hint
    return out.encode()


def dialog(selected: int = 0, header: str = "△ Permission required", rows: int = 20) -> bytes:
    out = b"\x1b[2J" + b"\x1b[2;1H  \xe2\x94\x83  make a file"  # the transcript above
    top = rows - 9
    out += row(top, "") + row(top + 1, "  " + header) + row(top + 2, "    # Shell command")
    out += row(top + 3, "") + row(top + 4, "  $ echo RAN > ran.txt") + row(top + 5, "")
    out += row(top + 6, "", PANEL)
    out += buttons(top + 7, ["Allow once", "Allow always", "Reject"], selected)
    out += row(top + 8, "", PANEL)
    return out


def screen(data: bytes, rows: int = 20) -> list[str]:
    s = _make_screen(COLS, rows)
    pyte.ByteStream(s).feed(data)
    return lines_and_backgrounds(s)


@pytest.mark.parametrize("selected", [0, 1, 2])
def test_the_dialog_and_its_selection_read_from_the_backgrounds(selected: int) -> None:
    got = read(screen(dialog(selected)))
    assert got == Dialog(
        "# Shell command $ echo RAN > ran.txt", ("Allow once", "Allow always", "Reject"), selected
    )


def test_without_a_background_that_stands_out_it_is_no_dialog() -> None:
    assert read(screen(dialog(selected=7))) is None  # no button highlighted


def test_another_header_or_text_below_is_no_dialog() -> None:
    assert read(screen(dialog(header="△ Permission granted"))) is None
    assert read(screen(dialog() + b"\x1b[20;1Hmore text")) is None
    assert read(screen(dialog()), ALWAYS) is None


def test_the_text_alone_is_not_enough() -> None:
    lines = screen(dialog())
    n = len(lines) // 2
    assert read(lines[:n] + ["a" * COLS] * n) is None  # every background the same
    assert read(lines[:n]) is None  # no backgrounds at all


def test_the_signatures_letter_each_rows_backgrounds() -> None:
    lines = screen(b"\x1b[1;1H\x1b[41mab\x1b[42mc\x1b[41md", rows=2)
    assert lines[2][:5] == "aabac" and len(lines[2]) == COLS  # then the default
