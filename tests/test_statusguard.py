"""The status guard alone (term/statusguard.py): what a complete OSC 7501 becomes, by state.
The tracker's own tests (test_tracker_status.py, test_status_passon.py, test_status_query.py,
test_provenance_lost.py) hold the same rules through the byte stream."""

from __future__ import annotations

import pytest
from shared import never, no, yes

from cuewrap.factbase import ProgramStatus
from cuewrap.term.statusguard import (
    CUT,
    CUT_NEUTRAL,
    PASS,
    QUERY_CUT,
    QUERY_PASSED,
    StatusGuard,
)

pytestmark = pytest.mark.unit

BLOCKED = b"state=blocked:app=pi:kind=permission"
WORKING = b"state=working:app=pi"
CLEAR = b"state=clear"


def raw(rest: bytes) -> bytes:
    return b"\x1b]7501;" + rest + b"\x1b\\"


@pytest.mark.parametrize(
    ("fresh", "removable", "verdict"),
    [(True, yes, CUT), (True, no, PASS), (False, never, PASS)],
)
def test_consumed_reports_are_cut_only_where_fresh_and_removable(
    fresh: bool, removable: object, verdict: int
) -> None:
    g = StatusGuard(consume=True)
    status, got = g.report(WORKING, raw(WORKING), fresh, removable)  # type: ignore[arg-type]
    assert isinstance(status, ProgramStatus) and status.state == "working"
    assert got == verdict
    assert not g.shown  # the host saw nothing
    assert g.pass_on() == (raw(WORKING) if verdict == CUT else b"")


def test_passed_reports_say_what_the_host_shows() -> None:
    g = StatusGuard(consume=False)
    assert g.report(WORKING, raw(WORKING), True, never)[1] == PASS and g.shown
    assert g.report(CLEAR, raw(CLEAR), True, never)[1] == PASS and not g.shown


def test_a_blocked_report_is_held_until_the_screen_confirms_it() -> None:
    g = StatusGuard(consume=False, hold_blocked=True)
    assert g.report(BLOCKED, raw(BLOCKED), True, yes)[1] == CUT
    assert g.report(BLOCKED, raw(BLOCKED), True, no)[1] == CUT_NEUTRAL
    assert g.held == raw(BLOCKED) and not g.shown
    assert g.take_held() == raw(BLOCKED) and g.shown
    assert g.take_held() == b""  # once
    g.report(BLOCKED, raw(BLOCKED), True, yes)
    assert g.report(WORKING, raw(WORKING), True, never)[1] == PASS  # its wait is over
    assert g.held == b"" and g.take_held() == b""


def test_a_held_report_goes_nowhere_where_reports_are_taken_out() -> None:
    g = StatusGuard(consume=False, hold_blocked=True)
    g.report(BLOCKED, raw(BLOCKED), True, yes)
    g.consume = True
    assert g.take_held() == b"" and not g.shown


def test_generic_mode_counts_reports_only_after_the_query_or_from_the_presets_app() -> None:
    g = StatusGuard(consume=True, answer_query=True)
    assert g.report(WORKING, raw(WORKING), True, yes) == (None, PASS)  # text it prints
    assert g.query(True) is QUERY_CUT and g.query(False) is QUERY_PASSED
    status, verdict = g.report(WORKING, raw(WORKING), True, yes)
    assert status is not None and verdict == CUT
    own = StatusGuard(consume=True, answer_query=True, own_app="codex")
    codex = b"state=working:app=codex"
    assert own.report(codex, raw(codex), True, yes)[0] is not None
    assert own.report(WORKING, raw(WORKING), True, yes) == (None, PASS)  # another app=
    assert own.report(CLEAR, raw(CLEAR), True, yes)[0] is not None  # a bare clear


def test_what_may_yet_become_a_report_or_query_is_worth_holding() -> None:
    g = StatusGuard(consume=True)
    assert g.active and g.could_remove(b"\x1b]75", whole=False)
    assert not g.could_remove(b"\x1b]75", whole=True)  # the head of an OSC known unfinished
    assert g.could_remove(b"\x1b]7501;state", whole=True)
    assert not g.could_remove(b"\x1b]0;", whole=False)
    q = StatusGuard(consume=False, answer_query=True)
    assert q.active and q.could_remove(b"\x1b]7501;?", whole=True)
    assert not q.could_remove(b"\x1b]7501;state", whole=True)
    assert not StatusGuard(consume=False).active


def test_an_unreadable_report_is_no_fact_and_stays() -> None:
    g = StatusGuard(consume=True)
    assert g.report(b"nonsense", raw(b"nonsense"), True, never) == (None, PASS)
