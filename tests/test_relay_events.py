"""The relay's events: one translation to facts, one log record, and the injector that writes
cuewrap's own bytes at safe points. No terminal needed."""

from __future__ import annotations

import pytest

from cuewrap import facts as F
from cuewrap.loop import Loop
from cuewrap.relay.events import ChildExited, KeysRead
from cuewrap.relay.inject import Injector
from cuewrap.term.focus import FocusReport, HostStatusReply
from cuewrap.term.notices import ChildNotification
from cuewrap.term.tracker import Bell, ModeChange, TitleChange
from cuewrap.wiring.eventtable import record, to_fact

pytestmark = pytest.mark.unit


def test_facts_from_relay_events() -> None:
    status = F.ProgramStatus("working", app="pi")
    assert to_fact(FocusReport("in")) == F.Presence("focused")
    assert to_fact(FocusReport("out")) == F.Presence("away")
    assert to_fact(KeysRead()) == F.Keystroke()
    assert to_fact(status) is status
    assert to_fact(ChildExited(3, None)) == F.ChildExit(3, None)
    assert to_fact(ChildExited(None, 15)) == F.ChildExit(None, 15)
    assert to_fact(Bell()) == F.ChildBell()
    note = ChildNotification("osc9", "", "done", True)
    assert to_fact(note) == F.ChildNotice("osc9", "", "done", True)
    for only_logged in (TitleChange("t"), ModeChange(1004, True), HostStatusReply()):
        assert to_fact(only_logged) is None


def test_records_never_hold_the_childs_title() -> None:
    title = "π - secret-project: fix the login bug"
    kind, fields = record(TitleChange(title)) or ("", {})
    assert kind == "child_title" and fields == {"length": len(title)}
    assert title not in repr(fields)
    assert record(ModeChange(2004, False)) == ("child_mode", {"mode": 2004, "on": False})
    assert (record(HostStatusReply()) or ("",))[0] == "host_status_reply"
    for fact_event in (FocusReport("in"), KeysRead(), ChildExited(0, None), Bell()):
        assert record(fact_event) is None


class Clock:
    def __init__(self) -> None:
        self.now = 0.0


def _injector() -> tuple[Injector, list[bytes], Loop, Clock]:
    clock = Clock()
    loop = Loop()
    loop.clock = lambda: clock.now
    written: list[bytes] = []
    return Injector(loop, written.append), written, loop, clock


def test_injection_at_a_safe_point_is_written_at_once() -> None:
    inj, written, _, _ = _injector()
    inj.inject(b"mark")
    inj.inject(b"")
    assert written == [b"mark"] and not inj.pending


def test_injection_waits_for_the_next_safe_point() -> None:
    inj, written, _, _ = _injector()
    inj.set_safe(False)
    inj.inject(b"a")
    inj.inject(b"b")
    inj.flush_if_safe()
    assert written == [] and inj.pending
    inj.set_safe(True)
    inj.flush_if_safe()
    assert written == [b"ab"]


def test_injection_never_written_unsafe_however_long_and_the_wait_is_told() -> None:
    clock = Clock()
    loop = Loop()
    loop.clock = lambda: clock.now
    written: list[bytes] = []
    waits: list[float] = []
    inj = Injector(loop, written.append, waits.append)
    inj.set_safe(False)
    inj.inject(b"late")
    for _ in range(100):  # minutes of quiet output in the middle of a sequence
        clock.now += 5.0
        loop.run_due_timers()
        inj.flush_if_safe()
    assert written == [] and waits == [] and loop.timeout() is None
    inj.set_safe(True)
    inj.flush_if_safe()
    assert written == [b"late"] and waits == [500.0]


def test_closed_injector_leaves_no_timer() -> None:
    inj, written, loop, clock = _injector()
    inj.set_safe(False)
    inj.inject(b"x")
    inj.close()
    clock.now += 10
    loop.run_due_timers()
    assert written == [] and loop.timeout() is None
