"""cuewrap.term.tracker: the short paths (Pi's frames, a TUI's flood) give exactly what the
general path gives, and the chunks they are meant for take them."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trackerref import (
    DONE,
    PI_FRAME,
    WORKING,
    Always,
    Clip,
    check_against_reference,
    examples,
    splits,
)

from cuewrap.term import tracker
from cuewrap.term.modeguard import ModeGuard
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import (
    OutputTracker,
)

pytestmark = pytest.mark.unit


# --- the plain path: Pi's frames skip the per-sequence work ----------------------------------

# what frames every TUI's drawing: synchronized output on and off, the cursor hidden and
# shown, a cursor move, a line cleared
FRAMING = [b"\x1b[?2026h", b"\x1b[?2026l", b"\x1b[?25l", b"\x1b[?25h", b"\x1b[12;1H", b"\x1b[2K"]

# pieces of Pi's streaming frames (CSI cursor moves and colours, quiet toggles, a hyperlink
# reset ending each line, hyperlinks ended by ST) and, rarer, whatever makes a chunk not plain
PI_PIECES = st.sampled_from(
    [
        *FRAMING,
        b"\x1b[0m\x1b]8;;\x07",
        b"\x1b[38;2;129;161;193m",
        b"\x1b[22;39m",
        b"\x1b]8;;https://example.org/a\x1b\\link\x1b]8;;\x1b\\",
        b"\x1b]8;id=1;x\x07",
        b"\x1b(B",
        b"\x1b7",
        b"\x1b\\",
        "── ⠋ Working ───".encode(),
        b" word12 word13 ",
        b"\xe2\x94",
        b"\x80",
    ]
)
PI_RARE = st.sampled_from(
    [
        b"\x07",
        b"\x18",
        b"\x1b",
        b"\x1b]",
        b"\x1b]8",
        b"\x1b[?20",
        b"\x1b[?1004h",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
        b"\x1b[?2026$p",
        b"\x1b[>1u",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[>4;2m",
        b"\x1bc",
        b"\x1b[!p",
        b"\x1b]0;\xcf\x80 - work\x07",
        b"\x1b]9;4;3\x07",
        WORKING,
        DONE,
        b"\x1b]52;c;QQ==\x07",
        b"\x1b\x00]52;c;QQ==\x07",
        b"\x1b]8;;\x18\x07",
        b"\x1bP1$r0m\x1b\\",
    ]
)
# whole frames too: several toggles of a mode in a chunk that ends like Pi's
PI_FRAMES = st.lists(PI_PIECES, max_size=12).map(
    lambda ps: b"\x1b[?2026h" + b"".join(ps) + b"\x1b[?2026l"
)
PI_STREAMS = st.lists(
    st.one_of(PI_PIECES, PI_PIECES, PI_PIECES, PI_FRAMES, PI_RARE), max_size=30
).map(b"".join)


@contextlib.contextmanager
def general_path_only() -> Iterator[None]:
    """Both short paths off: the Pi path's search always finds, the flood path is not tried."""
    with (
        patch.object(tracker, "_INTERESTING", re.compile(b"")),
        patch.object(tracker, "_FLOOD_PATH", False),
    ):
        yield


def tracker_state(t: OutputTracker) -> tuple[object, ...]:
    return (
        t.modes.on,
        t.modes.off,
        t.modes.kitty_keyboard_depth,
        t.modes.modify_other_keys,
        t.title,
        t.progress,
        t.held,
        t.safe,
        t._pend,
        t.held_bytes,
        t._u8,
        t._stream,
    )


def scans_and_states(t: OutputTracker, chunks: list[bytes]) -> list[object]:
    """Every Scan ``t`` gives for ``chunks`` and its flush, each followed by its state."""
    seen: list[object] = []
    for c in chunks:
        seen.append(t.feed(c))
        seen.append(tracker_state(t))
    seen.append(t.flush())
    seen.append(tracker_state(t))
    return seen


def assert_same_as_general_path(make: Callable[[], OutputTracker], chunks: list[bytes]) -> None:
    """A tracker from ``make`` gives the same Scans and states with its short paths as with
    the general path alone."""
    short = scans_and_states(make(), chunks)
    with general_path_only():
        general = scans_and_states(make(), chunks)
    assert short == general


@examples(400)
@given(splits(PI_STREAMS), st.booleans(), st.booleans(), st.booleans())
def test_plain_path_equals_general_path(
    chunks: list[bytes], own_focus: bool, guard: bool, consume: bool
) -> None:
    """Pi-like streams cut anywhere: every Scan and the state after each chunk are the same
    with the plain path and with the general path alone (a search that always finds)."""

    assert_same_as_general_path(
        lambda: OutputTracker(
            StatusGuard(consume=consume), own_focus=own_focus, clipboard=Clip() if guard else None
        ),
        chunks,
    )


