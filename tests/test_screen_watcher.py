"""The screen watcher around its real worker process: replay of real Pi's frames, backlog and
resync, failures of the worker, reaping (tests/screenrig.py holds the recording and the
``harness`` fixture)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from screenrig import Harness, pi_frames
from waiting import absence_window, turning

from cuewrap.facts import ScreenActivity
from cuewrap.loop import Timer
from cuewrap.screen.worker import DATA, RESYNC

pytestmark = pytest.mark.pty


def test_watcher_replays_real_pi_output(harness: Callable[..., Harness]) -> None:
    h = harness()
    assert h.w.start()
    frames = pi_frames()
    start = next(i for i, f in enumerate(frames) if b"Working" in f) - 1
    for i, f in enumerate(frames):
        if i == start:
            h.pump(1.0)  # idle before the prompt is sent
        h.w.feed(f)
        h.pump(0.08)
    h.run_until(lambda: len(h.facts) >= 3, "three screen facts")
    assert h.facts == [ScreenActivity(False), ScreenActivity(True), ScreenActivity(False)]
    assert h.w.state == "idle"
    assert h.errors == [] and h.w.stats.drops == 0


def test_watcher_backlog_overflow_drops_and_resyncs(harness: Callable[..., Harness]) -> None:
    # a worker that never reads: the pipe fills, then the backlog, then overflows
    h = harness(argv=["sleep", "30"], backlog=256 * 1024)
    assert h.w.start()
    chunk = b"x" * 65536
    for _ in range(40):
        h.w.feed(chunk)
        assert h.w._queued <= 256 * 1024
    st = h.w.stats
    assert st.drops > 0 and st.dropped_bytes > 0
    assert st.fed_bytes == 40 * 65536
    assert st.max_queued <= 256 * 1024
    # after an overflow the queue holds at most a partly written frame, the marker, new data
    kinds = [f[:1] for f in h.w._queue]
    assert RESYNC in kinds and kinds[-1] == DATA
    assert kinds.index(RESYNC) <= 1


def test_watcher_flood_then_real_state(harness: Callable[..., Harness]) -> None:
    # more output than pyte can parse: drops happen, the worker skips to the present and
    # still reports what the screen shows at the end
    h = harness(backlog=64 * 1024)
    assert h.w.start()
    frames = pi_frames()
    spin = [f for f in frames if b"Working" in f]
    noise = b"\x1b[?2026h" + b"".join(b"\x1b[%d;1H\x1b[2K%s" % (y, b"#" * 99) for y in range(1, 20))
    noise += b"\x1b[?2026l"
    for f in frames[: frames.index(spin[0])]:
        h.w.feed(f)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.0:  # ~2 MB/s of redraws above the editor
        for _ in range(10):
            h.w.feed(noise)
        h.loop.run_once(max_timeout=0.005)
    for f in spin[:10]:
        h.w.feed(f)
        h.pump(0.08)
    h.run_until(lambda: h.w.state == "working", "state 'working'")
    assert h.w.stats.drops > 0
    assert ScreenActivity(True) in h.facts
    assert ScreenActivity(False) not in h.facts[h.facts.index(ScreenActivity(True)) :]


def test_watcher_resize_reaches_the_worker(harness: Callable[..., Harness]) -> None:
    h = harness(cols=80, rows=24)
    assert h.w.start()
    h.w.resize(rows=30, cols=100)  # Pi redraws in full after a resize
    for f in pi_frames():
        h.w.feed(f)
        h.pump(0.08)
    h.run_until(lambda: ScreenActivity(True) in h.facts, "ScreenActivity(True)")


def test_watcher_worker_that_cannot_start(harness: Callable[..., Harness]) -> None:
    h = harness(argv=["/nonexistent/cuewrap-worker"])
    assert h.w.start() is False
    assert len(h.errors) == 1 and h.errors[0][0] == "screen"
    h.w.feed(b"abc")  # a no-op
    assert h.w.state == "off" and not h.w.alive


def test_watcher_worker_death_reported_once(harness: Callable[..., Harness]) -> None:
    h = harness()
    assert h.w.start()
    pid = h.w._proc.pid  # type: ignore[union-attr]
    h.w.feed(pi_frames()[0])
    os.kill(pid, 9)
    h.run_until(lambda: not h.w.alive, "the watcher to see the worker die")
    for _ in range(5):
        h.w.feed(b"x" * 65536)
    absence_window(0.2, "a second error report", sleep=turning(h.loop))
    assert len(h.errors) == 1
    assert h.w.state == "off" and h.facts == []
    assert h.loop.watching() == []


def test_watcher_worker_exit_reported_once(harness: Callable[..., Harness]) -> None:
    h = harness(argv=[sys.executable, "-c", "import sys; sys.exit(3)"])
    assert h.w.start()
    h.run_until(lambda: bool(h.errors), "the worker's exit reported")
    absence_window(0.1, "a second error report", sleep=turning(h.loop))
    assert len(h.errors) == 1 and "3" in str(h.errors[0][1])


def test_watcher_reaps_a_lingering_worker_without_polling(harness: Callable[..., Harness]) -> None:
    """A worker that closes its pipes but does not exit is KILLed after LINGER and reaped when
    its pidfd turns readable: one timer (the KILL deadline), no reap poll on the loop."""
    linger = "import os, time; os.close(1); os.close(0); time.sleep(60)"
    h = harness(argv=[sys.executable, "-c", linger])
    timers: list[float] = []
    call_at = h.loop.call_at

    def counting_call_at(when: float, callback: Callable[[], None], **kw: bool) -> Timer:
        timers.append(when)
        return call_at(when, callback, **kw)

    h.loop.call_at = counting_call_at  # type: ignore[method-assign]
    assert h.w.start()
    proc = h.w._proc
    assert proc is not None
    h.run_until(lambda: bool(h.errors), "the lingering worker reaped and reported")
    assert proc.returncode == -signal.SIGKILL
    assert "status -9" in str(h.errors[0][1])
    assert len(timers) == 1  # the KILL deadline; the old code polled every 50 ms
    assert h.loop.timeout() is None and h.loop.watching() == []


def test_watcher_stop_reaps(harness: Callable[..., Harness]) -> None:
    h = harness()
    assert h.w.start()
    proc = h.w._proc
    h.w.stop()
    h.w.stop()
    assert proc is not None and proc.returncode is not None
    assert h.errors == [] and h.w.state == "off"


def test_worker_imports_no_pyte_in_the_parent() -> None:
    code = (
        "import sys; from cuewrap.loop import Loop; from cuewrap.screen import ScreenWatcher\n"
        "w = ScreenWatcher(Loop(), 80, 24, print); w.start(); w.feed(b'x'); w.stop()\n"
        "assert 'pyte' not in sys.modules, 'pyte imported'"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr
