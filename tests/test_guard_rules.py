"""cuewrap.engine.guard: the terminal guard's pure rules and wording (docs/terminal-guard.md)."""

from __future__ import annotations

import math

import pytest

from cuewrap.engine.guard import CLIPBOARD_AFTER_KEY, clipboard_passes
from cuewrap.engine.wording import SEQUENCE_NAMES, sequence_removed
from cuewrap.term.clipboard import GUARDED_WHATS
from cuewrap.term.content import CONTENT_WHATS

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


def test_every_guarded_sequence_has_a_name() -> None:
    assert set(SEQUENCE_NAMES) == GUARDED_WHATS | CONTENT_WHATS
    text = sequence_removed("osc777", 61)
    assert "notification (OSC 777), 61 bytes" in text
    assert "guard.sequences = allow" in text
