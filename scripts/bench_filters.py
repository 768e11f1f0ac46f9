"""Cost of the pure byte filters on the relay hot path.

    scripts/bench_filters [MEGABYTES=100] [CHUNK_BYTES=4096] [--against REV] [--pi-only]
                          [--flood-only]

1. OutputTracker.feed over ~100 MB of child output (plain text, Pi-like TUI frames, and a
   mix), cut in PTY-sized chunks, next to a bare `for chunk in chunks: pass` loop. The
   "relay ratio" column estimates what a relay that moves 80 MB/s on its own would keep if it
   spent the tracker's CPU time serially on top (1 / (1 + 80 / tracker MB/s)).
2. Per chunk on Pi's streaming output: synthetic frames shaped like Pi 1.4.0's while it
   streams an answer (one synchronized frame per write), fed to the tracker as cuewrap sets
   it up for Pi. "hot": back to back; "paced": one chunk per 15 ms sleep, as the relay gets
   them live (cold caches make each chunk cost several times more: the live figure), the
   median of the thread CPU time of each feed; "call only" is that clock's floor (an empty
   call timed the same way).
3. Per chunk on scripts/bench's TUI flood (colours and cursor moves, no OSC), as cuewrap sets
   the tracker up for a generic child: one frame a chunk, and six (what the relay reads at
   once while it gathers a streaming child's output); hot and paced (one chunk per 2.5 ms).
4. FocusFilter.feed on input.

--against REV: the same figures for REV's tracker (git show REV:cuewrap/term/tracker.py) side
by side, to show before/after of a change (both trackers then loaded alike, from source).
--pi-only: part 2 only; --flood-only: part 3.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuewrap.term.focus import FocusFilter
from cuewrap.term.tracker import OutputTracker

ap = argparse.ArgumentParser(prog="scripts/bench_filters")
ap.add_argument("megabytes", nargs="?", type=int, default=100)
ap.add_argument("chunk_bytes", nargs="?", type=int, default=4096)
ap.add_argument("--against", metavar="REV", help="also measure REV's tracker")
ap.add_argument("--pi-only", action="store_true", help="only the per-chunk Pi figures")
ap.add_argument("--flood-only", action="store_true", help="only the per-chunk TUI flood figures")
args = ap.parse_args()

MB = args.megabytes
CHUNK = args.chunk_bytes
RELAY = 80.0  # MB/s of a bare Python relay (docs/architecture.md#measured-baselines)
rng = random.Random(7)


def tracker_at(rev: str | None) -> type[OutputTracker]:
    """REV's OutputTracker (None: the working tree's), loaded from its source text into a
    module of its own beside the current one (same dependencies). With --against both sides
    are loaded this way: a tracker imported normally and one exec'd from source differ in
    where their code and globals sit in memory, which the paced (cold-cache) figures show."""
    path = "cuewrap/term/tracker.py"
    if rev is None:
        src = Path(path).read_bytes()
    else:
        src = subprocess.run(
            ["git", "show", f"{rev}:{path}"], check=True, capture_output=True
        ).stdout
    label = rev or "worktree"
    name = "cuewrap.term._tracker_" + "".join(c if c.isalnum() else "_" for c in label)
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(src, f"{label}:{path}", "exec"), mod.__dict__)
    cls: type[OutputTracker] = mod.OutputTracker
    return cls


TRACKERS: list[tuple[str, type[OutputTracker]]] = [("now", OutputTracker)]
if args.against:
    TRACKERS = [("now", tracker_at(None)), (args.against, tracker_at(args.against))]


def pi_frame() -> bytes:
    """One Pi-like full-screen redraw: synchronized output, cursor moves, 24-bit colors."""
    parts = [b"\x1b[?2026h\x1b[?25l"]
    for row in range(1, 41):
        parts.append(b"\x1b[%d;1H\x1b[2K" % row)
        for _ in range(5):
            r, g, b = rng.randrange(256), rng.randrange(256), rng.randrange(256)
            parts.append(b"\x1b[38;2;%d;%d;%dm" % (r, g, b))
            text = "── ⠋ Working ─ text │ here ✓ "[: rng.randrange(5, 28)]
            parts.append(text.encode())
        parts.append(b"\x1b[39m")
    parts.append(b"\x1b]7501;state=working:app=pi\x1b\\" if rng.random() < 0.01 else b"")
    parts.append(b"\x1b[?2026l")
    return b"".join(parts)


def text_block(lines: int) -> bytes:
    return b"".join(
        b"%6d  lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n" % i
        for i in range(lines)
    )


def chunked(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


TEXT = text_block(50_000)  # ~4 MB
TUI = b"".join(pi_frame() for _ in range(700))  # ~4 MB
MIXED = b"".join(
    TEXT[i * 400_000 : (i + 1) * 400_000] + TUI[i * 400_000 : (i + 1) * 400_000] for i in range(10)
)


def run(label: str, block: bytes) -> None:
    chunks = chunked(block)
    rounds = max(1, (MB * 1_000_000) // len(block))
    total = rounds * len(block)

    def bare() -> None:
        for _ in range(rounds):
            for _c in chunks:
                pass

    def timed(fn: Callable[[], None]) -> float:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best

    bare_mbs = total / timed(bare) / 1e6
    for name, cls in TRACKERS:

        def tracker(cls: type[OutputTracker] = cls) -> None:
            feed = cls().feed
            for _ in range(rounds):
                for c in chunks:
                    feed(c)

        took = timed(tracker)
        trk_mbs = total / took / 1e6
        us = took / (rounds * len(chunks)) * 1e6
        ratio = 1 / (1 + RELAY / trk_mbs)
        who = f" [{name}]" if args.against else ""
        print(
            f"{label:6s} {total / 1e6:6.0f} MB  bare {bare_mbs:10.0f} MB/s"
            f"  tracker {trk_mbs:7.0f} MB/s  {us:6.2f} us/chunk  relay ratio ~{ratio:.3f}{who}"
        )


LINE_WORDS = [f"word{i}" for i in range(97)]
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def pi_line(row: int) -> bytes:
    """One line as Pi's renderer writes it: move, erase, text, then the reset that ends every
    line (SGR 0 and an empty hyperlink, OSC 8 ; ; BEL); now and then a link ended by ST."""
    words = " ".join(rng.sample(LINE_WORDS, rng.randrange(4, 12)))
    text = f" {words}".ljust(78).encode()
    if rng.random() < 0.03:
        link = b"\x1b]8;;https://example.org/" + words[:9].encode() + b"\x1b\\"
        text = link + text + b"\x1b]8;;\x1b\\"
    return b"\x1b[%d;1H\x1b[2K%s\x1b[0m\x1b]8;;\x07" % (row, text)


def pi_status(row: int) -> bytes:
    dim = b"\x1b[39m\x1b[2m"
    spin = SPINNER[rng.randrange(len(SPINNER))].encode()
    rule = "─".encode() * rng.randrange(40, 70)
    return (
        b"\x1b[%d;1H\x1b[2K%s\xe2\x94\x80\xe2\x94\x80 \x1b[22;39m%s%s\x1b[22;39m %sWorking"
        b"\x1b[22;39m%s %s\x1b[22;39m\x1b[0m\x1b]8;;\x07" % (row, dim, dim, spin, dim, dim, rule)
    )


def pi_stream(frames: int) -> list[bytes]:
    """Pi's writes while it streams an answer: one synchronized frame each (CSI ? 2026 h ...
    CSI ? 2026 l), differential: mostly the growing last line (and the spinner), about half
    a scroll that redraws ~18 lines; the cursor parked and hidden at the end of each."""
    out = []
    for _ in range(frames):
        lines = 18 if rng.random() < 0.45 else rng.choice((1, 1, 2))
        first = rng.randrange(1, 4) if lines == 18 else 18
        parts = [b"\x1b[?2026h"]
        parts += [pi_line(first + i) for i in range(lines)]
        if rng.random() < 0.3:
            parts.append(pi_status(20))
        parts.append(b"\x1b[21;1H\x1b[?25l\x1b[?2026l")
        out.append(b"".join(parts))
    return out


class NoClipboard:
    """cuewrap's clipboard policy for a Pi that writes none: never asked here."""

    def clipboard(self, read: bool, framed: bool) -> bool:
        return False


