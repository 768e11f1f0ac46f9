"""cuewrap.term.focus: the incremental focus-report input filter (docs/design.md#presence)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuewrap.term.focus import FocusFilter, FocusReport, HostStatusReply, Item

pytestmark = pytest.mark.unit

ESC = b"\x1b"
IN = FocusReport("in")
OUT = FocusReport("out")
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
STATUS = b"\x1b]7501;"


def normalize(items: list[Item]) -> list[Item]:
    """Join adjacent data items, drop empty ones."""
    out: list[Item] = []
    for it in items:
        if isinstance(it, bytes):
            if not it:
                continue
            if out and isinstance(out[-1], bytes):
                out[-1] = out[-1] + it
                continue
        out.append(it)
    return out


def run(chunks: list[bytes], flush: bool = True) -> tuple[list[Item], FocusFilter]:
    f = FocusFilter()
    items: list[Item] = []
    for c in chunks:
        items.extend(f.feed(c))
    if flush:
        items.extend(f.flush())
    return items, f


def reference(data: bytes) -> list[Item]:
    """Slow whole-stream model of the filter."""
    items: list[Item] = []
    buf = bytearray()
    paste = False
    i = 0
    while i < len(data):
        if paste:
            if data.startswith(PASTE_END, i):
                paste = False
                buf += PASTE_END
                i += len(PASTE_END)
                continue
        else:
            if data.startswith(b"\x1b[I", i) or data.startswith(b"\x1b[O", i):
                if buf:
                    items.append(bytes(buf))
                    buf.clear()
                items.append(IN if data[i + 2] == ord("I") else OUT)
                i += 3
                continue
            if data.startswith(PASTE_START, i):
                paste = True
                buf += PASTE_START
                i += len(PASTE_START)
                continue
            if data.startswith(STATUS, i):
                buf += STATUS
                items.append(bytes(buf))
                buf.clear()
                items.append(HostStatusReply())
                i += len(STATUS)
                continue
        buf.append(data[i])
        i += 1
    if buf:
        items.append(bytes(buf))
    return items


# --- examples -------------------------------------------------------------------------------


def test_plain_data_passes_in_one_item() -> None:
    f = FocusFilter()
    assert f.feed(b"hello world\r") == [b"hello world\r"]
    assert not f.pending


def test_focus_reports_are_removed() -> None:
    items, _ = run([b"ab\x1b[Icd\x1b[Oef"])
    assert items == [b"ab", IN, b"cd", OUT, b"ef"]


def test_report_alone_and_back_to_back() -> None:
    assert run([b"\x1b[O"])[0] == [OUT]
    assert run([b"\x1b[I\x1b[O\x1b[I"])[0] == [IN, OUT, IN]


def test_report_split_across_feeds() -> None:
    f = FocusFilter()
    assert f.feed(b"x\x1b") == [b"x"]
    assert f.pending
    assert f.feed(b"[") == []
    assert f.pending
    assert f.feed(b"Oy") == [OUT, b"y"]
    assert not f.pending


def test_flush_after_lone_esc_returns_it() -> None:
    f = FocusFilter()
    assert f.feed(b"\x1b") == []
    assert f.pending
    assert f.flush() == [b"\x1b"]
    assert not f.pending
    assert f.flush() == []


def test_flush_releases_esc_bracket_unchanged() -> None:
    f = FocusFilter()
    assert f.feed(b"\x1b[") == []
    assert f.flush() == [b"\x1b["]
    # after the timeout the prefix was data: what follows is data too (not a report)
    assert f.feed(b"O") == [b"O"]


def test_escape_key_then_report() -> None:
    """ESC ESC [ O: the first ESC is the Escape key, then a focus-out report."""
    assert run([b"\x1b\x1b[O"])[0] == [b"\x1b", OUT]
    assert run([b"\x1b", b"\x1b[O"])[0] == [b"\x1b", OUT]
    assert run([b"\x1b", b"\x1b", b"[", b"O"])[0] == [b"\x1b", OUT]


def test_other_sequences_pass_immediately() -> None:
    f = FocusFilter()
    assert f.feed(b"\x1b[A") == [b"\x1b[A"]  # arrow key
    assert f.feed(b"\x1b[1;5C") == [b"\x1b[1;5C"]
    assert f.feed(b"\x1bOP") == [b"\x1bOP"]  # F1 (SS3), not CSI O
    assert f.feed(b"\x1b[<0;10;5M") == [b"\x1b[<0;10;5M"]  # SGR mouse
    assert f.feed(b"\x1bx") == [b"\x1bx"]  # Alt+x
    assert not f.pending


def test_only_esc_and_esc_bracket_are_held() -> None:
    for tail in (b"\x1b[2", b"\x1b[20", b"\x1b[200", b"\x1b]", b"\x1b]7501", b"\x1b[1"):
        f = FocusFilter()
        assert f.feed(b"a" + tail) == [b"a" + tail], tail
        assert not f.pending


def test_bracketed_paste_keeps_focus_like_bytes() -> None:
    data = PASTE_START + b"x\x1b[Oy\x1b[I" + PASTE_END + b"\x1b[I"
    items, f = run([data])
    assert items == [PASTE_START + b"x\x1b[Oy\x1b[I" + PASTE_END, IN]
    assert not f.in_paste


def test_in_paste_flag() -> None:
    f = FocusFilter()
    f.feed(b"\x1b[200~abc")
    assert f.in_paste
    assert f.feed(b"\x1b[O") == [b"\x1b[O"]
    assert not f.pending
    f.feed(b"\x1b[201~")
    assert not f.in_paste


def test_paste_markers_split_across_feeds() -> None:
    chunks = [b"\x1b[2", b"00", b"~a\x1b[O", b"b\x1b[20", b"1", b"~\x1b[O"]
    items, f = run(chunks)
    assert normalize(items) == [b"\x1b[200~a\x1b[Ob\x1b[201~", OUT]
    assert not f.in_paste


def test_paste_end_split_byte_by_byte() -> None:
    data = PASTE_START + b"\x1b[I" + PASTE_END + b"\x1b[O"
    items, _ = run([bytes([b]) for b in data])
    assert normalize(items) == [PASTE_START + b"\x1b[I" + PASTE_END, OUT]


def test_host_status_reply_passes_through() -> None:
    items, _ = run([b"\x1b]7501;?\x1b\\"])
    assert items == [b"\x1b]7501;", HostStatusReply(), b"?\x1b\\"]


def test_host_status_reply_split_prefix() -> None:
    for cut in range(1, len(STATUS)):
        data = b"k" + STATUS + b"state=x\x1b\\"
        items, _ = run([data[: cut + 1], data[cut + 1 :]])
        assert normalize(items) == [b"k" + STATUS, HostStatusReply(), b"state=x\x1b\\"], cut


def test_host_status_inside_paste_is_data() -> None:
    items, _ = run([PASTE_START + STATUS + PASTE_END])
    assert items == [PASTE_START + STATUS + PASTE_END]


def test_large_chunk_is_one_item() -> None:
    data = b"x" * 100_000
    assert FocusFilter().feed(data) == [data]


# --- properties -----------------------------------------------------------------------------

TOKENS = st.one_of(
    st.binary(max_size=6),
    st.sampled_from(
        [
            b"\x1b",
            b"\x1b[",
            b"[",
            b"I",
            b"O",
            b"\x1b[I",
            b"\x1b[O",
            PASTE_START,
            PASTE_END,
            b"\x1b[2",
            b"00~",
            b"01~",
            STATUS,
            b"\x1b]75",
            b"01;",
            b"\x1b\\",
            b"\x1b[A",
            b"\x1bO",
            "é✓".encode(),
        ]
    ),
)
STREAMS = st.lists(TOKENS, max_size=40).map(b"".join)


@st.composite
def stream_and_splits(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    data = draw(STREAMS)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    return data, chunks


def strip_reports(items: list[Item]) -> bytes:
    return b"".join(i for i in items if isinstance(i, bytes))


@settings(max_examples=600)
@given(stream_and_splits())
def test_any_split_equals_reference(case: tuple[bytes, list[bytes]]) -> None:
    data, chunks = case
    items, f = run(chunks)
    expected = reference(data)
    assert normalize(items) == expected
    assert not f.pending
    # same reports, same order; data == input minus exactly those reports
    assert [i for i in items if not isinstance(i, bytes)] == [
        i for i in expected if not isinstance(i, bytes)
    ]
    assert strip_reports(items) == strip_reports(expected)


@settings(max_examples=400)
@given(stream_and_splits(), st.lists(st.booleans(), max_size=12))
def test_no_data_lost_or_duplicated_even_with_flushes(
    case: tuple[bytes, list[bytes]], flushes: list[bool]
) -> None:
    """Flushing mid-stream may turn a report into data, but never loses or adds a byte."""
    data, chunks = case
    f = FocusFilter()
    items: list[Item] = []
    for n, c in enumerate(chunks):
        items.extend(f.feed(c))
        if n < len(flushes) and flushes[n]:
            items.extend(f.flush())
    items.extend(f.flush())
    rebuilt = b"".join(
        i if isinstance(i, bytes) else (b"\x1b[I" if i == IN else b"\x1b[O")
        for i in items
        if not isinstance(i, HostStatusReply)
    )
    assert rebuilt == data


@given(STREAMS)
def test_one_data_item_between_reports(data: bytes) -> None:
    items = FocusFilter().feed(data)
    for a, b in itertools.pairwise(items):
        assert not (isinstance(a, bytes) and isinstance(b, bytes))
    assert all(i != b"" for i in items)


@given(STREAMS)
def test_pending_means_esc_prefix_held(data: bytes) -> None:
    f = FocusFilter()
    items = f.feed(data)
    if f.pending:
        assert data.endswith(b"\x1b") or data.endswith(b"\x1b[")
        assert not f.in_paste
    held = f.flush()
    assert strip_reports(items) + strip_reports(held) == strip_reports(reference(data))
