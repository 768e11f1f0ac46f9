"""cuewrap.term.tracker: the clipboard guard (OSC 52, iTerm2, kitty OSC 5522;
docs/terminal-guard.md), against the reference and at every byte boundary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trackerref import (
    CLIPS,
    LARGE_EXAMPLES,
    LONG,
    PI_FRAME,
    ST,
    TOKENS,
    Always,
    Clip,
    check_against_reference,
    examples,
    expected,
    feed_all,
    splits,
)

from cuewrap.term.clipboard import ClipboardSequence
from cuewrap.term.tracker import (
    FocusMayBeOff,
    OutputTracker,
    TitleChange,
)

pytestmark = pytest.mark.unit


# --- the clipboard guard (OSC 52) ----------------------------------------------------------------

WRITE = b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"


@examples(800)
@given(splits(), st.booleans(), CLIPS)
def test_any_split_matches_reference_with_clipboard(
    chunks: list[bytes], consume: bool, clip: Clip
) -> None:
    check_against_reference(chunks, consume=consume, clip=clip)


@examples(300)
@given(splits(), CLIPS, st.booleans())
def test_clipboard_with_notices_matches_reference(
    chunks: list[bytes], clip: Clip, answer: bool
) -> None:
    check_against_reference(chunks, consume=False, notices=Always(answer), clip=clip)


@LARGE_EXAMPLES
@given(
    splits(st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4).map(b"".join), False),
    CLIPS,
)
def test_long_clipboard_sequences_match_reference(chunks: list[bytes], clip: Clip) -> None:
    check_against_reference(chunks, consume=True, clip=clip)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60)), CLIPS)
def test_random_bytes_match_reference_with_clipboard(chunks: list[bytes], clip: Clip) -> None:
    check_against_reference(chunks, consume=True, clip=clip)


CLIP_CASES = [
    b"a" + WRITE + b"b",
    b"\x1b[1m" + WRITE.replace(b"\x07", ST) + b"\x1b[0m",
    b"x\x1b]52;c;?\x07y",
    b"x\x1b]0052;p;QUJD\x1b\x1b[31mred",  # leading zeros, ended by a bare ESC
    b"x\x1b\x01]5\x002;c;QUJD\x18y",  # C0 inside, ended by CAN
    b"\xc3" + WRITE + b"\xa9",  # inside a UTF-8 character: ESC CAN in its place
    b"\x1b]2;t" + WRITE + b"z",  # ends an open OSC
    b"\x1bPtmux;\x1b" + WRITE + b"\x1b\\",  # tmux passthrough
    b"\x1b]52;c;" + b"QUFB" * 3000 + b"\x07after",  # longer than CAP
    PI_FRAME + WRITE + PI_FRAME,
    # the number as terminals read it (docs/terminal-guard.md#how-terminals-read-the-number)
    b"x\x1b]52c;ZXZpbA==\x07y",  # kitty: no ";" after the number
    b"x\x1b]52c;?\x07y",  # a read, so spelled
    b"x\x1b]000052;c;ZXZpbA==\x07y",  # xterm, VTE, foot: zeros past kitty's five digits
    b"x\x1b]4294967348;c;ZXZpbA==\x1b\\y",  # foot: its number wraps at 2**32
]


@pytest.mark.parametrize("data", CLIP_CASES)
def test_clipboard_write_split_at_every_byte_boundary_leaks_nothing(data: bytes) -> None:
    """Split in two at every byte boundary (and byte by byte): the output is the stream with
    the OSC 52 taken out whole, the same as the reference, and never holds a "52;"."""
    want, ref = expected(data, True, clip=Clip())
    assert [type(e) for e in ref.events].count(ClipboardSequence) == 1
    assert b"52;" not in want and b"5\x002;" not in want and b"ZXZpbA" not in want
    for k in [*range(len(data) + 1), -1]:
        chunks = [data[:k], data[k:]] if k >= 0 else [data[i : i + 1] for i in range(len(data))]
        if len(data) > 2000 and k not in (-1, 0, 1, 5, 9, 100, 4096, 4100, len(data) - 8):
            continue  # the long one: a sample of the boundaries
        t = OutputTracker(clipboard=Clip())
        out, events = feed_all(t, chunks)
        assert out == want, k
        assert [e for e in events if isinstance(e, ClipboardSequence)] == [
            e for e in ref.events if isinstance(e, ClipboardSequence)
        ]


def test_clipboard_event_says_read_and_size_never_the_payload() -> None:
    t = OutputTracker(clipboard=Clip(write=True))
    s = t.feed(b"x" + WRITE + b"\x1b]52;c;?\x1b\\")
    assert s.out == b"x" + WRITE
    assert s.events == [
        ClipboardSequence(read=False, passed=True, size=len(WRITE)),
        ClipboardSequence(read=True, passed=False, size=10),
    ]


def test_clipboard_policy_is_told_about_frames() -> None:
    """Drawn content sits inside a synchronized-output frame; Pi's own /copy does not."""
    clip = Clip(write=True)
    t = OutputTracker(clipboard=clip)
    t.feed(b"\x1b[?2026hline" + WRITE + b"\x1b[?2026l" + WRITE)
    t.feed(b"\x1b[?2026hstart")
    t.feed(b"more" + WRITE)
    t.feed(b"\x1b[?2026l")
    t.feed(WRITE)
    assert clip.asked == [(False, True), (False, False), (False, True), (False, False)]