def _guard(cls: type[OutputTracker]) -> dict[str, Any]:
    """guard.sequences = own (the default) for a tracker that has it (not an older REV's)."""
    import inspect

    return {"guard_frames": True} if "guard_frames" in inspect.signature(cls).parameters else {}


def _consume(cls: type[OutputTracker]) -> dict[str, Any]:
    """Pi mode's status reports taken out: an older REV's tracker is told so."""
    import inspect

    return {"consume_status": True} if "consume_status" in inspect.signature(cls).parameters else {}


def _status(cls: type[OutputTracker]) -> dict[str, Any]:
    """Generic mode answers the Program Status query and consumes reports until the host
    answers it (a tracker that has answer_query); an older REV's consumed nothing there."""
    import inspect

    params = inspect.signature(cls).parameters
    if "status" in params:  # the status guard is built by the caller (the mode)
        guard = sys.modules[cls.__module__].StatusGuard
        return {"status": guard(consume=True, answer_query=True)}
    if "answer_query" in params:
        return {"consume_status": True, "answer_query": True}
    return {"consume_status": False}


def pi_figures() -> None:
    chunks = pi_stream(1000)
    sizes = sorted(map(len, chunks))
    print(
        f"pi stream: {len(chunks)} chunks (frames), median {sizes[len(sizes) // 2]} bytes,"
        f" mean {sum(sizes) // len(sizes)} bytes; OutputTracker as cuewrap sets it up for Pi"
    )

    def make(cls: type[OutputTracker]) -> OutputTracker:
        # reports taken out: the default of a tracker whose caller builds its status guard
        return cls(own_focus=True, clipboard=NoClipboard(), **_guard(cls), **_consume(cls))

    per_chunk(chunks, make, 0.015)


