"""What a session holds (cuewrap/wiring/startup.py ``Held``): given back last taken first, every
part even when one fails, and the failure not lost."""

from __future__ import annotations

from functools import partial

import pytest

from cuewrap.wiring.startup import Held

pytestmark = pytest.mark.unit


def test_given_back_last_taken_first() -> None:
    given: list[str] = []
    with Held() as held:
        for part in ("log", "child", "terminal"):
            held.callback(partial(given.append, part))
        assert given == []
    assert given == ["terminal", "child", "log"]


def test_every_part_is_given_back_when_one_fails_and_its_error_is_raised() -> None:
    given: list[str] = []

    def fails() -> None:
        given.append("controller")
        raise OSError("the controller could not finish")

    with pytest.raises(OSError, match="could not finish"), Held() as held:
        held.callback(lambda: given.append("log"))
        held.callback(fails)
        held.callback(lambda: given.append("terminal"))
    assert given == ["terminal", "controller", "log"]


def test_an_error_inside_still_gives_everything_back_and_goes_on() -> None:
    given: list[str] = []
    with pytest.raises(KeyboardInterrupt), Held() as held:
        held.callback(lambda: given.append("log"))
        held.callback(lambda: given.append("terminal"))
        raise KeyboardInterrupt
    assert given == ["terminal", "log"]


def test_given_back_once() -> None:
    given: list[str] = []
    held = Held()
    with held:
        held.callback(lambda: given.append("log"))
    held.__exit__(None, None, None)  # a second exit has nothing left to give back
    assert given == ["log"]
