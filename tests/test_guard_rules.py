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


# -- what follows a decision: the engine alone (engine/guard.py, on_guard_decided) ----------
def _guard_steps(*facts: object, bridge: bool = True) -> tuple[object, list[object]]:
    from cuewrap.engine import EngineConfig, initial_state, step
    from cuewrap.facts import BridgeHello

    s = initial_state(EngineConfig(guard_clipboard="user", guard_sequences="own"))
    if bridge:
        s, _ = step(s, BridgeHello(1, "1.4.0", "tui", True, "sid", "/s.jsonl", 1), 1.0)
    effects: list[object] = []
    for f in facts:
        s, fx = step(s, f, 2.0)  # type: ignore[arg-type]
        effects.extend(fx)
    return s, effects


def test_a_removed_clipboard_write_is_recorded_counted_and_said_once_while_the_bridge_lives() -> (
    None
):
    from cuewrap.engine.effects import Diagnostic, Record
    from cuewrap.facts import GuardDecided

    removed = GuardDecided("clipboard", "osc52", False, 120, why="no keystroke", at="12:00:01")
    passed = GuardDecided("clipboard", "osc52", True, 30, why="right after your keystroke")
    data = GuardDecided("clipboard", "osc5522 data", False, 9)
    s, fx = _guard_steps(removed, passed, data, removed)
    records = [e for e in fx if isinstance(e, Record)]
    assert [(r.kind, r.fields["passed"], r.fields["why"]) for r in records] == [
        ("clipboard", False, "no keystroke"),
        ("clipboard", True, "right after your keystroke"),
        ("clipboard", False, "no keystroke"),
    ]  # a kitty write's data is not recorded again; no "fact" record of its own
    assert records[0].fields["setting"] == "user" and records[0].fields["bytes"] == 120
    says = [e for e in fx if isinstance(e, Diagnostic)]
    assert len(says) == 1 and "120 bytes" in says[0].text
    assert (s.clip_removed.count, s.clip_removed.last_at) == (2, "12:00:01")  # type: ignore[attr-defined]
    _, fx = _guard_steps(removed, bridge=False)
    assert not [e for e in fx if isinstance(e, Diagnostic)]  # nobody to say it to


def test_a_sequence_removed_from_a_frame_is_said_once_per_run() -> None:
    from cuewrap.engine.effects import Diagnostic
    from cuewrap.facts import AgentStart, GuardDecided, UserInput

    title = GuardDecided("sequences", "osc2", False, 40, at="12:00:02")
    s, fx = _guard_steps(title, title, UserInput("interactive"), AgentStart(), title, title)
    assert len([e for e in fx if isinstance(e, Diagnostic)]) == 2  # before the run, in it
    assert s.seq_removed.count == 4  # type: ignore[attr-defined]
