"""The cue side built after the child's first frame (cuewrap/wiring/pending.py): what the relay
told the stand-in meanwhile reaches the controller once it exists, in order, and nothing is lost; a
decision that cannot wait builds it at once; a failed build leaves a plain passthrough."""

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
        self.consume_answer = True

    def relay_event(self, event: Any) -> None:
        self.seen.append(("event", event))

    def terminal_answer(self, answer: Any) -> None:
        self.seen.append(("answer", answer))

    def consume(self, protocol: Any) -> bool:
        self.seen.append(("consume", protocol))
        return self.consume_answer

    def clipboard(self, read: bool, framed: bool) -> bool:
        self.seen.append(("clipboard", read, framed))
        return False


class FakeRelay:
    sink: Any = None
    screen: Any = None

    def attach(self, sink: Any, screen: Any) -> None:
        self.sink, self.screen = sink, screen


def _pending(loop: Loop, controller: FakeController | None, *, frames: bool) -> PendingCueSide:
    builds: list[int] = []
    errors: list[str] = []

    def build() -> Any:
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
    relay = FakeRelay()
    p.attach = relay.attach
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
    # the relay now talks to the controller itself
    assert relay.sink == c.relay_event and relay.screen is c.output_tap
    p.feed(b"more")  # (a relay that kept the stand-in) still reaches it
    p.relay_event(ChildExited(0, None))
    assert c.seen[-2:] == [("feed", b"more"), ("event", ChildExited(0, None))]
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


def test_decisions_that_cannot_wait_build_it_at_once() -> None:
    loop = Loop()
    c = FakeController()
    p = _pending(loop, c, frames=True)
    p.feed(b"\x1b]9;done")
    assert p.consume("osc9") is True  # the controller's answer, asked now
    assert p.builds == [1]  # type: ignore[attr-defined]
    assert c.seen == [("feed", b"\x1b]9;done"), ("consume", "osc9")]

    c2 = FakeController()
    p2 = _pending(loop, c2, frames=True)
    assert p2.clipboard(read=False, framed=False) is False
    assert c2.seen == [("clipboard", False, False)]

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
    assert p.consume("osc777") is False  # the child's notification passes as it is
    assert p.clipboard(read=True, framed=False) is True  # as without the guard
    assert p.builds == [1]  # type: ignore[attr-defined]
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
