"""The screen source: the pure Pi-screen classifier, the worker (in process, on a recording of
real Pi 1.4.0), the watcher around the real worker subprocess (backlog, resync, failures,
feed cost), and real Pi teed into a watcher."""

from __future__ import annotations

import base64
import os
import re
import signal
import statistics
import sys
import threading
import time
import zlib
from collections.abc import Callable

import pytest
from waiting import absence_window, turning, wait_until

from cuewrap.facts import Fact, ScreenActivity
from cuewrap.loop import Loop, Timer
from cuewrap.screen import ScreenWatcher
from cuewrap.screen.pi_screen import SPINNER_FRAMES, classify, is_working
from cuewrap.screen.worker import DATA, RESYNC, FrameDecoder, ScreenReader, encode, size_payload

W = 100
BORDER = "─" * W
CWD = "/tmp/scr/home/work"
STATS = "↑1.5k ↓20 1.2%/128k (auto)" + " " * 64 + "fake-model"


def status_border(msg: str, frame: str = "⠋") -> str:
    head = f"── {frame} {msg} "
    return head + "─" * (W - len(head))


def pi_bottom(top: str, editor: str = "") -> list[str]:
    """Pi's bottom lines as pyte shows them (recorded at 100x30)."""
    return ["", " Took 2.0s", "", top, editor, BORDER, CWD, STATS]


# --------------------------------------------------------------------------------------------
# pi_screen: pure


@pytest.mark.parametrize("frame", list(SPINNER_FRAMES))
def test_working_with_every_spinner_frame(frame: str) -> None:
    assert classify(pi_bottom(status_border("Working", frame))) == "working"


@pytest.mark.parametrize(
    "msg",
    [
        "Retrying (1/2) in 2s... (escape to cancel)",
        "Auto-compacting... (escape to cancel)",
        "Compacting context... (escape to cancel)",
        "Reticulating splines",  # ctx.ui.setWorkingMessage
    ],
)
def test_working_variants(msg: str) -> None:
    assert classify(pi_bottom(status_border(msg, "⠴"))) == "working"
    assert is_working(pi_bottom(status_border(msg, "⠴"))) is True


def test_working_message_cut_at_a_narrow_edge() -> None:
    assert classify(["── ⠙ Retrying (1/2) in 1s... (esc", "", "─" * 34, "~/w", "0.1%"]) == "working"


def test_idle() -> None:
    assert classify(pi_bottom(BORDER)) == "idle"
    assert is_working(pi_bottom(BORDER)) is False


def test_idle_with_text_in_the_editor() -> None:
    assert classify(pi_bottom(BORDER, " fix the tests please")) == "idle"


def test_idle_as_recorded_with_trailing_blanks() -> None:
    lines = [ln + " " * 5 for ln in pi_bottom(BORDER)]
    assert classify(lines) == "idle"


def test_dialog_is_neither_working_nor_idle() -> None:
    # ctx.ui.confirm during a run, recorded: the editor and the spinner are replaced, the
    # dialog keeps plain borders.
    screen = [
        " Deploy",
        " Ship it?",
        "",
        " → Yes",
        "   No",
        "",
        " ↑↓ navigate  enter select  escape/ctrl+c cancel",
        "",
        BORDER,
        CWD,
        STATS,
    ]
    assert classify(screen) == "dialog"
    assert is_working(screen) is None


def test_ask_questionnaire_hints_are_a_dialog() -> None:
    screen = [BORDER, " Which color?", " ❯ Blue", "   Red", "", " Enter to select · Esc to cancel",
              BORDER, CWD, STATS]  # fmt: skip
    assert classify(screen) == "dialog"


def test_one_plain_border_is_not_idle() -> None:
    # after a resync or while a long dialog hides the top border
    assert classify(["", "", "", "", "", BORDER, CWD, STATS]) == "unknown"
    # two borders with nothing between them are not the editor either
    assert classify(["", "", "", "", BORDER, BORDER, CWD, STATS]) == "unknown"


def test_blank_and_foreign_screens_are_unknown() -> None:
    assert classify([""] * 30) == "unknown"
    assert classify(["$ ls", "a b c", "$"]) == "unknown"
    assert classify([]) == "unknown"
    # Pi's exit screen
    assert classify(["", " done", "", "To resume this session: pi --session 0199"]) == "unknown"


