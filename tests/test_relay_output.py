"""The relay's output path on real file descriptors, without a session: the per-frame path while
a child streams (one read, the scan, one write, the next deadline; docs/architecture.md#an-output-
chunk) and the cases it hands on: a host that takes a chunk only in parts, a tap that needs no
more output."""

from __future__ import annotations

import fcntl
import math
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cuewrap.host import HostTerminal
from cuewrap.loop import Loop
from cuewrap.relay.gathering import GATHER
from cuewrap.relay.inject import Injector
from cuewrap.relay.outputpath import OutputPath
from cuewrap.relay.relay import Relay
from cuewrap.term.tracker import OutputTracker

pytestmark = pytest.mark.unit

FRAME = b"\x1b[?2026h\x1b[?25l\x1b[2;1H\x1b[2Kline %d \x1b[1mbold\x1b[0m\x1b[?2026l"


class Child:
    """The relay's view of the child, for the output path only: its PTY's master."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pid = os.getpid()
        self.reports = -1


class Tap:
    def __init__(self) -> None:
        self.fed: list[bytes] = []

    def feed(self, data: bytes) -> None:
        self.fed.append(data)

    def resize(self, *, rows: int, cols: int) -> None:
        pass


class Cues:
    """The relay's cue side, as the relay knows it: its output tap (read at each chunk) and
    its event sink."""

    def __init__(self, tap: Tap | None) -> None:
        self.tap = tap
        self.events: list[object] = []
        self.controls: object = None

    def relay_event(self, event: object) -> None:
        self.events.append(event)


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, int]]:
    master, slave = os.openpty()
    os.set_blocking(master, False)
    yield master, slave
    os.close(master)
    os.close(slave)


def _relay(master: int, out_fd: int, tap: Tap | None = None) -> tuple[Relay, Loop]:
    loop = Loop()
    host = HostTerminal(0, out_fd)
    injector = Injector(loop, host.write)
    cues = Cues(tap)

    def make(controls: object) -> Cues:
        cues.controls = controls
        return cues

    relay = Relay(
        loop,
        Child(master),  # type: ignore[arg-type]
        host,
        focus=None,
        path=OutputPath(OutputTracker()),
        injector=injector,
        cues=make,
    )
    assert relay.cues is cues and cues.controls is relay.reactions  # made with the relay's controls
    return relay, loop


def test_a_host_that_takes_chunks_in_parts_gets_every_byte(pty_pair: tuple[int, int]) -> None:
    """The host write is done inline for the usual case (all of it at once); a short write or
    EAGAIN (a non-blocking stdout, a slow terminal) goes on through host.write: nothing lost,
    nothing twice."""
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: a one-page pipe fills at once
    os.set_blocking(w, False)
    relay, _ = _relay(pty_pair[0], w)
    got = bytearray()

    def drain() -> None:
        while True:
            time.sleep(0.001)
            data = os.read(r, 1000)
            if not data:
                return
            got.extend(data)

    rest: list[int] = []  # what host.write was left with: the parts the inline write did not
    write = relay.host.write

    def counted(data: bytes | memoryview) -> None:
        rest.append(len(data))
        write(data)

    relay.host.write = counted  # type: ignore[method-assign]
    reader = threading.Thread(target=drain)
    reader.start()
    chunks = [b"".join(FRAME % (i * 40 + j) for j in range(40)) for i in range(25)]
    try:
        for chunk in chunks:
            relay._output(chunk)
    finally:
        os.close(w)
        reader.join()
        os.close(r)
    assert bytes(got) == b"".join(chunks)
    assert rest, "the pipe never filled: the case was not tested"


def test_a_stream_gathers_on_the_loops_deadline_and_arrives_intact(
    pty_pair: tuple[int, int],
) -> None:
    """A child writing a frame every few ms: after its first frames the master is not watched
    and the loop's deadline is set (no Timer per frame); each gathering relays what came, in
    order; fewer wake-ups than frames."""
    master, slave = pty_pair
    r, w = os.pipe()
    relay, loop = _relay(master, w)
    loop.on_deadline = relay._gathered
    loop.add_reader(master, relay._on_master, guarded=False)
    frames = [FRAME % i for i in range(60)]
    got = bytearray()
    seen_gathering = 0
    turns = 0
    for i, frame in enumerate(frames):
        os.write(slave, frame)
        deadline = time.monotonic() + 0.004
        while time.monotonic() < deadline:
            loop.run_once(max_timeout=max(0.0, deadline - time.monotonic()))
            turns += 1
        got.extend(os.read(r, 1 << 16) if _readable(r) else b"")
        if loop.deadline != math.inf:
            assert master not in loop.watching(), i  # the master waits while it gathers
            assert loop.deadline - loop.clock() <= GATHER
            seen_gathering += 1
    while loop.deadline != math.inf:
        loop.run_once()
    while _readable(r):
        got.extend(os.read(r, 1 << 16))
    assert bytes(got) == b"".join(frames)
    assert seen_gathering > 0
    assert master in loop.watching()  # after the last gathering it watches the master again
    assert loop.timeout() is None  # nothing pending: an idle relay blocks
    os.close(r)
    os.close(w)


def _readable(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])


def test_the_cue_sides_tap_is_read_at_each_chunk(pty_pair: tuple[int, int]) -> None:
    """The relay feeds whatever the cue side's tap is now (wiring/pending.py changes it:
    built, or the screen gate done): nothing is handed to the relay afterwards."""
    r, w = os.pipe()
    tap, other = Tap(), Tap()
    relay, _ = _relay(pty_pair[0], w, tap)
    relay._output(b"one")
    assert relay.cues is not None
    relay.cues.tap = other  # type: ignore[misc]
    relay._output(b"two")
    relay.cues.tap = None  # type: ignore[misc]  # the gate needs no more output
    relay._output(b"three")
    assert tap.fed == [b"one"] and other.fed == [b"two"]
    assert os.read(r, 100) == b"onetwothree"
    os.close(r)
    os.close(w)


def test_cuewraps_own_bytes_wait_for_a_safe_point_and_follow_the_chunk_that_makes_one(
    pty_pair: tuple[int, int],
) -> None:
    """The injector's part of the per-chunk path: queued while the stream is inside a
    sequence, written right after the chunk that ends it, never inside it."""
    r, w = os.pipe()
    relay, _ = _relay(pty_pair[0], w)
    injected: Any = relay.injector
    relay._output(b"text \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[1")  # an open CSI at the end
    injected.inject(b"<MARK>")
    assert os.read(r, 1000).endswith(b"\x1b[1") and injected.pending
    relay._output(b"mtail")
    assert os.read(r, 1000) == b"mtail<MARK>" and not injected.pending
    os.close(r)
    os.close(w)
