"""The notice guard alone (term/noticeguard.py): what a complete OSC 9 / 777 / 99 becomes and
whether it is taken out. The tracker's tests (test_notices.py, test_child_queries.py,
test_fuzz.py) hold the same rules through the byte stream."""

from __future__ import annotations

import pytest
from shared import never, no, yes

from cuewrap.term.childqueries import ChildQuery
from cuewrap.term.noticeguard import NoticeGuard
from cuewrap.term.notices import ChildNotification, NoticeProtocol

pytestmark = pytest.mark.unit


class Only:
    """A policy that takes out one protocol."""

    def __init__(self, protocol: NoticeProtocol) -> None:
        self.protocol = protocol

    def consume(self, protocol: NoticeProtocol) -> bool:
        return protocol == self.protocol


def test_the_policy_decides_where_the_sequence_can_be_taken_out() -> None:
    g = NoticeGuard(Only("osc777"))
    notice, cut = g.read(b"777", b"notify;Pi;Ready", yes)
    assert isinstance(notice, ChildNotification) and notice.protocol == "osc777" and cut
    assert g.read(b"777", b"notify;Pi;Ready", no)[1] is False  # not at a safe point
    notice, cut = g.read(b"9", b"done", yes)
    assert isinstance(notice, ChildNotification) and not cut  # another protocol: passes


def test_without_a_policy_nothing_is_taken_out_and_removable_is_not_asked() -> None:
    g = NoticeGuard(None)
    notice, cut = g.read(b"777", b"notify;Pi;Ready", never)
    assert isinstance(notice, ChildNotification) and not cut
    assert g.read(b"0", b"a title", never) == (None, False)  # not a notification
    assert not g.active and not g.could_remove(b"\x1b]777;", whole=True)


def test_once_cuewrap_answered_kittys_query_the_childs_osc99_is_always_taken_out() -> None:
    g = NoticeGuard(None, answer_child=True)
    assert not g.active
    assert g.read(b"99", b"i=q:p=?;", yes) == (ChildQuery("osc99", "q", True), True)
    assert g.active and g.could_remove(b"\x1b]99;", whole=True)
    assert not g.could_remove(b"\x1b]777;", whole=True)  # the others: the policy's (none)
    notice, cut = g.read(b"99", b"i=1:d=1;Done", yes)
    assert isinstance(notice, ChildNotification) and cut


def test_kittys_query_is_data_for_a_child_that_does_not_ask_for_answers() -> None:
    g = NoticeGuard(None)
    assert not isinstance(g.read(b"99", b"i=q:p=?;", never)[0], ChildQuery)


def test_what_may_yet_become_a_notification_taken_out_is_worth_holding() -> None:
    g = NoticeGuard(Only("osc9"))
    assert g.active
    assert g.could_remove(b"\x1b]", whole=False) and g.could_remove(b"\x1b]9;", whole=True)
    assert not g.could_remove(b"\x1b]", whole=True)
    assert not g.could_remove(b"\x1b]777;", whole=True)