def test_a_spinner_outside_a_border_is_not_working() -> None:
    assert classify(pi_bottom(BORDER, " ⠋ Working")) == "idle"


def test_only_the_bottom_window_is_read() -> None:
    lines = [status_border("Working")] + [""] * 20 + pi_bottom(BORDER)
    assert classify(lines) == "idle"


# --------------------------------------------------------------------------------------------
# the worker, in process, on a recording of real Pi 1.4.0 (100x30): start-up, the prompt
# "run it", a bash tool call `sleep 2` (spinner frames), "done", idle. zlib + base64.

RECORDING = (
    "eNrtW8Fu2kAQPeYjfNlDKyVSY3bWBuNaKqdKVXPopVIOlAONTUDYXguwcs0pPfRQVe0lt57aH+ihlfoP/Qe+pGuz"
    "BpoMkChgXHWQpWEHez1v3njGO9hGuwXcdvtGu+WERjbgvD+TQktLS1vLhpLipdF+oYainh0kZj8+c1I1SI2OU+fg"
    "tYw3RvtsaR8L+kYHuNc6UAJyYXtcy2IstLS0tLWsa9nQ0tGyqaVbzDOfsJgRiimhmBOKSSGfdWYkFwUu8EBBEydG"
    "m0dGp+l5aheB6CxEZyO6OqJrIDoH0TURnYvoFGxEiSEBDApgWAADAxgawOAAhgcwQIAhEhgigXKDIRIYIoEhEhgi"
    "sUBkuZH6Ek0/X9J2xy3nJPfbkkcX4eBELBtHbPefvyxoEqdb5tS96dHaJEpq47NRrS+joHYhR0PsOIvfPI6b/HEN"
    "RHPIDrvpRB4tjtI7bC8ket1hcBxJPwjXhOm8aIlGaHS49/uSHbMMzsFSrdAgVJBZTVWgrOi0O4oH8flT1vNZLCes"
    "J9PYN9mrXi8cxAHLTsqCuPs2DPwnbDwcJInam/nyIg5l1zdzsPeNamu1FaNBcj4Kkl2ZssltC0fd4UdxMkpjNpiU"
    "lB1u2O5sNm9/aWud9xa1y3bLMIzlJ8LvZDIL8riZMVmuGc7eHbHqloHdymXTL+8LHZsrT1VyUZfg7cRHpWdF9bld"
    "RcCE6laR+TXr7j1Ul1YL9iIGIXrExmGgCobIMEV3Lkfbsgr27xiBOUZEz8NuMg58pm5TxvNLtyybrH8qtV1TattF"
    "aptefQSzPmTTq0+CMzDFbhPdA9LbfYLlJwXL1lbWD2fjB7FRITZ+ERsVYuM7sVEhNr4SGxVi4xuxUSE23hEbFWLj"
    "A7FRITao71YlNqhVUCU2aC1Oa/H/iY1NvV7YQ6+XmgfUPCA2qHlAzQNig5oH1DwgNqh5QGxQ84CaB8QGNQ/oj3xi"
    "g9bitBYnNrbY5hRVa3OuMvgwlkymkySdHO3YXuQZXBu36bWUwzI8iNq0/3c/1vNYvJLBfBkHZb4wQ+9ulvE4smVC"
    "/jiyXcXHkf8AoIK6Eg=="
)


def recording() -> bytes:
    return zlib.decompress(base64.b64decode("".join(RECORDING)))


def pi_frames() -> list[bytes]:
    """The recording cut before each synchronized-output frame (`CSI ?2026h`)."""
    data = recording()
    cuts = [m.start() for m in re.finditer(re.escape(b"\x1b[?2026h"), data)]
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True) if b > a]


def replay(reader: ScreenReader, frames: list[bytes], t: float, step: float = 0.08):
    """Feed frames one per `step` seconds (Pi redraws every ~80 ms); return (reports, t)."""
    out: list[tuple[float, str]] = []
    for f in frames:
        reader.data(f, t)
        out += [(t, s) for s in reader.tick(t)]
        t += step
        out += [(t, s) for s in reader.tick(t)]
    return out, t


def settle(reader: ScreenReader, t: float, until: float) -> tuple[list[tuple[float, str]], float]:
    """Advance the clock as the worker's select would, to `until`."""
    out: list[tuple[float, str]] = []
    while True:
        due = reader.deadline()
        if due is None or due > until:
            return out, until
        t = max(t, due)
        out += [(t, s) for s in reader.tick(t)]


