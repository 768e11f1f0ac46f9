"""The screen source, in one process: the pure Pi-screen classifier and the worker's reader
fed a recording of real Pi 1.4.0 on a simulated clock.

The watcher around the real worker process is tests/test_screen_watcher.py, real Pi teed into
a watcher tests/test_screen_pi.py, and the cost of ``feed()`` scripts/bench_screen."""

from __future__ import annotations

import pytest
from screenrig import pi_frames

from cuewrap.screen.pi_screen import SPINNER_FRAMES, classify
from cuewrap.screen.worker import DATA, RESYNC, FrameDecoder, ScreenReader, encode, size_payload

pytestmark = pytest.mark.unit

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


def test_working_message_cut_at_a_narrow_edge() -> None:
    assert classify(["── ⠙ Retrying (1/2) in 1s... (esc", "", "─" * 34, "~/w", "0.1%"]) == "working"


def test_idle() -> None:
    assert classify(pi_bottom(BORDER)) == "idle"


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
# the worker, in process, on a recording of real Pi 1.4.0 (tests/screenrig.py)


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
    r.resize(rows=24, cols=80)
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
