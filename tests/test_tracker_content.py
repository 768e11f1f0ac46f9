"""cuewrap.term.tracker with cuewrap.term.content: what drawn content may not carry besides the
guarded OSCs — queries, DCSs, kitty file reads, C1 controls (docs/terminal-guard.md#content-that-
acts-outside-the-window)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trackerref import (
    CLIPS,
    MISC,
    TEXT,
    TOKENS,
    Clip,
    check_against_reference,
    examples,
    feed_all,
    splits,
)

from cuewrap.term.clipboard import GuardedSequence
from cuewrap.term.content import (
    PASS,
    REMOVE,
    UNDECIDED,
    apc_class,
    csi_could_query,
    csi_query,
    dcs_class,
)
from cuewrap.term.tracker import Bell, OutputTracker

pytestmark = pytest.mark.unit

ON = b"\x1b[?2026h"
OFF = b"\x1b[?2026l"

# (sequence, what) removed inside content
REMOVED = [
    (b"\x1b[c", "da1"),
    (b"\x1b[0c", "da1"),
    (b"\x1b[>c", "da2"),
    (b"\x1b[>0c", "da2"),
    (b"\x1b[=c", "da3"),
    (b"\x1b[5n", "dsr"),
    (b"\x1b[6n", "dsr"),
    (b"\x1b[?6n", "dsr"),
    (b"\x1b[?996n", "dsr"),
    (b"\x1b[21t", "window-report"),
    (b"\x1b[14;2t", "window-report"),
    (b"\x1b[18t", "window-report"),
    (b"\x1b[2$p", "decrqm"),
    (b"\x1b[?2026$p", "decrqm"),
    (b"\x1b[>q", "xtversion"),
    (b"\x1b[>0q", "xtversion"),
    (b"\x1b[?u", "kitty-keyboard-query"),
    (b"\x1b[?4m", "xtqmodkeys"),
    (b"\x1b[\n6n", "dsr"),  # a control character inside: executed, the CSI goes on
    (b"\x1b\x00[c", "da1"),
    (b"\x1bP$qm\x1b\\", "decrqss"),
    (b"\x1bP+q544e\x1b\\", "xtgettcap"),
    (b"\x1bPtmux;hi\x1b\\", "dcs-tmux"),
    (b"\x1bP@kitty-cmd{}\x1b\\", "dcs"),
    (b"\x1b_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\x1b\\", "kitty-graphics-file"),
    (b"\x1b_Gt=t;L3RtcC94\x1b\\", "kitty-graphics-file"),
    (b"\x1b_Gs=1,v=1,t=s;bmFtZQ==\x1b\\", "kitty-graphics-file"),
]
KEPT = [
    b"\x1b[22;0t",  # the title stack: no report
    b"\x1b[38;2;1;2;3m",
    b"\x1b[2 q",
    b"\x1bP0;1;0q#0;2;0;0;0-\x1b\\",  # sixel
    b"\x1b_Ga=T,f=100;QUJD\x1b\\",  # direct transmission (t=d by default)
    b"\x1b_Ga=T,t=d;QUJD\x1b\\",
    b"\x1b_Ga=d\x1b\\",
    b"\xc2\xa9",  # ©
]


@pytest.mark.parametrize(("seq", "what"), REMOVED)
def test_removed_whole_inside_a_frame_passes_between_frames(seq: bytes, what: str) -> None:
    data = ON + b"a" + seq + b"b" + OFF + seq
    t = OutputTracker(guard_frames=True)
    out, events = feed_all(t, [data])
    assert out == ON + b"ab" + OFF + seq
    assert [e for e in events if isinstance(e, GuardedSequence)] == [
        GuardedSequence(what, len(seq))
    ]


def test_tmux_passthrough_loses_its_wrapper_and_what_it_wraps() -> None:
    # the DCS ends at the inner ESC (as the DEC parser reads it): ESC P tmux; goes, and the
    # wrapped query, a sequence of its own after the doubled ESC, goes too; tmux never sees a
    # passthrough
    data = ON + b"a\x1bPtmux;\x1b\x1b[6n\x1b\\b" + OFF
    out, events = feed_all(OutputTracker(guard_frames=True), [data])
    assert out == ON + b"a\x1b\x1b\x18\x1b\\b" + OFF  # the lone ESC before it: ESC CAN
    assert events == [GuardedSequence("dcs-tmux", 7), GuardedSequence("dsr", 4)]


@pytest.mark.parametrize("seq", KEPT)
def test_kept_inside_a_frame(seq: bytes) -> None:
    data = ON + b"a" + seq + b"b" + OFF
    out, events = feed_all(OutputTracker(guard_frames=True), [data])
    assert out == data
    assert not [e for e in events if isinstance(e, GuardedSequence)]


def test_c1_controls_are_replaced_inside_a_frame() -> None:
    data = ON + b"a\xc2\x9d52;c;QQ==\x07b\xc2\x9b6n" + OFF + b"\xc2\x9b"
    out, events = feed_all(OutputTracker(guard_frames=True), [data])
    assert (
        out == ON + "a\ufffd52;c;QQ==".encode() + b"\x18b" + "\ufffd6n".encode() + OFF + b"\xc2\x9b"
    )  # the BEL that ended the C1 OSC is a bare one in the frame then: CAN in its place
    assert events.count(GuardedSequence("c1", 2)) == 2
    assert events.count(GuardedSequence("bel", 1)) == 1


def test_a_bell_inside_a_frame_is_removed_outside_it_rings() -> None:
    """A bare BEL the child draws inside a frame is content (a model's answer): removed (in
    Konsole a bell while away is a desktop popup); the child's own, outside a frame, rings; an
    OSC's BEL terminator is no bell."""
    data = ON + b"a\x07b\x1b]8;;\x07c" + OFF + b"\x07"
    out, events = feed_all(OutputTracker(guard_frames=True), [data])
    assert out == ON + b"a\x18b\x1b]8;;\x07c" + OFF + b"\x07"
    assert events == [GuardedSequence("bel", 1), Bell()]
    out, events = feed_all(OutputTracker(guard_frames=False), [data])
    assert out == data
    assert events == [Bell(), Bell()]