def test_recording_has_pi_frames() -> None:
    frames = pi_frames()
    assert len(frames) > 30
    assert sum(b"Working" in f for f in frames) > 20


def test_worker_reads_the_recording() -> None:
    r = ScreenReader(100, 30)
    frames = pi_frames()
    # start-up and typing the prompt (the first frame of the run shows the prompt)
    start = next(i for i, f in enumerate(frames) if b"Working" in f) - 1
    reports, t = replay(r, frames[:start], 0.0)
    more, t = settle(r, t, t + 1.0)  # the user reads the screen for a second
    reports += more
    assert [s for _, s in reports] == ["idle"]
    t_run = t
    more, t = replay(r, frames[start:], t)
    reports += more
    t_last = t - 0.08
    more, t = settle(r, t, t + 2.0)
    reports += more
    assert [s for _, s in reports] == ["idle", "working", "idle"]
    # working is confirmed within 2 reads / 200 ms of the first spinner frame
    t_working = next(t for t, s in reports if s == "working")
    assert t_working - (t_run + 0.08) <= 0.25
    # idle only after the border stayed plain for ~0.5 s
    assert reports[-1][0] - t_last >= 0.5
    assert r.deadline() is None  # nothing pending: the worker blocks in select


def test_worker_reads_at_most_every_100ms() -> None:
    r = ScreenReader(100, 30)
    calls = 0
    real = r.lines

    def counting() -> list[str]:
        nonlocal calls
        calls += 1
        return real()

    r.lines = counting  # type: ignore[method-assign]
    t = 0.0
    for f in pi_frames():  # the whole run arriving within 0.37 s
        r.data(f, t)
        r.tick(t)
        t += 0.01
    assert calls <= 5


def test_worker_does_not_read_inside_a_synchronized_frame() -> None:
    r = ScreenReader(100, 30)
    frames = pi_frames()
    start = next(i for i, f in enumerate(frames) if b"Working" in f)
    _, t = replay(r, frames[:start], 0.0)
    _, t = settle(r, t, t + 1.0)
    assert r.reported == "idle"
    frame = frames[start + 2]
    half = frame.index(b"Working")
    r.data(frame[:half], t)
    assert r.screen.sync_open
    t += 0.5
    assert r.tick(t) == []  # not read: the frame is open
    r.data(frame[half:], t)
    assert not r.screen.sync_open
    assert r.tick(t) == [] and r.tick(t + 0.2) == ["working"]


def test_worker_resync_reports_unknown_then_recovers() -> None:
    r = ScreenReader(100, 30)
    frames = pi_frames()
    spin = [i for i, f in enumerate(frames) if b"Working" in f]
    reports, t = replay(r, frames[: spin[5]], 0.0)
    assert reports[-1][1] == "working"
    # the parent dropped output (cut inside an escape sequence) and says so
    assert r.resync(100, 30, t) == ["unknown"]
    r.data(frames[spin[5]][7:], t)  # the rest of a frame whose start was dropped
    assert r.tick(t + 0.3) == []  # still unknown: no whole frame since the marker
    more, t = replay(r, frames[spin[5] + 1 : spin[10]], t + 0.3)
    assert [s for _, s in more] == ["working"]
    more, t = replay(r, frames[spin[10] :], t)
    more += settle(r, t, t + 2)[0]
    assert [s for _, s in more] == ["idle"]


def test_worker_resync_keeps_cells_so_idle_is_seen() -> None:
    # the gap swallowed spinner frames; the frame that ends the run arrives whole
    r = ScreenReader(100, 30)
    frames = pi_frames()
    spin = [i for i, f in enumerate(frames) if b"Working" in f]
    _, t = replay(r, frames[: spin[3]], 0.0)
    r.resync(100, 30, t)
    more, t = replay(r, frames[spin[-1] + 1 :], t)
    more += settle(r, t, t + 2)[0]
    assert [s for _, s in more] == ["idle"]


def test_worker_resize_and_deccolm() -> None:
    r = ScreenReader(100, 30)
    r.data(b"\x1b[?3h", 0.0)  # DECCOLM: a real terminal ignores it; so do we
    assert r.screen.columns == 100
    r.resize(80, 24)
    assert (r.screen.columns, r.screen.lines) == (80, 24)


