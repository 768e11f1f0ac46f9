"""The screen source's gate, without a session: keep early output, decide after DECIDE seconds,
start a watcher only when no stronger source is live, stop it when one becomes live. A fake
clock drives the loop's timers; a recording watcher stands in for the pyte worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuewrap.decisionlog import DecisionLog
from cuewrap.facts import Fact
from cuewrap.loop import Loop
from cuewrap.screen.gate import DECIDE, KEEP, ScreenGate

pytestmark = pytest.mark.unit


class FakeWatcher:
    def __init__(self, cols: int, rows: int, *, starts: bool = True) -> None:
        self.size = (cols, rows)
        self.starts = starts
        self.fed: list[bytes] = []
        self.started = self.stopped = False

    def start(self) -> bool:
        self.started = True
        return self.starts

    def feed(self, data: bytes) -> None:
        self.fed.append(data)

    def resize(self, cols: int, rows: int) -> None:
        self.size = (cols, rows)

    def stop(self) -> None:
        self.stopped = True


class Rig:
    def __init__(self, tmp_path: Path, *, starts: bool = True) -> None:
        self.now = 100.0
        self.loop = Loop()
        self.loop.clock = lambda: self.now
        self.live = False
        self.facts: list[Fact] = []
        self.watchers: list[FakeWatcher] = []
        self.log_path = tmp_path / "log.jsonl"
        self.log = DecisionLog(str(self.log_path))

        def make(cols: int, rows: int) -> FakeWatcher:
            w = FakeWatcher(cols, rows, starts=starts)
            self.watchers.append(w)
            return w

        self.gate = ScreenGate(
            self.loop,
            24,
            80,
            stronger_live=lambda: self.live,
            on_fact=self.facts.append,
            log=self.log,
            make_watcher=make,
        )

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.loop.run_due_timers()

    def screen_records(self) -> list[dict[str, object]]:
        lines = self.log_path.read_text().splitlines()
        return [r for r in map(json.loads, lines) if r["kind"] == "screen"]


def test_nothing_starts_before_the_decision(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.gate.feed(b"early")
    rig.advance(DECIDE - 0.01)
    assert rig.watchers == [] and not rig.gate.running


def test_starts_after_decide_with_the_kept_output_and_current_size(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.gate.feed(b"one")
    rig.gate.resize(rows=30, cols=100)
    rig.gate.feed(b"two")
    rig.advance(DECIDE)
    (w,) = rig.watchers
    assert w.started and rig.gate.running
    assert w.size == (100, 30)
    assert w.fed == [b"one", b"two"]
    rig.gate.feed(b"three")  # from now on straight through
    rig.gate.resize(rows=40, cols=120)
    assert w.fed[-1] == b"three" and w.size == (120, 40)
    assert rig.screen_records()[-1]["state"] == "started"


def test_early_output_beyond_keep_is_not_kept(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    big = b"x" * (KEEP - 10)
    rig.gate.feed(big)
    rig.gate.feed(b"y" * 20)  # would pass KEEP: dropped
    rig.gate.feed(b"z" * 5)
    rig.advance(DECIDE)
    assert rig.watchers[0].fed == [big, b"z" * 5]


def test_not_started_when_a_stronger_source_is_live_at_the_decision(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.gate.feed(b"early")
    rig.live = True
    rig.advance(DECIDE)
    assert rig.watchers == []
    rig.gate.feed(b"later")  # no watcher, nothing kept any more
    rig.live = False
    rig.advance(10 * DECIDE)
    assert rig.watchers == []
    assert [r["state"] for r in rig.screen_records()] == ["not started"]


def test_decided_at_once_when_a_stronger_source_is_live_before_the_decision(
    tmp_path: Path,
) -> None:
    """Pi's bridge says hello within DECIDE: the gate decides then, keeps nothing more and
    leaves no timer (an idle session is not woken DECIDE seconds after its start)."""
    rig = Rig(tmp_path)
    told: list[str] = []
    rig.gate.on_done = lambda: told.append("done")
    rig.gate.feed(b"early")
    rig.gate.check()
    assert rig.screen_records() == [] and told == []  # nothing stronger yet: still waiting
    assert rig.loop.timeout() is not None
    rig.advance(DECIDE / 4)
    rig.live = True
    rig.gate.check()
    assert [r["state"] for r in rig.screen_records()] == ["not started"]
    assert told == ["done"]
    assert rig.loop.timeout() is None  # the decision's timer is gone
    rig.live = False
    rig.advance(10 * DECIDE)
    assert rig.watchers == [] and told == ["done"]
    assert [r["state"] for r in rig.screen_records()] == ["not started"]


def test_stopped_for_good_when_a_stronger_source_becomes_live(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.advance(DECIDE)
    (w,) = rig.watchers
    rig.gate.check()
    assert not w.stopped  # nothing stronger yet
    rig.live = True
    rig.gate.check()
    assert w.stopped and not rig.gate.running
    rig.gate.feed(b"after")
    assert b"after" not in w.fed
    rig.live = False
    rig.gate.check()
    rig.advance(10 * DECIDE)
    assert len(rig.watchers) == 1  # never restarted
    assert [r["state"] for r in rig.screen_records()] == ["started", "stopped"]


def test_a_watcher_that_cannot_start_is_dropped(tmp_path: Path) -> None:
    rig = Rig(tmp_path, starts=False)
    rig.advance(DECIDE)
    (w,) = rig.watchers
    assert w.started and not rig.gate.running
    rig.gate.feed(b"data")
    assert w.fed == []


def test_close_before_the_decision_starts_nothing(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.gate.close()
    rig.advance(10 * DECIDE)
    assert rig.watchers == []


def test_close_stops_a_running_watcher(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.advance(DECIDE)
    rig.gate.close()
    assert rig.watchers[0].stopped and not rig.gate.running


def test_the_gate_says_once_when_it_needs_no_more_output(tmp_path: Path) -> None:
    """``on_done``: the relay then stops handing it every chunk. Told when it decides not to
    start, when its watcher does not start, when it stops its watcher; not while one runs."""
    for case in ("stronger live", "watcher fails", "stopped later", "closed"):
        rig = Rig(tmp_path, starts=case != "watcher fails")
        told: list[str] = []
        rig.gate.on_done = lambda told=told: told.append("done")
        rig.live = case == "stronger live"
        rig.advance(DECIDE)
        if case in ("stopped later", "closed"):
            assert told == [] and rig.gate.running, case  # its watcher needs every chunk
            rig.gate.check()
            assert told == [], case
            if case == "stopped later":
                rig.live = True
                rig.gate.check()
            else:
                rig.gate.close()
        assert told == ["done"] and not rig.gate.running, case
        rig.gate.check()
        rig.gate.close()
        assert told == ["done"], case  # once
