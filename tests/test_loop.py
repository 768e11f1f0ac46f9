"""The event loop (cuewrap/loop.py) on real file descriptors: which callback runs for which
event, callbacks removed by earlier ones in the same wake-up, hang-ups, timers' order and
their never running early."""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Iterator

import pytest

from cuewrap.loop import Loop

pytestmark = pytest.mark.unit


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_reader_runs_when_readable_and_not_before(pipe: tuple[int, int]) -> None:
    r, w = pipe
    loop, seen = Loop(), []
    loop.add_reader(r, lambda: seen.append(os.read(r, 10)))
    loop.run_once(max_timeout=0)
    assert seen == []
    os.write(w, b"x")
    loop.run_once(max_timeout=1)
    assert seen == [b"x"]


def test_writer_runs_when_writable_and_stops_when_removed(pipe: tuple[int, int]) -> None:
    _, w = pipe
    loop, calls = Loop(), []
    loop.add_writer(w, lambda: calls.append("w"))
    assert loop.has_writer(w)
    loop.run_once(max_timeout=1)
    assert calls == ["w"]
    loop.remove_writer(w)
    assert not loop.has_writer(w)
    loop.run_once(max_timeout=0)
    assert calls == ["w"]


def test_reader_and_writer_on_one_fd_each_run_for_their_event() -> None:
    a, b = __import__("socket").socketpair()
    try:
        loop, calls = Loop(), []
        loop.add_writer(a.fileno(), lambda: calls.append("w"))
        loop.add_reader(a.fileno(), lambda: calls.append(("r", a.recv(10))))
        loop.run_once(max_timeout=1)
        assert calls == ["w"]  # writable, nothing to read
        b.send(b"hi")
        loop.run_once(max_timeout=1)
        assert calls == ["w", ("r", b"hi"), "w"]  # in that order: the reader first
        loop.remove_writer(a.fileno())
        loop.remove_reader(a.fileno())
        loop.run_once(max_timeout=0)
        assert len(calls) == 3
    finally:
        a.close()
        b.close()


def test_a_callback_removed_by_an_earlier_one_in_the_same_wake_up_does_not_run() -> None:
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    try:
        loop, calls = Loop(), []

        def first(fd: int, other: int) -> None:
            calls.append(fd)
            os.read(fd, 10)
            loop.remove_reader(other)

        loop.add_reader(r1, lambda: first(r1, r2))
        loop.add_reader(r2, lambda: first(r2, r1))
        os.write(w1, b"x")
        os.write(w2, b"x")
        loop.run_once(max_timeout=1)
        assert len(calls) == 1  # whichever ran first removed the other
    finally:
        for fd in (r1, w1, r2, w2):
            os.close(fd)


def test_a_writer_removed_by_its_fds_reader_does_not_run() -> None:
    a, b = __import__("socket").socketpair()
    try:
        loop, calls = Loop(), []

        def reader() -> None:
            calls.append("r")
            a.recv(10)
            loop.remove_writer(a.fileno())

        loop.add_reader(a.fileno(), reader)
        loop.add_writer(a.fileno(), lambda: calls.append("w"))
        b.send(b"x")
        loop.run_once(max_timeout=1)
        assert calls == ["r"]
    finally:
        a.close()
        b.close()


def test_a_hang_up_wakes_the_reader(pipe: tuple[int, int]) -> None:
    r, w = pipe
    loop, seen = Loop(), []
    loop.add_reader(r, lambda: seen.append(os.read(r, 10)))
    os.close(w)
    loop.run_once(max_timeout=1)
    assert seen == [b""]  # the end, read by the reader


def test_guarded_callback_reports_and_the_loop_goes_on(pipe: tuple[int, int]) -> None:
    r, w = pipe
    errors: list[tuple[str, BaseException]] = []
    loop = Loop(on_error=lambda where, exc: errors.append((where, exc)))

    def boom() -> None:
        os.read(r, 10)
        raise RuntimeError("boom")

    loop.add_reader(r, boom)
    os.write(w, b"x")
    loop.run_once(max_timeout=1)
    assert [(where, str(exc)) for where, exc in errors] == [(f"reader:{r}", "boom")]


def test_unguarded_callback_raises(pipe: tuple[int, int]) -> None:
    r, w = pipe
    loop = Loop()

    def boom() -> None:
        raise RuntimeError("boom")

    loop.add_reader(r, boom, guarded=False)
    os.write(w, b"x")
    with pytest.raises(RuntimeError):
        loop.run_once(max_timeout=1)


def test_timers_run_in_order_of_time_then_of_setting() -> None:
    loop, order = Loop(), []
    now = loop.clock()
    loop.call_at(now + 0.02, lambda: order.append("late"))
    loop.call_at(now, lambda: order.append("a"))
    loop.call_at(now, lambda: order.append("b"))
    cancelled = loop.call_at(now, lambda: order.append("cancelled"))
    cancelled.cancel()
    loop.run_once()
    assert order == ["a", "b"]
    while loop.timeout() is not None:
        loop.run_once()
    assert order == ["a", "b", "late"]