def test_frame_decoder_splits_anywhere() -> None:
    stream = encode(DATA, b"abc") + encode(RESYNC, size_payload(80, 24)) + encode(DATA, b"")
    for cut in range(len(stream) + 1):
        d = FrameDecoder()
        got = list(d.feed(stream[:cut])) + list(d.feed(stream[cut:]))
        assert got == [(b"D", b"abc"), (b"R", b"80 24"), (b"D", b"")]


def test_frame_decoder_rejects_garbage() -> None:
    with pytest.raises(ValueError):
        list(FrameDecoder().feed(b"X\x00\x00\x00\x01a"))


# --------------------------------------------------------------------------------------------
# the watcher around a subprocess


class Harness:
    def __init__(self, **kw: object) -> None:
        self.loop = Loop()
        self.facts: list[Fact] = []
        self.errors: list[tuple[str, BaseException]] = []
        self.w = ScreenWatcher(
            self.loop, kw.pop("cols", 100), kw.pop("rows", 30),  # type: ignore[arg-type]
            self.facts.append, lambda where, e: self.errors.append((where, e)), **kw,  # type: ignore[arg-type]
        )  # fmt: skip

    def run_until(self, cond: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
        """Run the loop until ``cond()`` holds; fail naming ``what`` after ``timeout``."""
        wait_until(cond, timeout, what, interval=0.02, sleep=turning(self.loop))

    def pump(self, seconds: float) -> None:
        """Run the loop for ``seconds``: the pace of a replay (Pi's frame gaps)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.loop.run_once(max_timeout=left)


@pytest.fixture
def harness() -> Callable[..., Harness]:
    made: list[Harness] = []

    def make(**kw: object) -> Harness:
        h = Harness(**kw)
        made.append(h)
        return h

    yield make  # type: ignore[misc]
    for h in made:
        h.w.stop()
        h.loop.close()


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
    h.w.resize(100, 30)  # Pi redraws in full after a resize
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
    assert h.loop.selector.get_map() == {} or len(h.loop.selector.get_map()) == 0


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
    assert h.loop.timeout() is None and len(h.loop.selector.get_map()) == 0


def test_watcher_stop_reaps(harness: Callable[..., Harness]) -> None:
    h = harness()
    assert h.w.start()
    proc = h.w._proc
    h.w.stop()
    h.w.stop()
    assert proc is not None and proc.returncode is not None
    assert h.errors == [] and h.w.state == "off"


def test_worker_imports_no_pyte_in_the_parent() -> None:
    import subprocess

    code = (
        "import sys; from cuewrap.loop import Loop; from cuewrap.screen import ScreenWatcher\n"
        "w = ScreenWatcher(Loop(), 80, 24, print); w.start(); w.feed(b'x'); w.stop()\n"
        "assert 'pyte' not in sys.modules, 'pyte imported'"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr


def feed_cost_us(h: Harness, chunk: bytes, chunks: int, gap: float = 0.0) -> float:
    """Median time of one feed(), the loop running (writer, reports) between chunks."""
    times = []
    for _ in range(chunks):
        t = time.perf_counter()
        h.w.feed(chunk)
        times.append(time.perf_counter() - t)
        h.loop.run_once(max_timeout=0)
        if gap:
            h.pump(gap)
    return statistics.median(times) * 1e6


def test_feed_cost(harness: Callable[..., Harness]) -> None:
    """The relay's cost of feed() (median), printed with -s: one writev into the pipe while
    the worker keeps up; a queue append, or a drop and a resync marker, when it does not."""
    spin = [f for f in pi_frames() if b"Working" in f]
    pi_chunk = (b"".join(spin) * 200)[:65536]  # Pi's own frames, 64 KiB
    real, stuck, flooded = harness(), harness(argv=["sleep", "30"]), harness()
    assert real.w.start() and stuck.w.start() and flooded.w.start()
    time.sleep(0.3)
    small = feed_cost_us(real, spin[0], 30, gap=0.08)  # one Pi frame every 80 ms
    paced = feed_cost_us(real, pi_chunk, 15, gap=0.15)  # 64 KiB every 150 ms
    full = feed_cost_us(stuck, os.urandom(65536), 200)  # nobody reads: queue, then drop
    flood = feed_cost_us(flooded, pi_chunk, 200)  # far beyond pyte's speed
    sys.stdout.write(
        f"\nfeed() median: one Pi frame ({len(spin[0])} B) {small:.1f} us; 64 KiB, worker "
        f"keeping up {paced:.1f} us, worker stuck {full:.1f} us, worker flooded {flood:.1f} us "
        f"({flooded.w.stats.drops} drops, {flooded.w.stats.dropped_bytes >> 10} KiB dropped)\n"
    )
    assert real.w.stats.drops == 0 and stuck.w.stats.drops > 0 and flooded.w.stats.drops > 0
    assert max(small, paced, full, flood) < 2000


class Tee:
    """A ScreenWatcher on its own Loop in a thread, fed with everything a PiSession's
    terminal receives (the rig's reader thread keeps ``raw_output``; we forward what is new)."""

    def __init__(self, session, cols: int = 100, rows: int = 30) -> None:  # type: ignore[no-untyped-def]
        self.session = session
        self.cols, self.rows = cols, rows
        self.facts: list[tuple[float, Fact]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = Loop()
        w = ScreenWatcher(loop, self.cols, self.rows,
                          lambda f: self.facts.append((time.monotonic(), f)),
                          lambda where, e: self.errors.append(e))  # fmt: skip
        w.start()
        sent = 0
        try:
            while not self._stop.is_set():
                raw = self.session.raw_output
                if len(raw) > sent:
                    w.feed(raw[sent:])
                    sent = len(raw)
                loop.run_once(max_timeout=0.02)
        finally:
            w.stop()
            loop.close()

    def wait(self, n: int, timeout: float = 5.0) -> list[Fact]:
        """Wait for ``n`` facts; return all facts seen so far."""
        wait_until(lambda: len(self.facts) >= n, timeout, f"{n} screen fact(s)", interval=0.02,
                   detail=lambda: [f for _, f in self.facts])  # fmt: skip
        return [f for _, f in self.facts]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


IDLE, WORKING = ScreenActivity(working=False), ScreenActivity(working=True)


@pytest.mark.pi
def test_real_pi_working_then_idle(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    from fakemodel import text, tool_call

    fakemodel.push(tool_call("bash", {"command": "sleep 2"}))
    fakemodel.push(text("done"))
    s = pi_session(wrap=False, test_ext=False, dimensions=(30, 100))
    tee = Tee(s)
    try:
        assert tee.wait(1) == [IDLE]  # Pi is idle at start
        s.prompt("run sleep 2")
        s.wait_working()
        t_run = time.monotonic()
        assert tee.wait(2) == [IDLE, WORKING]
        assert tee.facts[1][0] - t_run < 1.0
        s.wait_for_screen(r"Took \d", 10)
        s.wait_idle()
        t_idle = time.monotonic()
        assert tee.wait(3) == [IDLE, WORKING, IDLE]
        assert tee.facts[2][0] - t_idle < 1.5
        assert tee.errors == []
    finally:
        tee.close()


@pytest.mark.pi
def test_real_pi_dialog_is_not_idle(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    from fakemodel import text, tool_call

    # the model thinks for 1 s (spinner), then the dialog replaces the editor and the spinner
    fakemodel.push(tool_call("test_confirm", {"title": "Deploy", "message": "Ship it?"}, delay=1.0))
    fakemodel.push(text("done"))
    s = pi_session(wrap=False, dimensions=(30, 100))
    tee = Tee(s)
    try:
        assert tee.wait(1) == [IDLE]
        s.prompt("confirm please")
        s.wait_dialog()
        # the spinner is gone, the borders are plain: still no idle
        absence_window(1.5, "an idle fact while the dialog shows")
        assert [f for _, f in tee.facts] == [IDLE, WORKING]
        s.enter()  # → Yes
        s.wait_for_screen(r"confirmed: yes", 10)
        s.wait_idle()
        assert tee.wait(3) == [IDLE, WORKING, IDLE]
        assert tee.errors == []
    finally:
        tee.close()


def test_worker_survives_a_pyte_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    r = ScreenReader(100, 30)
    frames = pi_frames()
    start = next(i for i, f in enumerate(frames) if b"Working" in f)
    _, t = replay(r, frames[: start + 6], 0.0)
    assert r.reported == "working"

    def boom(data: bytes) -> None:
        raise ValueError("pyte")

    monkeypatch.setattr(r._stream, "feed", boom)
    assert r.data(b"\x1b[?2026h", t) == ["unknown"]  # counted as a gap
    more, t = replay(r, frames[start + 6 :], t)
    more += settle(r, t, t + 2)[0]
    assert [s for _, s in more] == ["working", "idle"]