@examples(300)
@given(splits(PI_STREAMS))
def test_pi_like_streams_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@pytest.mark.parametrize(
    "frame",
    [
        PI_FRAME,
        b"\x1b[?2026h\x1b[18;1H\x1b[2K 67: word0 word1\x1b[0m\x1b]8;;\x07\x1b[21;1H"
        b"\x1b[?25l\x1b[?2026l",
    ],
)
def test_pi_frames_take_the_plain_path(frame: bytes) -> None:
    """Not vacuous: Pi's frames are what the plain path is for; the general path is only
    taken when the search finds something (here, forced)."""
    assert tracker._INTERESTING.search(frame) is None
    assert frame.count(b"\x07") == frame.count(b"\x1b]8;;\x07")
    t = OutputTracker(own_focus=True, clipboard=Clip())
    t.modes.on.add(2026)
    s = t.feed(frame)
    assert s == (frame, [], True)
    assert 2026 in t.modes.off and 25 in t.modes.off and not t.modes.on


@pytest.mark.parametrize(
    ("chunk", "on", "off"),
    [
        (b"\x1b[?25h x\x1b[?25l\x1b[?2026l", set(), {25, 2026}),
        (b"\x1b[?25l x\x1b[?25h\x1b[?2026l", {25}, {2026}),
        (b"\x1b[?2026l\x1b[?25l x\x1b[?2026h y\x1b[?25h", {25, 2026}, set()),
        (b"\x1b[?2026h\x1b[1m x\x1b[?2026l\x1b[?2026h\x1b[?2", {2026}, set()),
    ],
)
def test_plain_path_last_toggle_wins(chunk: bytes, on: set[int], off: set[int]) -> None:
    for forced in (False, True):
        t = OutputTracker(own_focus=True, clipboard=Clip())
        if forced:
            with general_path_only():
                t.feed(chunk)
        else:
            t.feed(chunk)
        assert (t.modes.on, t.modes.off) == (on, off)


# --- the flood path: chunks without OSC skip the per-sequence work ---------------------------

# a TUI drawing with colours and cursor moves only (as scripts/bench's flood), text with the
# bytes the flood path looks for ("?", "<", "=", ">", "!", "c"), and, rarer, whatever makes a
# chunk not plain (or is plain only if it is not taken for more than it is)
TUI_PIECES = st.sampled_from(
    [
        *FRAMING,
        b"\x1b[38;5;244m",
        b"\x1b[1;32m",
        b"\x1b[0m",
        b"\x1b[38;2;120;130;140m",
        "── ⠋ Working ".encode(),
        b" line 12 ok ",
        b"\xe2\x94",
        b"\x80",
        b"why? ",
        b"a<b c=d e>f ",
        b"wow! cc ",
        b"?2026h ?25l [?1049h ",
        b"\x1b(B",
        b"\x1b7",
        b"\x1b\\",
    ]
)
TUI_RARE = st.sampled_from(
    [
        b"\x07",
        b"\x18",
        b"\x1b",
        b"\x1b[",
        b"\x1b[?",
        b"\x1b[?20",
        b"\x1b[?2026",
        b"\x1b[?25",
        b"\x1b[?1004h",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
        b"\x1b[?20267h",
        b"\x1b[?2526h",
        b"\x1b[?2026$p",
        b"\x1b[?\x0025l",
        b"\x1b[>1u",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[>4;2m",
        b"\x1bc",
        b"\x1b[!p",
        b"\x1bP1$r0m\x1b\\",
        b"\x1b]0;\xcf\x80 - work\x07",
        b"\x1b]52;c;QQ==\x07",
        b"\x1b\x00]52;c;QQ==\x07",
        WORKING,
    ]
)
TUI_FRAMES = st.lists(TUI_PIECES, max_size=12).map(
    lambda ps: b"\x1b[?2026h\x1b[?25l" + b"".join(ps) + b"\x1b[?2026l"
)


def _one_in(plain: list[bytes], rare: bytes, at: int) -> bytes:
    return b"".join([*plain[:at], rare, *plain[at:]])


TUI_PLAIN = st.lists(st.one_of(TUI_PIECES, TUI_FRAMES), max_size=20)
# floods with rare pieces, and floods with one (its chunks are plain but the one holding it)
TUI_STREAMS = st.one_of(
    st.lists(st.one_of(TUI_PIECES, TUI_PIECES, TUI_FRAMES, TUI_FRAMES, TUI_RARE), max_size=30).map(
        b"".join
    ),
    st.builds(_one_in, TUI_PLAIN, TUI_RARE, st.integers(0, 20)),
)
# controls between ESC and "[": a CSI for a terminal, no event for the tracker (module
# docstring) nor in the byte-at-a-time reference's comparisons; both paths must agree on it
TUI_ODD = st.sampled_from([b"\x1b\x00[?1049h", b"\x1b\x7f[?2026l", b"\x1b\n[?25h"])
TUI_ODD_STREAMS = st.builds(_one_in, TUI_PLAIN, TUI_ODD, st.integers(0, 20))


@examples(500)
@given(
    splits(TUI_STREAMS | TUI_ODD_STREAMS),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, 0, 1]),
)
def test_flood_path_equals_general_path(
    chunks: list[bytes], own_focus: bool, guard: bool, consume: bool, notify: int | None
) -> None:
    """TUI floods cut anywhere: every Scan and the state after each chunk are the same with the
    flood path and with the general path alone, in every way cuewrap sets the tracker up."""

    assert_same_as_general_path(
        lambda: OutputTracker(
            StatusGuard(consume=consume),
            notices=None if notify is None else Always(bool(notify)),
            own_focus=own_focus,
            clipboard=Clip() if guard else None,
        ),
        chunks,
    )


