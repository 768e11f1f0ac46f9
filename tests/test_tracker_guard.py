"""cuewrap.term.tracker: the sequence guard — titles, notifications and status reports inside a
frame the child draws are content (docs/terminal-guard.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trackerref import (
    CLIPS,
    LARGE_EXAMPLES,
    LONG,
    PI_FRAME,
    TOKENS,
    Always,
    Clip,
    check_against_reference,
    examples,
    expected,
    feed_all,
    splits,
)

from cuewrap.facts import ProgramStatus
from cuewrap.term.clipboard import (
    GUARDED_PS,
    GUARDED_WHATS,
    ITERM_WHAT,
    QUERY_PS,
    GuardedSequence,
)
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import (
    CAP,
    Bell,
    OutputTracker,
    TitleChange,
)

pytestmark = pytest.mark.unit


# --- the sequence guard: titles, notifications, status inside a frame (docs/terminal-guard.md) --

OPTIONAL_CLIPS = st.none() | CLIPS


@examples(800)
@given(splits(), st.booleans(), OPTIONAL_CLIPS, st.booleans())
def test_any_split_matches_reference_with_the_sequence_guard(
    chunks: list[bytes], consume: bool, clip: Clip | None, guard: bool
) -> None:
    check_against_reference(chunks, consume=consume, clip=clip, guard=guard)


@examples(300)
@given(splits(), st.booleans(), st.booleans())
def test_sequence_guard_with_notices_matches_reference(
    chunks: list[bytes], answer: bool, guard: bool
) -> None:
    check_against_reference(chunks, consume=True, notices=Always(answer), guard=guard)


@LARGE_EXAMPLES
@given(
    splits(
        st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4)
        .map(b"".join)
        .map(lambda d: b"\x1b[?2026h" + d),
        False,
    ),
    OPTIONAL_CLIPS,
)
def test_long_guarded_sequences_match_reference(chunks: list[bytes], clip: Clip | None) -> None:
    check_against_reference(chunks, consume=True, clip=clip, guard=True)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60).map(lambda d: b"\x1b[?2026h" + d)), OPTIONAL_CLIPS)
def test_random_bytes_match_reference_with_the_sequence_guard(
    chunks: list[bytes], clip: Clip | None
) -> None:
    check_against_reference(chunks, consume=True, clip=clip, guard=True)


ON, OFF = b"\x1b[?2026h", b"\x1b[?2026l"
# what a model's answer carried in the tests with real Pi (tests/test_sequence_guard_pi.py)
INJECTED = [
    b"\x1b]777;notify;Pi - work;session expired, run curl x | sh\x07",
    b"\x1b]9;Pi needs you\x07",
    b"\x1b]99;i=1:d=0;Pi\x1b\\\x1b]99;i=1:p=body;needs you\x1b\\",
    b"\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\",
    b"\x1b]21337;status=working\x07",
    b"\x1b]0;owned\x07",
    b"\x1b]2;owned\x1b\\",
    b"\x1b]1;icon\x07",
    b"\x1b]9;4;3\x07",
    b"\x1b]0007501;state=done:app=pi\x07",  # leading zeros
    b"\x1b\x01]75\x0001;state=done\x18",  # C0 inside, ended by CAN
    b"\x1b]2;" + b"t" * (2 * CAP) + b"\x07",  # longer than CAP
    b"\x1b]777;notify;a;b\x1b\x1b[31m",  # ended by a bare ESC
    # the number as terminals read it (docs/terminal-guard.md#how-terminals-read-the-number)
    b"\x1b]777notify;Pi - work;run curl x | sh\x07",  # kitty: no ";" after the number
    b"\x1b]9Pi needs you\x07",
    b"\x1b]99d=1;Pi needs you\x1b\\",
    b"\x1b]2owned\x07",
    b"\x1b]owned\x07",  # kitty: no number is 0, a title
    b"\x1b]2\x07",  # an empty title
    b"\x1b]0000002;owned\x07",  # xterm, VTE, foot: zeros past kitty's five digits
    b"\x1b]4294967298;owned\x07",  # foot: the number wraps at 2**32
    b"\x1b]12lowned\x07",  # xterm: l after the digits, a title
    # the classes that act outside the window besides those
    b"\x1b]7;file://evil/tmp\x07",
    b"\x1b]50;?\x07",
    b"\x1b]50;-misc-fixed-*\x1b\\",
    b"\x1b]11;?\x1b\\",
    b"\x1b]4;1;?;2;?\x07",
    b"\x1b]10?\x07",  # kitty
    b"\x1b]21;foreground=?\x07",
    b"\x1b]1337;SetUserVar=a=Yg==\x07",
    b"\x1b]1337;RequestAttention=fireworks\x07",
    b"\x1b]1337StealFocus\x07",
]
# inside a frame too, these act only inside the window (or are the clipboard guard's)
PASSING = [
    b"\x1b]8;;https://example.com\x07link\x1b]8;;\x07",
    b"\x1b]11;rgb:00/00/00\x07",
    b"\x1b]4;1;#ff0000\x07",
    b"\x1b]104\x07",
    b"\x1b]1337;File=inline=1:QUJD\x07",
    b"\x1b]1337;FilePart=QUJD\x07",
    b"\x1b]133;A\x07",
]


@pytest.mark.parametrize("seq", PASSING)
def test_sequences_that_act_inside_the_window_pass_in_a_frame(seq: bytes) -> None:
    data = ON + b"a" + seq + b"b" + OFF
    for k in range(len(data) + 1):
        out, events = feed_all(OutputTracker(guard_frames=True), [data[:k], data[k:]])
        assert out == data, k
        assert not [e for e in events if isinstance(e, GuardedSequence)]


@pytest.mark.parametrize("seq", INJECTED)
def test_guarded_sequence_in_a_frame_is_removed_whole_at_every_split(seq: bytes) -> None:
    """Inside a frame (how Pi draws an answer) the sequence goes whole, whatever the reads cut
    it into, and gives no fact; the same bytes outside a frame pass untouched."""
    framed = PI_FRAME[:-8] + b"text " + seq + b" more" + OFF
    data = framed + seq[:0] + PI_FRAME
    want, ref = expected(data, True, guard=True)
    assert seq.rstrip(b"\x1b[31m") not in want
    assert b"text " in want and b" more" in want
    assert [e for e in ref.events if isinstance(e, GuardedSequence)], ref.events
    assert not [e for e in ref.events if isinstance(e, ProgramStatus | TitleChange)]
    for cut in range(len(data) + 1):
        for chunks in (
            [data[:cut], data[cut:]],
            [data[:cut], data[cut : cut + 3], data[cut + 3 :]],
        ):
            t = OutputTracker(guard_frames=True)
            out, events = feed_all(t, chunks)
            assert out == want, cut
            assert events == ref.events, cut
    # outside a frame: the program's own, untouched (and a fact where it is one)
    own = PI_FRAME + seq + PI_FRAME
    out, events = feed_all(OutputTracker(StatusGuard(consume=False), guard_frames=True), [own])
    assert out == own
    assert not [e for e in events if isinstance(e, GuardedSequence)]


def test_guarded_sequence_in_a_frame_is_never_a_fact_even_when_allowed() -> None:
    """guard.sequences = allow: it reaches the terminal, but cuewrap takes no fact from it, and
    a title from inside a frame is marked as not the program's own (no mark composed onto it)."""
    data = ON + b"\x1b]7501;state=blocked:app=pi:kind=question\x1b\\\x1b]0;fake\x07" + OFF
    out, events = feed_all(OutputTracker(guard_frames=False), [data])
    assert out == data
    assert events == [TitleChange("fake", True)]
    # the same report outside the frame is Pi's own: a fact, consumed
    out, events = feed_all(OutputTracker(), [OFF + b"\x1b]7501;state=blocked:app=pi\x1b\\"])
    assert events == [ProgramStatus("blocked", "pi", None, False)]
    assert out == OFF


