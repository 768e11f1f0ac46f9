"""A child's own notifications in the output (OSC 9 / 777 / 99): parsed, consumed by policy."""

from __future__ import annotations

import base64

import pytest
from trackerref import feed_all

from cuewrap.facts import ChildProgress
from cuewrap.term.notices import ChildNotification, NoticeParser, NoticeProtocol
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import Bell, OutputEvent, OutputTracker

pytestmark = pytest.mark.unit

ST = b"\x1b\\"


class Policy:
    """Consumes the protocols in ``take``; counts the questions."""

    def __init__(self, *take: NoticeProtocol) -> None:
        self.take = set(take)
        self.asked: list[str] = []

    def consume(self, protocol: NoticeProtocol) -> bool:
        self.asked.append(protocol)
        return protocol in self.take


def run(t: OutputTracker, *chunks: bytes) -> tuple[bytes, list[OutputEvent]]:
    return feed_all(t, list(chunks))


def test_osc9_text_consumed_when_policy_says_so() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc9"))
    out, events = run(t, b"a\x1b]9;Build done\x07b")
    assert out == b"ab"
    assert events == [ChildNotification("osc9", "", "Build done", True)]


def test_osc9_passed_unchanged_when_policy_declines() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy())
    data = b"a\x1b]9;Build done" + ST + b"b"
    out, events = run(t, data)
    assert out == data
    assert events == [ChildNotification("osc9", "", "Build done", False)]


def test_osc9_progress_and_commands_are_not_notifications() -> None:
    policy = Policy("osc9")
    t = OutputTracker(StatusGuard(consume=False), notices=policy)
    data = b"\x1b]9;4;3\x07\x1b]9;4;0" + ST + b"\x1b]9;12\x07\x1b]9;\x07"
    out, events = run(t, data)
    assert out == data
    assert events == [ChildProgress(3), ChildProgress(0)]  # progress states, no notification
    assert policy.asked == []  # never even considered


def test_osc777_notify_and_other_777_commands() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc777"))
    out, events = run(
        t, b"\x1b]777;notify;Codex;Needs approval; really" + ST, b"\x1b]777;precmd\x07"
    )
    assert out == b"\x1b]777;precmd\x07"
    assert events == [ChildNotification("osc777", "Codex", "Needs approval; really", True)]


def test_osc99_multipart_with_id_is_one_notification_decided_once() -> None:
    policy = Policy("osc99")
    t = OutputTracker(StatusGuard(consume=False), notices=policy)
    title = b"\x1b]99;i=job1:d=0;Hello " + ST
    title2 = b"\x1b]99;i=job1:d=0;world" + ST
    body = b"\x1b]99;i=job1:p=body;This is cool" + ST
    out, events = run(t, b"x" + title, title2 + b"y", body)
    assert out == b"xy"
    assert events == [ChildNotification("osc99", "Hello world", "This is cool", True)]
    assert policy.asked == ["osc99"]


def test_osc99_multipart_passed_as_a_whole_even_if_policy_changes() -> None:
    policy = Policy()
    t = OutputTracker(StatusGuard(consume=False), notices=policy)
    first = b"\x1b]99;i=7:d=0;T" + ST
    s1 = t.feed(first)
    policy.take.add("osc99")  # the user leaves in between: the rest still passes
    rest = b"\x1b]99;i=7:p=body;B" + ST
    out, events = run(t, rest)
    assert s1.out + out == first + rest
    assert events == [ChildNotification("osc99", "T", "B", False)]


def test_osc99_base64_and_non_notification_payloads() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc99"))
    b64 = base64.b64encode("héllo".encode()).decode().encode()
    close = b"\x1b]99;i=1:p=close;" + ST
    query = b"\x1b]99;i=1:p=?;" + ST
    out, events = run(t, b"\x1b]99;e=1;" + b64 + ST + close + query)
    assert out == close + query
    assert events == [ChildNotification("osc99", "héllo", "", True)]


def test_split_notification_is_held_then_consumed() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc777"))
    s1 = t.feed(b"ok \x1b]777;not")
    assert s1.out == b"ok " and t.held
    s2 = t.feed(b"ify;T;B\x1b")
    assert s2.out == b"" and t.held
    s3 = t.feed(b"\\done")
    assert s3.out == b"done"
    assert s3.events == [ChildNotification("osc777", "T", "B", True)]


def test_no_hold_without_a_consuming_policy() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy())
    assert t.feed(b"ok \x1b]777;not").out == b"ok \x1b]777;not"
    assert not t.held


def test_notification_inside_a_character_is_not_removed() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc9"))
    data = b"\xe2\x94\x1b]9;x\x07"  # the OSC interrupts a UTF-8 character: not a safe point
    out, events = run(t, data)
    assert out == data
    assert events == [ChildNotification("osc9", "", "x", False)]


def test_bel_terminator_is_not_a_bell_but_a_bare_bel_is() -> None:
    t = OutputTracker(StatusGuard(consume=False), notices=Policy("osc9"))
    out, events = run(t, b"\x1b]9;hi\x07\x07")
    assert out == b"\x07"
    assert events == [ChildNotification("osc9", "", "hi", True), Bell()]


def test_parser_bounds_pending_ids_and_text() -> None:
    p = NoticeParser()
    for i in range(40):
        p.osc("osc99", b"i=%d:d=0;" % i + b"x" * 10000, None)
    note, _ = p.osc("osc99", b"i=39:p=body;y", None)
    assert note is not None and len(note.title.encode()) == 4096 and note.body == "y"
    assert len(p._pending) <= 16
