"""Issue 40 inside tmux: real Pi under ``python -m cuewrap`` in a private tmux server with
``allow-passthrough on`` (tests/tmuxrig.py), the fake model's answer wrapping OSC 777 in tmux's
passthrough (``ESC P tmux; ESC ESC ] 777 ; … ESC \\``), behind a frame end and without one.
tmux unwraps what reaches it and hands the inner OSC to the outer terminal: none of the
model's may arrive there; cuewrap's own Finished (the user away) arrives once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fakemodel import FakeModel, text
from termscan import FRAME_AGAIN, FRAME_END, notifications, osc_numbers
from tmuxrig import Scene
from waiting import absence_window

pytestmark = pytest.mark.tmux

WRAPPED = "\x1bPtmux;\x1b\x1b]777;notify;Pi — work;evil through tmux\x07\x1b\\"
ANSWER = f"Here is the summary {WRAPPED}{FRAME_END}{WRAPPED}{FRAME_AGAIN}and that is all."


def test_a_wrapped_notification_does_not_reach_the_outer_terminal(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    sc = tmux_scene({"focus-events": "on"}, {"allow-passthrough": "on"})
    c = sc.client
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    c.focus_out()
    sc.presence("away")
    c.prompt("summarise")
    sc.settled(1)
    sc.wait(lambda: notifications(c.raw_output), "cuewrap's Finished through tmux")
    absence_window(1.5, "a late notification")
    evil = [s for s in osc_numbers(c.raw_output, 777) if b"evil" in s.payload]
    assert not evil, f"{len(evil)} of the model's OSC 777 reached the outer terminal"
    assert notifications(c.raw_output) == [("Pi — work", "Finished")]
    assert [r.get("cue") for r in sc.log("cue")] == ["finished"]