def test_without_the_guard_everything_passes() -> None:
    data = ON + b"".join(s for s, _ in REMOVED) + b"\xc2\x9b" + OFF
    out, _ = feed_all(OutputTracker(guard_frames=False), [data])
    assert out == data


def test_a_content_only_child_is_content_everywhere() -> None:
    t = OutputTracker(guard_frames=True, content_only=True)
    out, events = feed_all(t, [b"x\x1b[6ny\xc2", b"\x9bz"])
    assert out == "xy\ufffdz".encode()
    assert events == [GuardedSequence("dsr", 4), GuardedSequence("c1", 2)]


def test_held_while_undecided_never_released_half() -> None:
    t = OutputTracker(guard_frames=True)
    s = t.feed(ON + b"a\x1b[6")
    assert s.out == ON + b"a"
    assert t.held and t.flush() == b""  # a possible query is never released undecided
    s = t.feed(b"n" + OFF)
    assert s.out == OFF
    assert s.events == [GuardedSequence("dsr", 4)]


def test_a_removed_dcs_streams_to_its_end() -> None:
    t = OutputTracker(guard_frames=True)
    outs = [t.feed(c).out for c in (ON + b"a\x1bP+q", b"54" * 3000, b"\x1b\\b" + OFF)]
    assert b"".join(outs) == ON + b"ab" + OFF


def test_neutral_where_removal_would_join_neighbours() -> None:
    # half a UTF-8 character before it: the ESC cut it off on the host; ESC CAN keeps that
    out, _ = feed_all(OutputTracker(guard_frames=True), [ON + b"\xe2\x94\x1b[6nb" + OFF])
    assert out == ON + b"\xe2\x94\x1b\x18b" + OFF


def test_recognisers() -> None:
    assert csi_query(b"", b"", ord("c")) == "da1"
    assert csi_query(b"14", b"", ord("t")) == "window-report"
    assert csi_query(b"8;24;80", b"", ord("t")) is None  # a resize
    assert csi_query(b"?25", b"", ord("h")) is None
    assert csi_could_query(b"38;2", b"")
    assert not csi_could_query(b"<", b"")
    assert not csi_could_query(b"2", b" ")
    assert dcs_class(b"$", False) == (UNDECIDED, "dcs")
    assert dcs_class(b"$q", False) == (REMOVE, "decrqss")
    assert dcs_class(b"tmu", False) == (UNDECIDED, "dcs")
    assert dcs_class(b"\x00tmux;", False) == (REMOVE, "dcs-tmux")
    assert dcs_class(b"1;2q", False) == (PASS, "")
    assert apc_class(b"Ga=T,t=", False) == (UNDECIDED, "kitty-graphics-file")
    assert apc_class(b"Ga=T,t=f;x", False) == (REMOVE, "kitty-graphics-file")
    assert apc_class(b"Ga=T;x", False) == (PASS, "")
    assert apc_class(b"X", False) == (PASS, "")


CONTENT_MISC = st.sampled_from([b"\x1b[?2026h", b"\x1b[?2026l"])
CONTENT_STREAMS = st.lists(
    st.one_of(TOKENS, MISC, CONTENT_MISC, CONTENT_MISC, TEXT), max_size=30
).map(b"".join)


@examples(800)
@given(splits(CONTENT_STREAMS), st.booleans(), st.none() | CLIPS)
def test_content_classes_at_any_split_match_the_reference(
    chunks: list[bytes], consume: bool, clip: Clip | None
) -> None:
    check_against_reference(chunks, consume=consume, clip=clip, guard=True)


# cases the property tests found (each at every split into two chunks, and byte by byte)
FOUND = [
    ON + b"\x1bP1;2\x1b]2;title\x07",  # a DCS ended by the OSC that follows: no ESC CAN
    ON + b"\x1b]0;title\x1b\xc2\x80",  # C2 aborts the ESC: held, the ESC before it open
    ON + b"\x1b]4294967348ltitle\x07",  # no terminal reads a title there
]
# a clipboard write to kitty, a title to xterm, inside a frame, the sequence guard off: only
# the clipboard sequence (removed whole), no title
CLIP_FOUND = [ON + b"\x1b]52ltitle\x07", ON + b"\x1b]52Licon\x07"]


@pytest.mark.parametrize("data", FOUND)
def test_found_cases_at_every_split_match_the_reference(data: bytes) -> None:
    for i in range(len(data) + 1):
        check_against_reference([data[:i], data[i:]], consume=True, clip=None, guard=True)
    check_against_reference([data[i : i + 1] for i in range(len(data))], True, guard=True)


@pytest.mark.parametrize("data", CLIP_FOUND)
@pytest.mark.parametrize("clip", [Clip(False, False), Clip(True, True)], ids=["removed", "passed"])
def test_found_clipboard_cases_at_every_split_match_the_reference(data: bytes, clip: Clip) -> None:
    for i in range(len(data) + 1):
        check_against_reference([data[:i], data[i:]], consume=False, clip=clip)
    check_against_reference([data[i : i + 1] for i in range(len(data))], False, clip=clip)
