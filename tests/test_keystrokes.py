"""KeyWindow: keystrokes told to the engine at most once per window, plus a trailing one
(fake clock; no terminal)."""

from __future__ import annotations

import pytest

from cuewrap.loop import Loop
from cuewrap.wiring.keystrokes import KEY_WINDOW, KeyWindow

pytestmark = pytest.mark.unit


class Rig:
    def __init__(self) -> None:
        self.now = 50.0
        self.loop = Loop()
        self.loop.clock = lambda: self.now
        self.told: list[float] = []
        self.keys = KeyWindow(self.loop, lambda: self.told.append(self.now))

    def at(self, t: float) -> None:
        self.now = 50.0 + t
        self.loop.run_due_timers()


def test_first_key_told_at_once() -> None:
    r = Rig()
    r.keys.key()
    assert r.told == [50.0]


def test_keys_within_the_window_make_one_trailing_fact_at_its_end() -> None:
    r = Rig()
    r.keys.key()
    for t in (0.1, 0.2, 0.5, 0.9):
        r.at(t)
        r.keys.key()
    assert r.told == [50.0]
    r.at(KEY_WINDOW)
    assert r.told == [50.0, 50.0 + KEY_WINDOW]  # the last key was not earlier than it was
    r.at(5 * KEY_WINDOW)
    assert len(r.told) == 2  # nothing more without keys


def test_a_lone_key_has_no_trailing_fact() -> None:
    r = Rig()
    r.keys.key()
    r.at(3 * KEY_WINDOW)
    assert r.told == [50.0] and r.loop.timeout() is None


def test_keys_after_the_window_are_told_at_once_again() -> None:
    r = Rig()
    r.keys.key()
    r.at(KEY_WINDOW + 0.5)
    r.keys.key()
    assert r.told == [50.0, 50.0 + KEY_WINDOW + 0.5]


def test_close_drops_the_trailing_fact() -> None:
    r = Rig()
    r.keys.key()
    r.at(0.3)
    r.keys.key()
    r.keys.close()
    r.at(3 * KEY_WINDOW)
    assert r.told == [50.0]
