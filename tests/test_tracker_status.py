"""cuewrap.term.tracker: OSC 7501 program status reports — consumed, held at a chunk's end,
flushed, and never taken inside another sequence."""

from __future__ import annotations

import pytest
from trackerref import (
    BLOCKED,
    DONE,
    QUERY,
    WORKING,
)

from cuewrap.facts import ProgramStatus
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import (
    CAP,
    OutputTracker,
)

pytestmark = pytest.mark.unit


# --- OSC 7501 ---------------------------------------------------------------------------------


def test_status_report_consumed() -> None:
    t = OutputTracker()
    s = t.feed(b"a" + WORKING + b"b" + DONE + b"c")
    assert s.out == b"abc"
    assert s.events == [
        ProgramStatus("working", "pi", None, True),
        ProgramStatus("done", "pi", None, False),
    ]
    assert t.feed(BLOCKED).events == [ProgramStatus("blocked", "pi", "permission", False)]


def test_status_never_keeps_msg() -> None:
    t = OutputTracker()
    (ev,) = t.feed(WORKING).events
    assert "bXlzZXNzaW9u" not in repr(ev)


def test_status_passes_through_when_not_consumed() -> None:
    t = OutputTracker(StatusGuard(consume=False))
    s = t.feed(WORKING[:10])
    assert s.out == WORKING[:10] and not t.held
    s = t.feed(WORKING[10:] + DONE)
    assert s.out == WORKING[10:] + DONE
    assert [e.state for e in s.events if isinstance(e, ProgramStatus)] == ["working", "done"]


def test_consume_status_is_settable() -> None:
    t = OutputTracker()
    assert t.feed(DONE).out == b""
    t.status.consume = False
    assert t.feed(DONE).out == DONE


def test_query_and_malformed_pass_through() -> None:
    t = OutputTracker()
    for data in (
        QUERY,
        b"\x1b]7501;app=pi\x1b\\",
        b"\x1b]7501;state=\x1b\\",
        b"\x1b]7501;state=a b\x07",
        b"\x1b]7501\x07",
    ):
        s = t.feed(data)
        assert s.out == data and s.events == [], data


def test_status_split_is_held_then_consumed() -> None:
    t = OutputTracker()
    s = t.feed(b"text\x1b]75")
    assert s.out == b"text" and s.safe and t.held
    s = t.feed(b"01;state=idle:app=pi")
    assert s.out == b"" and t.held
    s = t.feed(b"\x1b")  # the ESC of the ST
    assert s.out == b"" and t.held
    s = t.feed(b"\\more")
    assert s.out == b"more" and s.events == [ProgramStatus("idle", "pi")]
    assert not t.held


def test_lone_esc_held_and_flushed() -> None:
    t = OutputTracker()
    s = t.feed(b"abc\x1b")
    assert s.out == b"abc" and s.safe and t.held
    assert t.flush() == b"\x1b"
    assert not t.held and not t.safe
    assert t.flush() == b""
    s = t.feed(b"[1mx")
    assert s.out == b"[1mx" and s.safe


def test_held_prefix_that_is_not_a_report_is_released() -> None:
    t = OutputTracker()
    assert t.feed(b"\x1b]7").out == b""
    s = t.feed(b"7;x\x07")
    assert s.out == b"\x1b]77;x\x07" and not t.held


def test_flushed_report_is_not_consumed_but_reported() -> None:
    t = OutputTracker()
    t.feed(b"\x1b]7501;state=work")
    assert t.flush() == b"\x1b]7501;state=work"
    s = t.feed(b"ing\x07")
    assert s.out == b"ing\x07"
    assert s.events == [ProgramStatus("working")]


def test_held_report_growing_past_cap_is_released() -> None:
    t = OutputTracker()
    head = b"\x1b]7501;state=working:msg="
    s = t.feed(head + b"A" * (CAP - len(head)))
    assert s.out == b"" and t.held
    s = t.feed(b"A")
    assert s.out == head + b"A" * (CAP - len(head) + 1) and not t.held
    s = t.feed(b"A\x1b\\")
    assert s.out == b"A\x1b\\" and s.events == []  # given up


def test_report_not_consumed_inside_other_sequence_or_char() -> None:
    t = OutputTracker()
    data = b"\x1b[1" + DONE + b"m"  # the report's ESC aborts a CSI
    s = t.feed(data)
    assert s.out == data
    assert s.events == [ProgramStatus("done", "pi")]
    t = OutputTracker()
    data = b"\xe2" + DONE + b"\x82\xac"  # in the middle of a UTF-8 character
    assert t.feed(data).out == data
    t = OutputTracker()
    assert t.feed(b"\xe2").out == b"\xe2"
    assert t.feed(b"\x1b]75").out == b"\x1b]75"  # not held: could never be removed
    assert not t.held


def test_no_hold_when_consume_false() -> None:
    t = OutputTracker(StatusGuard(consume=False))
    s = t.feed(b"abc\x1b")
    assert s.out == b"abc\x1b" and not t.held and not s.safe