class Generic:
    """cuewrap's policies for a generic child while the user looks: nothing taken out."""

    def clipboard(self, read: bool, framed: bool) -> bool:
        return False

    def consume(self, protocol: str) -> bool:
        return False


def flood_frames() -> list[bytes]:
    """The frames scripts/bench's TUI flood writes (scripts/bench.py TUI_CHILD)."""
    rows = [
        b"\x1b[%d;1H\x1b[2K\x1b[38;5;244m\xe2\x94\x80\xe2\x94\x80 \xe2\xa0\x8b Working\x1b[0m"
        b" \x1b[1;32mok\x1b[0m line %d \x1b[38;2;120;130;140mdim\x1b[39m" % (r, r)
        for r in range(1, 41)
    ]
    return [
        b"\x1b[?2026h\x1b[?25l" + b"".join(rows[i : i + n]) + b"\x1b[?2026l"
        for i, n in ((0, 14), (10, 22), (5, 18), (20, 16))
    ]


def flood_figures() -> None:
    frames = flood_frames()

    def make(cls: type[OutputTracker]) -> OutputTracker:
        return cls(
            notices=Generic(),
            own_focus=True,
            clipboard=Generic(),
            **_guard(cls),
            **_status(cls),
        )

    for k in (1, 6):
        chunks = [b"".join(frames[(i + j) % 4] for j in range(k)) for i in range(400)]
        print(
            f"tui flood: {k} frame(s) a chunk, {len(chunks[0])} bytes;"
            " OutputTracker as cuewrap sets it up for a generic child"
        )
        per_chunk(chunks, make, 0.0025)


Make = Callable[[type[OutputTracker]], OutputTracker]


def per_chunk(chunks: list[bytes], make: Make, pause: float) -> None:
    for name, cls in TRACKERS:
        best = float("inf")
        for _ in range(5):
            feed = make(cls).feed
            t0 = time.perf_counter()
            for c in chunks:
                feed(c)
            best = min(best, time.perf_counter() - t0)
        print(f"  hot     {best / len(chunks) * 1e6:7.2f} us/chunk  [{name}]")
    # paced: every tracker (and the empty call) in turn after each sleep, so that a change of
    # the machine's load during the run touches all of them alike; each gets its own copy of
    # the chunk made just before (as a read makes it). The order goes through every
    # permutation: trackers share compiled regexes (re's cache) and C code, so whoever runs
    # right after another finds them warmer, and with a mere rotation one tracker would
    # follow the other more often (the same tracker against itself measured 2-5 us apart)
    clock = time.thread_time_ns
    feeds: list[tuple[str, Callable[[bytes], object]]] = [("call only", lambda c: None)] + [
        (n, make(cls).feed) for n, cls in TRACKERS
    ]
    took: dict[str, list[int]] = {n: [] for n, _ in feeds}
    orders = list(itertools.permutations(feeds))
    for k, c in enumerate(chunks[:300]):
        for n, call in orders[k % len(orders)]:
            time.sleep(pause)
            fresh = bytes(bytearray(c))
            t0 = clock()
            call(fresh)
            took[n].append(clock() - t0)
    for n, _ in feeds:
        ts = took[n]
        q = statistics.quantiles(ts, n=4)
        print(
            f"  paced   {statistics.median(ts) / 1000:7.1f} us/chunk"
            f"  (quartiles {q[0] / 1000:.1f}-{q[2] / 1000:.1f})  [{n}]"
        )


if not (args.pi_only or args.flood_only):
    print(f"chunks of {CHUNK} bytes, best of 3")
    for label, block in (("text", TEXT), ("tui", TUI), ("mixed", MIXED)):
        run(label, block)
if not args.flood_only:
    pi_figures()
if not args.pi_only:
    flood_figures()
if args.pi_only or args.flood_only:
    sys.exit(0)

# input side: typing, focus reports and pastes
keys = b"hello world\r\x1b[O\x1b[I\x1b[A\x1b[200~pasted\x1b[O\x1b[201~" * 2
paste = b"\x1b[200~" + TEXT[:1_000_000] + b"\x1b[201~"
for label, data, n in (("keys", keys, 200_000), ("paste", paste, 20)):
    f = FocusFilter()
    t0 = time.perf_counter()
    for _ in range(n):
        for c in chunked(data):
            f.feed(c)
    dt = time.perf_counter() - t0
    print(f"focus  {label:6s} {len(data) * n / dt / 1e6:8.1f} MB/s")