@examples(300)
@given(splits(TUI_STREAMS), st.booleans())
def test_tui_floods_match_reference(chunks: list[bytes], consume: bool) -> None:
    check_against_reference(chunks, consume=consume)


@examples(200)
@given(splits(TUI_STREAMS), st.booleans())
def test_tui_floods_match_reference_with_clipboard_and_notices(
    chunks: list[bytes], answer: bool
) -> None:
    check_against_reference(chunks, consume=False, notices=Always(answer), clip=Clip())


def bench_flood_frames() -> list[bytes]:
    """The frames of scripts/bench's TUI flood (colours, cursor moves, quiet toggles)."""
    rows = [
        b"\x1b[%d;1H\x1b[2K\x1b[38;5;244m\xe2\x94\x80\xe2\x94\x80 \xe2\xa0\x8b Working\x1b[0m"
        b" \x1b[1;32mok\x1b[0m line %d \x1b[38;2;120;130;140mdim\x1b[39m" % (r, r)
        for r in range(1, 41)
    ]
    return [
        b"\x1b[?2026h\x1b[?25l" + b"".join(rows[i : i + n]) + b"\x1b[?2026l"
        for i, n in ((0, 14), (10, 22), (5, 18), (20, 16))
    ]


@pytest.mark.parametrize("frames", [1, 6])
@pytest.mark.parametrize("own_focus", [False, True])
def test_tui_flood_takes_the_flood_path(frames: int, own_focus: bool) -> None:
    """Not vacuous: the flood's chunks (one frame, or several gathered) never reach the general
    path's per-sequence work, and what they do is still tracked; text with "?" and the other
    bytes looked for does not send a chunk to the general path either."""
    chunk = b"".join(bench_flood_frames()[:frames]) + b"\x1b[1;1Hwhy? a<b=c>d!\x1b[?2026l"
    cut = chunk.rindex(b"\x1b[1;1H") + 3  # inside a CSI, as a flood's reads are cut
    t = OutputTracker(own_focus=own_focus, clipboard=Clip())
    with patch.object(ModeGuard, "dec_starts", side_effect=AssertionError("general path")):
        for c in (chunk[:cut], chunk[cut:]):
            s = t.feed(c)
            assert s.events == []
        assert t.safe and not t._pend
    assert t.modes.off == {25, 2026}
    assert t.modes.on == set()
    with patch.object(ModeGuard, "dec_starts", side_effect=AssertionError("general path")):
        with pytest.raises(AssertionError):  # the patch would catch the general path
            t.feed(b"\x1b[?1049h")


@pytest.mark.parametrize(
    "rare",
    [
        b"\x1bc",
        b"\x1b[!p",
        b"\x07",
        b"\x1b[>1u",
        b"\x1b[>4;2m",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
    ],
)
@pytest.mark.parametrize("own_focus", [False, True])
def test_flood_chunk_with_one_rare_piece(rare: bytes, own_focus: bool) -> None:
    """A flood frame with one thing in it that gives an event, whole or cut inside the CSI
    after it: the flood path hands it to the general path (the same Scans and state)."""
    frame = bench_flood_frames()[0]
    at = frame.index(b"\x1b[2;1H")
    chunk = frame[:at] + rare + frame[at:]

    def run(chunks: list[bytes]) -> list[object]:
        t = OutputTracker(own_focus=own_focus, clipboard=Clip())
        if rare == b"\x1b[<u":
            t.feed(b"\x1b[>1u")  # one kitty keyboard entry pushed: a pop changes the state
        return [x for c in chunks for x in (t.feed(c), tracker_state(t))]

    for chunks in ([chunk], [chunk[: at + len(rare) + 3], chunk[at + len(rare) + 3 :]]):
        flood = run(chunks)
        with general_path_only():
            general = run(chunks)
        assert flood == general
        # not vacuous: the piece gives an event or changes the state (RIS and DECSTR only
        # matter when cuewrap owns the focus reporting)
        events = [e for s in general[::2] for e in s.events]  # type: ignore[attr-defined]
        state = general[-1]
        assert events or state != run([frame])[-1] or rare in (b"\x1bc", b"\x1b[!p")
        assert events or not own_focus or rare not in (b"\x1bc", b"\x1b[!p")
