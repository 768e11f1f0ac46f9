"""The child's capability queries cuewrap answers itself (generic mode, opencode's preset:
``term/childqueries.py``, docs/generic-mode.md "opencode, measured"): its DECRQM 1004 and
kitty's OSC 99 query, found and taken out by the output tracker, answered with what cuewrap
provides; once the OSC 99 query was answered, the child's OSC 99 notifications are cuewrap's
(always taken out, whatever the notice policy says).
"""

from __future__ import annotations

import pytest
from trackerref import feed_all as feed_tracker

from cuewrap.term.childqueries import ChildQuery, answer
from cuewrap.term.notices import ChildNotification, NoticeProtocol
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import OutputEvent, OutputTracker

pytestmark = pytest.mark.unit

# what opencode 1.18.33 (opentui) writes at start, among its other probes
PROBES = (
    b"\x1b[?1016$p\x1b[?2027$p\x1b[?2031$p\x1b[?1004$p\x1b[?2004$p\x1b[?2026$p\x1b[?u"
    b"\x1b]99;i=opentui-notifications:p=?;\x1b\\\x1b]1337;Capabilities\x1b\\"
)
LEFT = (
    b"\x1b[?1016$p\x1b[?2027$p\x1b[?2031$p\x1b[?2004$p\x1b[?2026$p\x1b[?u"
    b"\x1b]1337;Capabilities\x1b\\"
)
# its notification: title and body, base64, two chunks
DONE = (
    b"\x1b]99;i=1:d=0:p=title:e=1;QSB0aXRsZQ==\x1b\\"
    b"\x1b]99;i=1:d=1:p=body:e=1;U2Vzc2lvbiBkb25l\x1b\\"
)


class Never:
    def consume(self, protocol: NoticeProtocol) -> bool:
        return False


def run(chunks: list[bytes], **kw: object) -> tuple[bytes, list[OutputEvent]]:
    return feed_tracker(OutputTracker(StatusGuard(consume=False), **kw), chunks)  # type: ignore[arg-type]


def test_both_queries_are_taken_out_and_reported_the_others_pass() -> None:
    out, events = run([b"a" + PROBES + b"b"], answer_child=True)
    assert out == b"a" + LEFT + b"b"
    assert events == [
        ChildQuery("decrqm1004"),
        ChildQuery("osc99", "opentui-notifications"),
    ]


def test_split_anywhere_they_are_still_found() -> None:
    data = b"a" + PROBES + b"b"
    for cut in range(1, len(data)):
        out, events = run([data[:cut], data[cut:]], answer_child=True)
        kinds = [e.kind for e in events if isinstance(e, ChildQuery)]
        assert kinds == ["decrqm1004", "osc99"], cut
        if all(e.cut for e in events if isinstance(e, ChildQuery)):
            assert out == b"a" + LEFT + b"b", cut


def test_without_the_preset_they_pass_and_are_no_event() -> None:
    out, events = run([PROBES], answer_child=False)
    assert out == PROBES and events == []


def test_inside_a_frame_the_decrqm_is_content_not_its_query() -> None:
    frame = b"\x1b[?2026h" + b"\x1b[?1004$p" + b"\x1b[?2026l"
    _, events = run([frame], answer_child=True)
    assert [e for e in events if isinstance(e, ChildQuery)] == []


def test_its_notifications_after_the_query_are_always_taken_out() -> None:
    out, events = run([PROBES, b"x" + DONE + b"y"], answer_child=True, notices=Never())
    assert out == LEFT + b"xy"
    (notice,) = [e for e in events if isinstance(e, ChildNotification)]
    assert (notice.title, notice.body, notice.consumed) == ("A title", "Session done", True)


def test_before_the_query_its_notifications_follow_the_policy() -> None:
    out, events = run([b"x" + DONE + b"y"], answer_child=True, notices=Never())
    assert out == b"x" + DONE + b"y"
    (notice,) = [e for e in events if isinstance(e, ChildNotification)]
    assert notice.consumed is False


def test_the_answers_say_what_cuewrap_provides() -> None:
    assert answer(ChildQuery("decrqm1004"), focus_on=False) == b"\x1b[?1004;2$y"
    assert answer(ChildQuery("decrqm1004"), focus_on=True) == b"\x1b[?1004;1$y"
    assert (
        answer(ChildQuery("osc99", "opentui-notifications"), focus_on=False)
        == b"\x1b]99;i=opentui-notifications:p=?;p=title,body\x1b\\"
    )


def test_inside_tmux_its_wrapped_decrqm_is_answered_and_the_passthrough_left_whole() -> None:
    """With ``TMUX`` set opencode wraps its DECRQMs in tmux's passthrough (its OSC 99 query
    not): the inner query is answered, nothing is taken out of the wrapper."""
    wrapped = b"\x1bPtmux;\x1b\x1b[?1016$p\x1b\x1b[?1004$p\x1b\x1b[?2004$p\x1b\\\x1b[?u"
    query = b"\x1b]99;i=opentui-notifications:p=?;\x1b\\"
    out, events = run([wrapped + query], answer_child=True)
    assert out == wrapped
    assert events == [
        ChildQuery("decrqm1004", cut=False),
        ChildQuery("osc99", "opentui-notifications"),
    ]
