"""The cue side built after the child's first frame (cuewrap/wiring/pending.py): what the relay
told the stand-in meanwhile reaches the controller once it exists, in order, and nothing is lost;
the child's exit builds it at once; nothing in it decides for the tracker (the byte path's rules
do); a failed build leaves a plain passthrough."""

from __future__ import annotations

from typing import Any

import pytest

from cuewrap.loop import Loop
from cuewrap.relay.events import ChildExited, KeysRead
from cuewrap.term.answers import TerminalAnswer
from cuewrap.wiring.pending import LATEST, PendingCueSide
from tests.waiting import absence_window, turning, wait_until

pytestmark = pytest.mark.unit

FRAME = b"\x1b[?2026h\x1b[2Jhello\x1b[?2026l"


class Tap:
    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def feed(self, data: bytes) -> None:
        self.seen.append(("feed", data))

    def resize(self, *, rows: int, cols: int) -> None:
        self.seen.append(("resize", rows, cols))


class FakeController:
    """Records what it is told, in one list (tap and sink interleaved)."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.output_tap = Tap(self.seen)

    def relay_event(self, event: Any) -> None:
        self.seen.append(("event", event))

    def terminal_answer(self, answer: Any) -> None:
        self.seen.append(("answer", answer))


def _pending(loop: Loop, controller: FakeController | None, *, frames: bool) -> PendingCueSide:
    builds: list[int] = []
    errors: list[str] = []

    def build(cues: PendingCueSide) -> Any:
        assert cues is p  # the stand-in hands itself to what builds the cue side
        builds.append(1)
        return controller

    p = PendingCueSide(loop, build, lambda where, exc: errors.append(where), frames=frames)
    p.builds = builds  # type: ignore[attr-defined]
    p.errors = errors  # type: ignore[attr-defined]
    return p


def test_built_after_the_first_frame_then_replayed_in_order() -> None:
    loop = Loop()
    c = FakeController()
    p = _pending(loop, c, frames=True)
    assert p.tap is p  # the relay's output tap: the stand-in keeps the chunks
    p.resize(rows=24, cols=80)
    p.feed(b"\x1b[?1049h\x1b[c")  # Pi's first output: its queries, no frame yet
    p.relay_event(KeysRead())
    answer = TerminalAnswer("da1", "62;22")
    p.terminal_answer(answer)
    # a pause before the frame does not build it (Pi: only a frame's end does)
    absence_window(0.15, "the cue side built before the first frame", sleep=turning(loop))
    assert p.builds == [] and c.seen == []  # type: ignore[attr-defined]
    p.feed(FRAME)
    assert p.builds == []  # type: ignore[attr-defined]  # not inside the chunk's relay
    wait_until(lambda: p.built, 2, "the cue side built after the frame", sleep=turning(loop))
    assert p.builds == [1]  # type: ignore[attr-defined]
    assert c.seen == [
        ("resize", 24, 80),
        ("feed", b"\x1b[?1049h\x1b[c"),
        ("event", KeysRead()),
        ("answer", answer),
        ("feed", FRAME),
    ]
    # the relay now feeds the controller's tap itself (it reads ``tap`` at each chunk)
    assert p.tap is c.output_tap  # type: ignore[comparison-overlap]
    p.feed(b"late")  # a chunk read before the build: not kept, not fed twice
    p.relay_event(ChildExited(0, None))
    assert c.seen[-1] == ("event", ChildExited(0, None)) and ("feed", b"late") not in c.seen
    p.build()  # once only
    assert p.builds == [1]  # type: ignore[attr-defined]


def test_other_children_built_at_the_first_pause_after_output() -> None:
    loop = Loop()
    c = FakeController()
    p = _pending(loop, c, frames=False)
    p.feed(b"$ ")
    assert not p.built
    wait_until(lambda: p.built, 2, "built at the pause", sleep=turning(loop))
    assert c.seen == [("feed", b"$ ")]


def test_built_at_the_latest_when_the_child_is_silent() -> None:
    loop = Loop()
    c = FakeController()
    p = _pending(loop, c, frames=True)
    t0 = loop.clock()
    wait_until(lambda: p.built, LATEST + 2, "built at the latest", sleep=turning(loop))
    assert loop.clock() - t0 >= LATEST * 0.9
    assert p.builds == [1]  # type: ignore[attr-defined]


def test_the_childs_exit_builds_it_at_once_and_nothing_else_asks_it() -> None:
    loop = Loop()
    c = FakeController()
    p = _pending(loop, c, frames=True)
    p.feed(b"\x1b]9;done\x07")  # a notification: the byte path decides it, not the cue side
    assert not p.built and not hasattr(p, "consume") and not hasattr(p, "clipboard")

    c3 = FakeController()
    p3 = _pending(loop, c3, frames=True)
    p3.feed(b"bye\r\n")
    p3.relay_event(ChildExited(3, None))  # the child is gone: no frame will come
    assert p3.built
    assert c3.seen == [("feed", b"bye\r\n"), ("event", ChildExited(3, None))]


def test_a_failed_build_leaves_a_plain_passthrough() -> None:
    loop = Loop()
    p = _pending(loop, None, frames=True)
    p.feed(FRAME)
    p.relay_event(KeysRead())
    p.build()
    assert p.builds == [1]  # type: ignore[attr-defined]
    assert p.tap is None  # nothing sees the output any more
    p.feed(b"x")
    p.relay_event(KeysRead())
    p.terminal_answer(None)
    assert p.controller is None


def test_a_failing_tap_is_dropped_the_events_still_replayed() -> None:
    loop = Loop()
    c = FakeController()

    def broken(data: bytes) -> None:
        raise RuntimeError("tap")

    c.output_tap.feed = broken  # type: ignore[method-assign]
    p = _pending(loop, c, frames=True)
    p.feed(b"one")
    p.relay_event(KeysRead())
    p.feed(b"two")
    p.build()
    assert c.seen == [("event", KeysRead())]
    assert p.errors == ["replay"]  # type: ignore[attr-defined]


def test_a_tap_done_while_the_cue_side_is_built_stays_done() -> None:
    """The screen gate may decide (a stronger source already live) while the cue side is
    built or its kept output replayed: the relay then feeds the ring, never the gate again."""
    loop = Loop()
    c = FakeController()
    ring = Tap([])

    def build(cues: PendingCueSide) -> Any:
        cues.tap_done(c.output_tap, ring)  # what the gate's on_done does
        return c

    p = PendingCueSide(loop, build, lambda where, exc: None, frames=True)
    p.feed(FRAME)
    p.build()
    assert p.tap is ring  # type: ignore[comparison-overlap]
    p.tap_done(Tap([]), None)  # another tap: nothing changes
    assert p.tap is ring  # type: ignore[comparison-overlap]
