"""Micro-benchmark of the pure cue engine: microseconds per step() with empty tracking tables
and with both tables at capacity (8192 Ask call ids, 8192 background records).

    scripts/bench_engine [STEPS_PER_CASE]      (default 20000)
"""

from __future__ import annotations

import sys
import time

from cuewrap.engine import CAPACITY, EngineConfig, EngineState, Event, initial_state, step
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AgentStart,
    BridgeHello,
    Keystroke,
    Presence,
    SessionStart,
    SubagentComplete,
    SubagentStarted,
    ToolEnd,
    ToolStart,
    UserInput,
)

PATH, OWNER = "/s/1.jsonl", "owner"


def base(records: int) -> EngineState:
    s = initial_state(EngineConfig(keep_awake=True))
    t = 0.0
    hello: list[Event] = [
        BridgeHello(1, "1.4.0", "tui", True, "sid", PATH, 1),
        SessionStart("startup", "sid", PATH),
    ]
    for ev in hello:
        s, _ = step(s, ev, t)
    for i in range(records):
        s, _ = step(s, ToolStart(f"old{i}", "ask_user_question"), t)
        s, _ = step(s, ToolEnd(f"old{i}", "ask_user_question", False), t)
        s, _ = step(s, SubagentStarted(f"old{i}", PATH, OWNER, 3, PATH, OWNER), t)
        s, _ = step(s, SubagentComplete(f"old{i}", PATH, OWNER, True, False, PATH, OWNER), t)
    return s


def cycle(i: int) -> list[Event]:
    """A realistic mix: a run with an Ask call, a background task, focus changes, keys."""
    return [
        Presence("focused"),
        Keystroke(),
        UserInput("interactive"),
        AgentStart(),
        ToolStart(f"c{i}", "ask_user_question"),
        ToolEnd(f"c{i}", "ask_user_question", False),
        SubagentStarted(f"r{i}", PATH, OWNER, 3, PATH, OWNER),
        Presence("away"),
        AgentEnd("stop"),
        AgentBeforeSettle("completed"),
        AgentSettled(False),
        SubagentComplete(f"r{i}", PATH, OWNER, True, False, PATH, OWNER),
    ]


def bench(records: int, steps: int) -> None:
    s = base(records)
    n0 = (len(s.ask_history), len(s.bg))
    t = 1.0
    times: list[float] = []
    i = 0
    clock = time.perf_counter
    while len(times) < steps:
        for ev in cycle(i):
            a = clock()
            s, _ = step(s, ev, t)
            times.append(clock() - a)
            t += 0.001
        i += 1
    times.sort()
    us = [x * 1e6 for x in times]
    print(
        f"records={records:5d} (ask ids {n0[0]}, background {n0[1]}): "
        f"mean {sum(us) / len(us):5.1f} us/step, median {us[len(us) // 2]:5.1f}, "
        f"p99 {us[int(len(us) * 0.99)]:6.1f}, max {us[-1]:7.1f} ({len(us)} steps)"
    )


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    for n in (0, CAPACITY - 1, CAPACITY):
        bench(n, steps)


if __name__ == "__main__":
    main()
