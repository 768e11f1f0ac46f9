"""The input path alone (relay/inputpath.py): the host's input read into steps, in order. The
relay's tests (test_relay_pty.py, test_status_passon.py, test_answer.py's typing tests) hold
the same through real PTYs."""

from __future__ import annotations

import pytest

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
