"""cuewrap.engine.guard: the terminal guard's pure rules and wording (docs/terminal-guard.md)."""

from __future__ import annotations

import math

import pytest

from cuewrap.engine.guard import (
    CLIPBOARD_AFTER_KEY,
    SEQUENCE_NAMES,
    clipboard_notice,
    clipboard_passes,
    sequence_notice,
)
from cuewrap.term.clipboard import GUARDED_WHATS

pytestmark = pytest.mark.unit

INF = math.inf


@pytest.mark.parametrize(
    ("setting", "read", "since", "pi", "run", "framed", "passed", "why"),
    [
        ("allow", True, INF, True, True, True, True, "guard.clipboard = allow"),
        ("block", False, 0.1, False, False, False, False, "guard.clipboard = block"),
        ("user", True, 0.1, False, False, False, False, "a clipboard read"),
        ("user", False, CLIPBOARD_AFTER_KEY + 0.01, False, False, False, False, "no keystroke"),
        ("user", False, INF, False, False, False, False, "no keystroke"),
        ("user", False, 0.5, True, True, False, False, "a run is streaming"),
        ("user", False, 0.5, True, False, True, False, "inside a frame Pi draws"),
        ("user", False, 0.5, False, True, True, True, "right after your keystroke"),  # generic
        ("user", False, CLIPBOARD_AFTER_KEY, True, False, False, True, "right after"),
    ],
)
def test_clipboard_rule(
    setting: str,
    read: bool,
    since: float,
    pi: bool,
    run: bool,
    framed: bool,
    passed: bool,
    why: str,
) -> None:
    got, reason = clipboard_passes(setting, read, since, pi, run, framed)
    assert got is passed
    assert reason.startswith(why), reason


def test_clipboard_notice_names_the_sequence_never_its_payload() -> None:
    text = clipboard_notice("osc52", False, 38, "a run is streaming")
    assert text.startswith("removed a clipboard write (OSC 52, 38 bytes) from Pi's output: a run")
    assert "read (OSC 52" in clipboard_notice("osc52", True, 9, "x")
    assert "file download (iTerm2" in clipboard_notice("osc1337 File", False, 9, "x")
    assert "clipboard read (kitty" in clipboard_notice("osc5522", True, 9, "x")
    assert "clipboard sequence (weird, 9 bytes)" in clipboard_notice("weird", False, 9, "x")


def test_every_guarded_sequence_has_a_name() -> None:
    assert set(SEQUENCE_NAMES) == GUARDED_WHATS
    text = sequence_notice("osc777", 61)
    assert "notification (OSC 777), 61 bytes" in text
    assert "guard.sequences = allow" in text