def test_a_timer_due_in_a_fraction_of_a_millisecond_costs_one_wait_not_a_spin() -> None:
    """The wait is rounded up to whole milliseconds: rounded down, a timer due in 0.4 ms
    would make the loop poll without waiting until it is due (a busy loop)."""
    loop = Loop()
    for delay in (0.0004, 0.0011, 0.0049, 0.013):
        ran: list[float] = []
        due = loop.clock() + delay
        loop.call_at(due, lambda due=due, ran=ran: ran.append(loop.clock() - due))
        waits = 0
        while not ran:
            loop.run_once()
            waits += 1
        assert ran[0] >= 0 and waits <= 2, (delay, waits)


def test_timeout_is_none_without_timers_and_ignores_cancelled_ones() -> None:
    loop = Loop()
    assert loop.timeout() is None
    t = loop.call_later(5, lambda: None)
    timeout = loop.timeout()
    assert timeout is not None and 4 < timeout <= 5
    t.cancel()
    assert loop.timeout() is None


def test_idle_wait_blocks_until_the_fd_is_ready(pipe: tuple[int, int]) -> None:
    """No timer: the wait has no timeout (an idle cuewrap uses no CPU)."""
    import threading

    r, w = pipe
    loop, seen = Loop(), []
    loop.add_reader(r, lambda: seen.append(os.read(r, 10)))
    threading.Timer(0.05, lambda: os.write(w, b"late")).start()
    t0 = time.monotonic()
    loop.run_once()
    assert seen == [b"late"] and time.monotonic() - t0 >= 0.04


def test_close_forgets_every_fd(pipe: tuple[int, int]) -> None:
    r, w = pipe
    loop, seen = Loop(), []
    loop.add_reader(r, lambda: seen.append(1))
    assert loop.watching() == [r]
    loop.close()
    assert loop.watching() == []
    os.write(w, b"x")
    loop.run_once(max_timeout=0)
    assert seen == [] and not loop.has_writer(r)


def test_removing_an_unknown_fd_is_a_no_op_and_a_negative_fd_is_refused() -> None:
    loop = Loop()
    loop.remove_reader(12345)
    loop.remove_writer(12345)
    with pytest.raises(ValueError):
        loop.add_reader(-1, lambda: None)


def test_the_deadline_runs_its_callback_once_when_due_and_not_before() -> None:
    """The relay's gathering deadline: a plain time, no Timer object; ``inf`` is none."""
    loop, ran = Loop(), []
    loop.on_deadline = lambda: ran.append(loop.clock())
    assert loop.timeout() is None
    due = loop.deadline = loop.clock() + 0.02
    timeout = loop.timeout()
    assert timeout is not None and 0 < timeout <= 0.02
    waits = 0
    while not ran:
        loop.run_once()
        waits += 1
    assert ran[0] >= due and waits <= 2  # waited for, not polled for
    assert loop.deadline == math.inf and loop.timeout() is None
    loop.run_once(max_timeout=0)
    assert len(ran) == 1  # once


def test_the_deadline_set_again_by_its_callback_runs_again_and_can_be_cleared() -> None:
    loop, ran = Loop(), []

    def gathered() -> None:
        ran.append(loop.clock())
        if len(ran) < 3:
            loop.deadline = loop.clock() + 0.005

    loop.on_deadline = gathered
    loop.deadline = loop.clock()
    while len(ran) < 3:
        loop.run_once()
    assert all(b - a >= 0.005 for a, b in itertools.pairwise(ran))
    loop.deadline = loop.clock() + 0.001
    loop.deadline = math.inf  # cleared before it is due: it does not run
    loop.run_once(max_timeout=0.01)
    assert len(ran) == 3


def test_the_deadline_runs_before_the_timers_due_in_the_same_turn_and_with_them() -> None:
    loop, order = Loop(), []
    now = loop.clock()
    loop.call_at(now + 0.03, lambda: order.append("late timer"))
    loop.call_at(now, lambda: order.append("timer"))
    loop.on_deadline = lambda: order.append("deadline")
    loop.deadline = now
    loop.run_once()
    assert order == ["deadline", "timer"]
    # the timers' own wait counts the deadline too
    loop.deadline = loop.clock() + 0.01
    timeout = loop.timeout()
    assert timeout is not None and timeout <= 0.01
    while len(order) < 4:
        loop.run_once()
    assert order == ["deadline", "timer", "deadline", "late timer"]
    # run_due_timers (what tests with a hand-driven clock call) runs it as well
    loop.deadline = loop.clock()
    loop.run_due_timers()
    assert order[-1] == "deadline" and loop.deadline == math.inf


def test_a_ready_fd_is_served_while_the_deadline_is_pending(pipe: tuple[int, int]) -> None:
    r, w = pipe
    loop, seen = Loop(), []
    loop.add_reader(r, lambda: seen.append(os.read(r, 10)))
    loop.on_deadline = lambda: seen.append(b"deadline")
    loop.deadline = loop.clock() + 5
    os.write(w, b"x")
    t0 = time.monotonic()
    loop.run_once()
    assert seen == [b"x"] and time.monotonic() - t0 < 1
    loop.deadline = math.inf
