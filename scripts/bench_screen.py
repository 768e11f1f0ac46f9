"""The relay's cost of ScreenWatcher.feed() (median microseconds): one writev into the pipe
while the screen worker keeps up; a queue append, or a drop and a resync marker, when it does
not (a worker that never reads, a flood beyond pyte's speed). Fed with real Pi 1.4.0's recorded
frames (tests/screenrig.py).

    scripts/bench_screen
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from screenrig import Harness, pi_frames


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


def main() -> None:
    made: list[Harness] = []

    def harness(**kw: object) -> Harness:
        made.append(Harness(**kw))
        return made[-1]

    try:
        run(harness)
    finally:
        for h in made:
            h.w.stop()
            h.loop.close()


def reported(h: Harness) -> Callable[[], bool]:
    return lambda: h.w.stats.reports >= 1


def run(harness: Callable[..., Harness]) -> None:
    spin = [f for f in pi_frames() if b"Working" in f]
    pi_chunk = (b"".join(spin) * 200)[:65536]  # Pi's own frames, 64 KiB
    real, stuck, flooded = harness(), harness(argv=["sleep", "30"]), harness()
    assert real.w.start() and stuck.w.start() and flooded.w.start()
    for h in (real, flooded):  # warmed up: each worker has read a frame and reported it
        h.w.feed(spin[0])
        h.run_until(reported(h), "the worker's first report", 10)
    small = feed_cost_us(real, spin[0], 30, gap=0.08)  # one Pi frame every 80 ms
    paced = feed_cost_us(real, pi_chunk, 15, gap=0.15)  # 64 KiB every 150 ms
    full = feed_cost_us(stuck, os.urandom(65536), 200)  # nobody reads: queue, then drop
    flood = feed_cost_us(flooded, pi_chunk, 200)  # far beyond pyte's speed
    sys.stdout.write(
        f"\nfeed() median: one Pi frame ({len(spin[0])} B) {small:.1f} us; 64 KiB, worker "
        f"keeping up {paced:.1f} us, worker stuck {full:.1f} us, worker flooded {flood:.1f} us "
        f"({flooded.w.stats.drops} drops, {flooded.w.stats.dropped_bytes >> 10} KiB dropped)\n"
    )
    if not (real.w.stats.drops == 0 and stuck.w.stats.drops > 0 and flooded.w.stats.drops > 0):
        sys.exit("bench_screen: the drops are not as expected (none keeping up, some otherwise)")


if __name__ == "__main__":
    main()