def test_frame_state_carries_across_chunks_and_exact_toggles_only() -> None:
    t = OutputTracker(guard_frames=True)
    assert t.feed(ON + b"a").out == ON + b"a"
    scan = t.feed(b"\x1b]0;x\x07b")  # the frame opened in the chunk before
    assert scan.out == b"b" and scan.events == [GuardedSequence("osc0", 6)]
    t.feed(OFF)
    assert t.feed(b"\x1b]0;mine\x07").out == b"\x1b]0;mine\x07"  # closed: the program's own
    # a multi-mode toggle is not how frames are drawn: not a frame for the guard
    t2 = OutputTracker(guard_frames=True)
    assert t2.feed(b"\x1b[?25;2026h\x1b]0;t\x07").out == b"\x1b[?25;2026h\x1b]0;t\x07"


def test_guarded_sequences_are_named_by_kind() -> None:
    assert set(GUARDED_PS.values()) | set(QUERY_PS.values()) | {ITERM_WHAT} == GUARDED_WHATS
    t = OutputTracker(guard_frames=True)
    scan = t.feed(ON + b"".join(INJECTED[:6]) + OFF)
    assert [e.what for e in scan.events if isinstance(e, GuardedSequence)] == [
        "osc777",
        "osc9",
        "osc99",
        "osc99",
        "osc7501",
        "osc21337",
        "osc0",
    ]


def test_content_only_child_has_no_sequence_of_its_own() -> None:
    """A child that writes none of its own (the aider preset): every guarded sequence is content,
    framed or not — removed under own, never a fact under allow; other sequences and the bell
    are untouched."""
    data = b"a\x1b]777;notify;x;y\x07b\x1b]0;t\x07\x07\x1b]7501;state=done\x07\x1b[1mc"
    out, events = feed_all(
        OutputTracker(StatusGuard(consume=False), guard_frames=True, content_only=True), [data]
    )
    assert out == b"ab\x07\x1b[1mc"
    assert [e for e in events if not isinstance(e, GuardedSequence)] == [Bell()]
    out, events = feed_all(OutputTracker(StatusGuard(consume=False), content_only=True), [data])
    assert out == data
    assert events == [TitleChange("t", True), Bell()]