def test_unfinished_clipboard_sequence_is_never_flushed() -> None:
    t = OutputTracker(clipboard=Clip())
    s = t.feed(b"ab\x1b]52;c")
    assert s.out == b"ab" and t.held and s.safe
    assert t.flush() == b"" and t.held
    s = t.feed(b";QQ==\x07cd")
    assert s.out == b"cd"
    assert s.events == [ClipboardSequence(False, False, 12)]


def test_report_waiting_for_st_keeps_its_esc_when_flushed() -> None:
    """An OSC 7501 report held for the "\\" of its ST is flushed, but its ESC is kept: it
    could begin an OSC 52 instead."""
    t = OutputTracker(clipboard=Clip())
    t.feed(b"\x1b]7501;state=idle\x1b")
    assert t.flush() == b"\x1b]7501;state=idle"
    s = t.feed(b"]52;c;QQ==\x07z")
    assert s.out == b"\x1b\x18z"  # the OSC ended by ESC (as the host sees it), then ground


def test_without_policy_osc52_passes_unseen() -> None:
    t = OutputTracker()
    s = t.feed(WRITE)
    assert s.out == WRITE and s.events == []


@pytest.mark.parametrize("own_focus", [False, True])
def test_control_characters_between_esc_and_bracket_still_found(own_focus: bool) -> None:
    """ESC, controls, then "]" begins an OSC in terminals: found by the RIS search (focus
    owned) or a search of its own; a RIS after it is still reported."""
    t = OutputTracker(own_focus=own_focus, clipboard=Clip())
    s = t.feed(b"a\x1b\r\x00]52;c;QQ==\x07b\x1bcz")
    assert s.out == b"ab\x1bcz"
    assert ClipboardSequence(False, False, 14) in s.events
    assert (FocusMayBeOff("ris") in s.events) is own_focus


def test_title_with_control_characters_is_flagged() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b]2;a\rb\x07\x1b]0;c\xc2\x85d\x07\x1b]2;plain\x1b\\")
    assert s.events == [
        TitleChange("ab", controls=True),
        TitleChange("c\x85d", controls=True),
        TitleChange("plain"),
    ]


ITERM_CASES = [
    (b"\x1b]1337;Copy=:Y3VybA==\x07", "osc1337 Copy"),
    (b"\x1b]1337;File=name=ZXZpbA==;size=4:ZXZpbA==\x07", "osc1337 File"),
    (b"\x1b]1337;File=inline=0:" + b"QUFB" * 2000 + b"\x1b\\", "osc1337 File"),
    (b"\x1b]1337;MultipartFile=name=ZXZpbA==;size=4\x07", "osc1337 File"),
    (b"\x1b]1337Copy=:Y3VybA==\x07", "osc1337 Copy"),  # kitty's reading of the number
    (b"\x1b]01337;File=name=ZXZpbA==:ZXZpbA==\x07", "osc1337 File"),
]


@pytest.mark.parametrize(("seq", "what"), ITERM_CASES)
def test_iterm_copy_and_downloads_are_guarded_at_every_boundary(seq: bytes, what: str) -> None:
    data = b"a" + seq + b"b"
    for k in [*range(0, len(data) + 1, 1 if len(data) < 200 else 97), len(data) - 2]:
        t = OutputTracker(clipboard=Clip())
        out, events = feed_all(t, [data[:k], data[k:]])
        assert out == b"ab", k
        assert events == [ClipboardSequence(False, False, len(seq), what)]


def test_iterm_inline_images_pass_unseen() -> None:
    clip = Clip()
    t = OutputTracker(clipboard=clip)
    image = b"\x1b]1337;File=name=eA==;inline=1:" + b"QUFB" * 3000 + b"\x07"
    out, events = feed_all(t, [image[:10], image[10:5000], image[5000:]])
    assert out == image and events == [] and clip.asked == []


KITTY_WRITE = (
    b"\x1b]5522;type=write\x1b\\"
    b"\x1b]5522;type=wdata:mime=dGV4dC9wbGFpbg==;Y3VybCBldmls\x1b\\"
    b"\x1b]5522;type=wdata\x1b\\"
)


@pytest.mark.parametrize("write", [False, True])
def test_kitty_clipboard_write_goes_or_passes_as_a_whole(write: bool) -> None:
    """OSC 5522: the write's start is asked; its data and end follow that answer, at every
    split; a read is asked as a read; replies (type=read:status=…) are not clipboard writes."""
    data = b"a" + KITTY_WRITE + b"b\x1b]5522;type=read;dGV4dA==\x07c"
    for k in range(len(data) + 1):
        clip = Clip(write=write)
        out, events = feed_all(OutputTracker(clipboard=clip), [data[:k], data[k:]])
        assert out == (b"a" + KITTY_WRITE + b"bc" if write else b"abc"), k
        assert clip.asked == [(False, False), (True, False)], k
        whats = [(e.what, e.passed) for e in events if isinstance(e, ClipboardSequence)]
        assert whats == [
            ("osc5522", write),
            ("osc5522 data", write),
            ("osc5522 end", write),
            ("osc5522", False),
        ]


def test_kitty_write_start_with_controls_is_decided_before_its_data() -> None:
    data = b"\x1b\x00]5522;type=write\x07\x1b]5522;type=wdata:mime=eA==;QQ==\x07z"
    clip = Clip(write=True)
    out, _ = feed_all(OutputTracker(clipboard=clip, own_focus=True), [data])
    assert out == data
