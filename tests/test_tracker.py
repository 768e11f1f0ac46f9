"""cuewrap.term.tracker: the incremental output scanner — modes, title, bell, safe points, and
the scanner against its byte-at-a-time reference (tests/trackerref.py) on generated streams
split at random. The clipboard guard, the sequence guard, OSC 7501 and the short paths have
files of their own (tests/test_tracker_*.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trackerref import (
    LONG,
    PI_EXIT,
    PI_FRAME,
    PI_STARTUP,
    QUERY,
    ST,
    TOKENS,
    WORKING,
    Always,
    check_against_reference,
    examples,
    expected,
    feed_all,
    splits,
)

from cuewrap.facts import ChildProgress, ProgramStatus
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import (
    CAP,
    Bell,
    ModeChange,
    OutputTracker,
    TitleChange,
)

pytestmark = pytest.mark.unit


# --- modes, title, bell -----------------------------------------------------------------------


def test_pi_startup_modes_and_title() -> None:
    t = OutputTracker()
    s = t.feed(PI_STARTUP)
    assert s.out == PI_STARTUP  # the query is not a report: passes through
    assert s.safe
    modes = [(e.mode, e.on) for e in s.events if isinstance(e, ModeChange)]
    assert modes == [
        (1049, True),
        (7, False),
        (1000, True),
        (1002, True),
        (1003, True),
        (1006, True),
        (1004, True),
        (2004, True),
        (2031, True),
    ]
    assert s.events[-1] == TitleChange("π - work")
    assert t.title == "π - work"
    assert t.modes.on == {1049, 1000, 1002, 1003, 1006, 1004, 2004, 2031}
    assert t.modes.off == {7}
    assert t.modes.kitty_keyboard_depth == 1
    assert t.modes.modify_other_keys
    assert not any(isinstance(e, ProgramStatus) for e in s.events)


def test_restore_after_pi_startup() -> None:
    t = OutputTracker()
    t.feed(PI_STARTUP + PI_FRAME[:20])  # killed in the middle of a frame
    r = t.modes.restore_sequence()
    assert r.startswith(b"\x1b[?2026l")  # end the frame first
    for piece in (
        b"\x1b[<1u",
        b"\x1b[>4;0m",
        b"\x1b[?1000l",
        b"\x1b[?1002l",
        b"\x1b[?1003l",
        b"\x1b[?1006l",
        b"\x1b[?1004l",
        b"\x1b[?2004l",
        b"\x1b[?2031l",
        b"\x1b[?7h",
        b"\x1b[?25h",
    ):
        assert piece in r, piece
    assert r.endswith(b"\x1b[?1049l")  # leave the alt screen last
    assert r.index(b"\x1b[<1u") < r.index(b"\x1b[?1049l")  # kitty stack is per screen


def test_restore_empty_after_clean_exit() -> None:
    t = OutputTracker()
    assert t.modes.restore_sequence() == b""
    t.feed(PI_STARTUP + PI_FRAME + PI_EXIT)
    assert t.modes.on == {7, 25}  # explicitly set back on: their defaults
    assert not t.modes.off & {7, 25}
    assert t.modes.kitty_keyboard_depth == 0
    assert not t.modes.modify_other_keys
    assert t.modes.restore_sequence() == b""


def test_regular_mode_has_no_focus_or_alt_screen() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[?2004h\x1b[>7u\x1b]0;\xcf\x80 - work\x07")
    assert t.modes.restore_sequence() == b"\x1b[<1u\x1b[?2004l"


def test_restore_alt_screen_variants_and_cursor() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[?47h\x1b[?25l\x1b[?1h")
    assert t.modes.restore_sequence() == b"\x1b[?1l\x1b[?25h\x1b[?47l"
    t = OutputTracker()
    t.feed(b"\x1b[?1047h\x1b[?1049h\x1b[?1049l")
    assert t.modes.restore_sequence() == b"\x1b[?1047l"


def test_several_modes_in_one_csi() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1000;1006;;1004h")
    assert s.events == [ModeChange(1000, True), ModeChange(1006, True), ModeChange(1004, True)]
    s = t.feed(b"\x1b[?1000;1006l")
    assert t.modes.on == {1004}


def test_malformed_private_csi_ignored() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1049$p\x1b[?10a49h\x1b[?1049x\x1b[1049h\x1b[?999999h")
    assert s.events == []  # DECRQM, bad param, other final, ANSI mode, out of range
    assert t.modes.on == set()


def test_c0_inside_csi_is_executed() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?10\r\n49h")
    assert s.events == [ModeChange(1049, True)]
    assert s.out == b"\x1b[?10\r\n49h"


def test_can_aborts_a_sequence() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1049\x18h\x1b]0;x\x1ay\x07")
    assert s.events == [Bell()]  # the CSI and the OSC were cancelled; the BEL is bare
    assert t.modes.on == set()


def test_kitty_keyboard_stack() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[>1u\x1b[>3u\x1b[>31u")
    assert t.modes.kitty_keyboard_depth == 3
    t.feed(b"\x1b[<2u")
    assert t.modes.kitty_keyboard_depth == 1
    t.feed(b"\x1b[<u")
    assert t.modes.kitty_keyboard_depth == 0
    t.feed(b"\x1b[<5u")
    assert t.modes.kitty_keyboard_depth == 0
    t.feed(b"\x1b[=5;1u")
    assert t.modes.kitty_keyboard_depth == 1
    assert t.modes.restore_sequence() == b"\x1b[<1u"
    t.feed(b"\x1b[?u")  # query: no change
    assert t.modes.kitty_keyboard_depth == 1


def test_kitty_stack_changes_apply_in_stream_order() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[<u\x1b[?25l\x1b[>1u")  # pop (nothing to pop), then push
    assert t.modes.kitty_keyboard_depth == 1
    t.feed(b"\x1b[>1u\x1b[=0u\x1b[<2u\x1b[>1u\x1b[?25h")
    assert t.modes.kitty_keyboard_depth == 1


def test_modify_other_keys() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[>4;2m")
    assert t.modes.modify_other_keys
    t.feed(b"\x1b[>4;0m")
    assert not t.modes.modify_other_keys
    t.feed(b"\x1b[>4;1m")
    t.feed(b"\x1b[>4m")
    assert not t.modes.modify_other_keys
    t.feed(b"\x1b[>4;1m\x1b[>1;2m")  # modifyCursorKeys: no effect
    assert t.modes.modify_other_keys
    assert t.modes.restore_sequence() == b"\x1b[>4;0m"


def test_title_osc0_and_osc2_bel_or_st() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b]0;one\x07\x1b]2;two\x1b\\\x1b]1;icon\x07\x1b]2;bad\xff\x07")
    assert s.events == [TitleChange("one"), TitleChange("two"), TitleChange("bad\ufffd")]
    assert t.title == "bad\ufffd"


def test_title_split_across_chunks_passes_through() -> None:
    t = OutputTracker()
    a = t.feed(b"x\x1b]0;\xcf")
    assert a.out == b"x\x1b]0;\xcf" and a.events == [] and not a.safe
    b = t.feed(b"\x80 - wo")
    assert b.out == b"\x80 - wo" and b.events == [] and not b.safe
    c = t.feed(b"rk\x07y")
    assert c.out == b"rk\x07y" and c.events == [TitleChange("π - work")] and c.safe


def test_title_split_inside_st() -> None:
    t = OutputTracker()
    a = t.feed(b"\x1b]2;name\x1b")
    assert a.out == b"\x1b]2;name\x1b"  # an ESC inside an open OSC is not held
    assert not t.held
    b = t.feed(b"\\")
    assert b.events == [TitleChange("name")] and b.safe


def test_bell_only_in_ground() -> None:
    t = OutputTracker()
    s = t.feed(b"a\x07\x1b]0;t\x07\x1bP\x07\x1b\\\x1b[1\x07m\x07")
    assert s.events == [Bell(), TitleChange("t"), Bell()]


def test_bell_after_split_osc() -> None:
    t = OutputTracker()
    assert t.feed(b"\x1b]0;ab").events == []
    assert t.feed(b"c\x07\x07").events == [TitleChange("abc"), Bell()]


# --- safe points ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "safe"),
    [
        (b"plain", True),
        (b"\x1b[38;5;1", False),
        (b"\x1b[38;5;1m", True),
        (b"\x1b]0;title", False),
        (b"\x1bP1$r", False),
        (b"\x1bPq#0\x07", False),  # BEL does not end a DCS
        (b"\x1b_Gf=1", False),
        (b"\x1b(", False),
        (b"\x1b(B", True),
        (b"\x1b7", True),
        (b"\xcf", False),
        (b"\xe2\x94", False),
        (b"\xe2\x94\x80", True),
        (b"\xf0\x9f\x98", False),
        (b"\xf0\x9f\x98\x80", True),
        (b"\x80\x80", True),  # stray continuation bytes
        (b"\x1b[1\xe2", False),  # non-ASCII aborts the CSI, then starts a character
        (b"\x1b\xc3\xa9", True),
        (b"\x1b\n", False),  # C0 after ESC: still in the escape
        (b"\x1b[?1049h\x1b[?2026h", True),
    ],
)
def test_safe_examples(data: bytes, safe: bool) -> None:
    t = OutputTracker(StatusGuard(consume=False))
    assert t.feed(data).safe is safe
    assert t.safe is safe


def test_safe_across_chunks_utf8() -> None:
    t = OutputTracker()
    assert not t.feed(b"ab\xe2").safe
    assert not t.feed(b"\x94").safe
    assert t.feed(b"\x80").safe
    assert not t.feed(b"\xf0").safe
    assert not t.feed(b"\x9f\x98").safe
    assert t.feed(b"\x80 ok").safe


def test_empty_feed_keeps_state() -> None:
    t = OutputTracker()
    assert not t.feed(b"\x1b[1").safe
    s = t.feed(b"")
    assert s.out == b"" and not s.safe and s.events == []


def test_long_sequences_bounded() -> None:
    t = OutputTracker()
    big = b"\x1bPq" + b"#" * 100_000
    s = t.feed(big)
    assert s.out == big and not s.safe
    s = t.feed(b"#" * 10 + ST + b"x")
    assert s.safe
    assert len(t._pend) <= CAP


def test_long_title_is_given_up_whole_or_split() -> None:
    osc = b"\x1b]0;" + b"x" * (CAP + 10) + b"\x07"
    assert OutputTracker().feed(osc).events == []
    t = OutputTracker()
    assert feed_all(t, [osc[:100], osc[100:]]) == (osc, [])


def test_reference_agrees_on_examples() -> None:
    out, ref = expected(b"a" + WORKING + b"\x1b[?1049h\x07" + QUERY, True)
    assert out == b"a\x1b[?1049h\x07" + QUERY
    assert ref.events == [
        ProgramStatus("working", "pi", None, True),
        ModeChange(1049, True),
        Bell(),
    ]


@examples(800)
@given(splits())
def test_any_split_matches_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@examples(300)
@given(splits())
def test_any_split_matches_reference_without_consuming(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=False)


@examples(500)
@given(splits(), st.booleans(), st.booleans())
def test_any_split_matches_reference_with_notices(
    chunks: list[bytes], consume: bool, answer: bool
) -> None:
    check_against_reference(chunks, consume=consume, notices=Always(answer))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(splits(st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4).map(b"".join), False))
def test_long_sequences_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60)))
def test_random_bytes_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@examples(300)
@given(splits())
def test_split_equals_whole(chunks: list[bytes]) -> None:
    data = b"".join(chunks)
    whole = feed_all(OutputTracker(), [data])
    assert feed_all(OutputTracker(), chunks) == whole


def test_child_progress_reported_on_change_only() -> None:
    """Pi's own OSC 9;4 (terminal.showTerminalProgress) repeats every second: one event per
    change of state, never a notification."""
    t = OutputTracker()
    busy, off = b"\x1b]9;4;3\x07", b"\x1b]9;4;0\x07"
    assert t.feed(busy + b"x" + busy).events == [ChildProgress(3)]
    assert t.feed(busy).events == []
    scan = t.feed(off + b"\x1b]9;4;x\x07")
    assert scan.events == [ChildProgress(0)]
    assert scan.out == off + b"\x1b]9;4;x\x07"  # passed through unchanged
