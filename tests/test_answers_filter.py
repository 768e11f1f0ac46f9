"""cuewrap.term.answers: the host terminal's answers to cuewrap's start-up query, taken out of
the input (never the child's), however the reads split them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuewrap.term.answers import MAX_ANSWER, AnswerFilter, AnyItem, TerminalAnswer
from cuewrap.term.focus import FocusReport

pytestmark = pytest.mark.unit

IDENT = "cuewrap-q42"
XTV = b"\x1bP>|kitty(0.26.5)\x1b\\"
OSC99 = b"\x1b]99;i=cuewrap-q42:p=?;a=focus,report:p=title,body,?,close\x1b\\"
DA1 = b"\x1b[?62;22c"
ANSWERS = [
    TerminalAnswer("xtversion", "kitty(0.26.5)"),
    TerminalAnswer("osc99", "a=focus,report:p=title,body,?,close"),
    TerminalAnswer("da1", "?62;22c"),
]


def run(chunks: list[bytes], ident: str | None = IDENT) -> tuple[bytes, list[AnyItem]]:
    """(the data for the child, every non-data item) after feeding ``chunks`` and a final
    flush of everything."""
    f = AnswerFilter(ident)
    items: list[AnyItem] = []
    for c in chunks:
        items += f.feed(c)
    items += f.flush(everything=True)
    data = b"".join(i for i in items if isinstance(i, bytes))
    return data, [i for i in items if not isinstance(i, bytes)]


def test_answers_are_taken_out_and_returned_in_order() -> None:
    data, items = run([b"ab" + XTV + b"c" + OSC99 + DA1 + b"d"])
    assert data == b"abcd"
    assert items == ANSWERS


def test_the_childs_own_answers_after_the_sentinel_pass() -> None:
    # Pi asks DA1 (twice) and XTVERSION-like things of its own: those answers come after ours
    later = DA1 + b"\x1bP>|kitty(0.26.5)\x1b\\" + b"\x1b[?1u"
    data, items = run([XTV + DA1 + later])
    assert data == later
    assert items == [ANSWERS[0], ANSWERS[2]]


def test_focus_reports_are_still_taken_out() -> None:
    data, items = run([b"\x1b[O" + XTV + b"\x1b[I" + DA1 + b"\x1b[O"])
    assert data == b""
    assert items == [
        FocusReport("out"),
        ANSWERS[0],
        FocusReport("in"),
        ANSWERS[2],
        FocusReport("out"),
    ]


def test_bel_ends_an_answer_too() -> None:
    data, items = run([b"\x1b]99;i=cuewrap-q42:p=?;p=title\x07x" + DA1])
    assert data == b"x"
    assert items == [TerminalAnswer("osc99", "p=title"), ANSWERS[2]]


def test_an_osc99_answer_with_another_id_is_the_childs() -> None:
    other = b"\x1b]99;i=pi-1:p=?;p=title\x1b\\"
    data, items = run([other + DA1])
    assert data == other and items == [ANSWERS[2]]


def test_without_the_osc99_query_its_answer_is_not_expected() -> None:
    data, items = run([OSC99 + DA1], ident=None)
    assert data == OSC99 and items == [ANSWERS[2]]


def test_typing_that_begins_like_an_answer_is_not_swallowed_with_it() -> None:
    typed = b"\x1bP>|ab"  # Alt+P > | a b, right before the real answer
    data, items = run([typed + XTV + DA1])
    assert data == typed and items == [ANSWERS[0], ANSWERS[2]]


def test_keys_that_look_like_a_start_are_data() -> None:
    # Alt+P, Alt+], an arrow key (SS3), ESC [ ? followed by something other than digits + c
    keys = b"\x1bPx\x1b]a\x1bOA\x1b[?25h"
    data, items = run([keys])
    assert data == keys and items == []


def test_a_lone_escape_is_released_by_a_plain_flush() -> None:
    f = AnswerFilter(IDENT)
    assert f.feed(b"\x1b") == []
    assert f.pending
    assert f.flush() == [b"\x1b"]  # the user's Escape: within the child's ESC timeout


def test_a_partial_answer_waits_past_a_plain_flush() -> None:
    f = AnswerFilter(IDENT)
    assert f.feed(b"\x1bP>|kit") == []
    assert f.flush() == [] and f.pending  # an answer on its way: held on
    assert f.feed(b"ty(0.26.5)\x1b\\") == [ANSWERS[0]]
    assert not f.pending


def test_a_partial_answer_is_released_by_flush_everything() -> None:
    f = AnswerFilter(IDENT)
    f.feed(b"\x1b[?62")
    assert f.flush(everything=True) == [b"\x1b[?62"]


def test_stop_closes_the_query_and_releases_what_was_held() -> None:
    f = AnswerFilter(IDENT)
    f.feed(b"\x1bP>|kit")
    f.stop()
    assert f.flush() == [b"\x1bP>|kit"]
    assert f.feed(XTV) == [XTV]  # no longer taken out


def test_something_too_long_to_be_an_answer_is_data() -> None:
    junk = b"\x1bP>|" + b"x" * (MAX_ANSWER + 10)
    data, items = run([junk[:600], junk[600:], DA1])
    assert data == junk and items == [ANSWERS[2]]


def test_after_the_sentinel_the_filter_is_the_focus_filter() -> None:
    f = AnswerFilter(IDENT)
    assert f.feed(DA1) == [ANSWERS[2]]
    assert not f.active
    assert f.feed(b"x\x1b[Iy") == [b"x", FocusReport("in"), b"y"]


STREAM = b"ab\x1b[I" + XTV + b"\x1b" + b"x" + OSC99 + b"\x1b[O" + DA1 + DA1 + b"z"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=6))
def test_any_split_gives_the_same_result(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    data, items = run(chunks)
    assert data == b"ab\x1bx" + DA1 + b"z"
    assert items == [FocusReport("in"), ANSWERS[0], ANSWERS[1], FocusReport("out"), ANSWERS[2]]


KEYS = [b"a", b"1", b";", b"?", b"[", b">", b"|", b"\x1b", b"\x1b[A", b"\x1bOA", b"\x1bP", b"\x1b]"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(KEYS), max_size=12),
    st.lists(st.integers(min_value=0, max_value=80), max_size=4),
)
def test_typing_is_never_lost_or_taken(keys: list[bytes], cuts: list[int]) -> None:
    """What the user types around the answers (Escape, arrows, Alt+P, Alt+]) reaches the child
    whole and in order, in any split; only the answer is taken."""
    typed = b"".join(keys)
    stream = typed + XTV + typed + DA1 + typed
    points = sorted({c for c in cuts if c <= len(stream)})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    data, items = run(chunks)
    assert data == typed * 3
    assert items == [ANSWERS[0], ANSWERS[2]]
