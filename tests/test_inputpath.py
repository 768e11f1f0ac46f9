"""The input path alone (relay/inputpath.py): the host's input read into steps, in order. The
relay's tests (test_relay_pty.py, test_status_passon.py, test_answer.py's typing tests) hold
the same through real PTYs."""

from __future__ import annotations

import contextlib
import os
import select

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuewrap.relay.inputpath import KEYSTROKE, STATUS_ON, InputPath
from cuewrap.term import sequences as seq
from cuewrap.term.answers import AnswerFilter, TerminalAnswer
from cuewrap.term.focus import FocusFilter, FocusReport

pytestmark = pytest.mark.unit


class Path:
    """What the input path asks of the output path."""

    def __init__(self, modes: set[int] | None = None, telling: bool = False) -> None:
        self.modes = {1004} if modes is None else modes
        self.telling = telling
        self.typed_count = 0

    def child_mode(self, mode: int) -> bool:
        return mode in self.modes

    def typed(self) -> None:
        self.typed_count += 1


def test_typed_bytes_go_to_the_child_and_the_read_counts_once_as_a_keystroke() -> None:
    p, path = InputPath(FocusFilter()), Path()
    steps = p.feed(b"ab\x1b[Icd", path)
    assert steps == [b"ab", seq.FOCUS_IN, FocusReport("in"), b"cd", KEYSTROKE]
    assert path.typed_count == 1


def test_a_focus_report_is_the_childs_only_where_it_asked_and_cuewrap_does_not_tell_it() -> None:
    for modes, telling, child in (({1004}, False, True), (set(), False, False),
                                  ({1004}, True, False)):  # fmt: skip
        p, path = InputPath(FocusFilter()), Path(modes, telling)
        steps = p.feed(b"\x1b[O", path)
        assert (seq.FOCUS_OUT in steps) is child, (modes, telling)
        assert FocusReport("out") in steps and KEYSTROKE not in steps  # a report is no key
        assert path.typed_count == 0
        assert p.host_focus == "out"
        assert p.still_out(path) is child


def test_the_hosts_status_answer_turns_reports_on_before_the_cue_side_hears_it() -> None:
    p, path = InputPath(AnswerFilter()), Path()
    steps = p._steps([TerminalAnswer("osc7501", "?"), TerminalAnswer("da1", "?62;c")], path)
    assert steps == [STATUS_ON, TerminalAnswer("osc7501", "?"), TerminalAnswer("da1", "?62;c")]


def test_a_held_escape_goes_out_at_the_flush_and_keys_wait_meanwhile() -> None:
    p, path = InputPath(FocusFilter()), Path()
    assert p.feed(b"\x1b", path) == [] and p.pending
    assert p.busy is not None  # cuewrap's own keys wait for the input to be at a safe point
    assert p.flush(path) == [b"\x1b", KEYSTROKE]
    assert not p.pending and p.busy is None


def test_a_failed_filter_gives_back_what_it_held_and_the_input_passes_as_it_comes() -> None:
    p, path = InputPath(FocusFilter()), Path()
    p.feed(b"\x1b", path)
    assert p.drop_filter() == b"\x1b"
    assert p.feed(b"\x1b[I", path) == [b"\x1b[I"]  # no filter: as it came
    assert not p.pending and p.busy is None and p.flush(path) == []


_KEYS = st.lists(st.sampled_from([b"a", b"\x1b", b"[", b"I", b"O", b"200~", b"201~", b"]7501;",
                                  b"\x1b[?1;2c", b"\r"]), max_size=6).map(b"".join)  # fmt: skip


@given(before=st.lists(_KEYS, max_size=4), data=_KEYS, after=st.lists(_KEYS, max_size=3),
       answers=st.booleans())  # fmt: skip
def test_a_read_that_passes_is_what_feed_makes_of_it(
    before: list[bytes], data: bytes, after: list[bytes], answers: bool
) -> None:
    """The relay's usual keystroke (``passes``: written at once, then ``typed``) is the input
    path's ``feed`` of it: the same bytes for the child, one keystroke, the path told once,
    and the filter left as ``feed`` leaves it (the reads after it come out alike)."""
    twins = [InputPath(AnswerFilter(status=True) if answers else FocusFilter()) for _ in "ab"]
    for chunk in before:
        assert twins[0].feed(chunk, Path()) == twins[1].feed(chunk, Path())
    fast, fed = twins
    if not data or not fast.passes(data):
        return  # read by ``feed`` (the relay's other path)
    assert b"\x1b" not in data
    path, told = Path(), Path()
    assert fed.feed(data, path) == [data, KEYSTROKE]
    assert fast.typed(told) is KEYSTROKE
    assert path.typed_count == told.typed_count == 1
    for chunk in after:
        assert fast.feed(chunk, Path()) == fed.feed(chunk, Path())
    assert fast.flush(Path()) == fed.flush(Path())


def test_plain_keys_pass_and_nothing_passes_without_a_filter_or_with_an_escape() -> None:
    assert InputPath(FocusFilter()).passes(b"hello")
    assert InputPath(AnswerFilter(status=True)).passes(b"x")
    assert not InputPath(FocusFilter()).passes(b"a\x1b[Ib")
    assert not InputPath(None).passes(b"hello")  # feed passes it on alone, no keystroke
    held = InputPath(FocusFilter())
    held.feed(b"\x1b", Path())  # a lone ESC held: the next read may complete a report
    assert not held.passes(b"[I")
    assert not held.passes(b"x")


def test_the_childs_input_writes_a_key_at_once_and_after_what_waits() -> None:
    from cuewrap.loop import Loop
    from cuewrap.relay.childinput import ChildInput

    r, w = os.pipe()
    try:
        os.set_blocking(w, False)
        child = ChildInput(Loop(), w, InputPath(FocusFilter()), (-1, lambda: None))
        assert child.typed(b"ab")
        assert os.read(r, 100) == b"ab"
        assert not child.typed(b"\x1b[I")  # not as it came: the input path's to read
        assert select.select([r], [], [], 0)[0] == []
        # the pipe full: the key waits, in order, after what waited before it
        filled = 0
        with contextlib.suppress(BlockingIOError):
            while True:
                filled += os.write(w, b"x" * 4096)
        child.queue(b"first")
        child.send(b"second")
        assert list(child.waiting) == [b"first", b"second"]
        got = b""
        while len(got) < filled:
            got += os.read(r, 65536)
        child._write()
        assert os.read(r, 100) == b"firstsecond"
        child.close()
    finally:
        os.close(r)
        os.close(w)
