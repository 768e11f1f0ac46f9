"""The child's Program Status query (``ESC ] 7501 ; ? ST|BEL``) in the output tracker, and the
host terminal's answer to cuewrap's own query in the answer filter (docs/generic-mode.md).

Generic mode answers the child's query itself: the tracker reports it (``StatusQuery``) and
takes it out of the output at a safe point, however the output is split; without
``answer_query`` (Pi mode) it passes untouched and is no event.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from trackerref import feed_all as feed_tracker

from cuewrap.factbase import ProgramStatus
from cuewrap.term.answers import AnswerFilter, TerminalAnswer
from cuewrap.term.focus import HostStatusReply
from cuewrap.term.statusguard import StatusGuard, StatusQuery
from cuewrap.term.tracker import OutputEvent, OutputTracker

pytestmark = pytest.mark.unit

# what Claude Code 2.1.328 writes at start (its query BEL-terminated), then a report
STARTUP = b"\x1b[>0q\x1b]7501;?\x07\x1b[c"
REPORT = b"\x1b]7501;state=idle:app=claude-code\x07"


def run(
    chunks: list[bytes],
    *,
    answer_query: bool = False,
    consume_status: bool = True,
    own_status_app: str | None = None,
    guard_frames: bool = False,
) -> tuple[bytes, list[OutputEvent]]:
    status = StatusGuard(consume=consume_status, answer_query=answer_query, own_app=own_status_app)
    return feed_tracker(OutputTracker(status, guard_frames=guard_frames), chunks)


def test_the_query_is_taken_out_and_reported_either_terminator() -> None:
    for query in (b"\x1b]7501;?\x07", b"\x1b]7501;?\x1b\\"):
        out, events = run([b"a" + query + b"\x1b[cb"], answer_query=True, consume_status=False)
        assert out == b"a\x1b[cb"
        assert events == [StatusQuery(True)]


def test_without_answer_query_it_passes_and_is_no_event() -> None:
    out, events = run([STARTUP], answer_query=False, consume_status=True)
    assert out == STARTUP
    assert events == []


def test_repeated_queries_are_each_reported() -> None:
    data = STARTUP + b"text" + REPORT + b"more" + STARTUP
    out, events = run([data], answer_query=True, consume_status=True)
    assert out == b"\x1b[>0q\x1b[ctextmore\x1b[>0q\x1b[c"
    assert [type(e) for e in events] == [StatusQuery, ProgramStatus, StatusQuery]


def test_reports_pass_when_not_consumed_but_queries_still_go() -> None:
    out, events = run([STARTUP + REPORT], answer_query=True, consume_status=False)
    assert out == b"\x1b[>0q\x1b[c" + REPORT
    assert events[0] == StatusQuery(True)
    assert isinstance(events[1], ProgramStatus) and events[1].app == "claude-code"


def test_a_body_other_than_the_query_is_no_query() -> None:
    for body in (b"??", b"? ", b"state=?", b""):
        seq = b"\x1b]7501;" + body + b"\x07"
        out, events = run([seq], answer_query=True, consume_status=False)
        assert out == seq
        assert not any(isinstance(e, StatusQuery) for e in events)


def test_a_query_inside_a_utf8_character_is_not_cut_but_is_answered() -> None:
    # ESC inside a pending UTF-8 character: the host's parser state differs; never cut there
    data = b"\xe2\x82" + b"\x1b]7501;?\x07" + b"x"
    out, events = run([data], answer_query=True, consume_status=False)
    assert out == data
    assert events == [StatusQuery(False)]


@pytest.mark.parametrize("consume", [True, False])
def test_split_at_every_byte_boundary_is_the_same_as_whole(consume: bool) -> None:
    data = b"hello " + STARTUP + b" \xe2\x82\xac " + REPORT + b"\x1b]0;title\x07 end" + STARTUP
    whole = run([data], answer_query=True, consume_status=consume)
    assert whole[0].count(b"7501;?") == 0
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert (
                run([data[:i], data[i:j], data[j:]], answer_query=True, consume_status=consume)
                == whole
            ), (i, j)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hs.lists(hs.integers(min_value=0, max_value=80), max_size=8))
def test_any_split_gives_the_same_events_and_output(cuts: list[int]) -> None:
    data = b"x" + STARTUP + REPORT + b"\x1b[?2026h" + b"\x1b]7501;?\x1b\\" + b"\x1b[?2026l" + b"y"
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert run(chunks, answer_query=True, consume_status=True) == run(
        [data], answer_query=True, consume_status=True
    )


def test_a_held_prefix_released_by_flush_still_answers_when_it_completes() -> None:
    # the relay flushes a held prefix after a short time: the query reached the host, and
    # when its end comes it is still reported (the relay answers), not cut
    t = OutputTracker(StatusGuard(answer_query=True, consume=False))
    first = t.feed(b"ab\x1b]7501")
    assert first.out == b"ab" and t.held
    assert t.flush() == b"\x1b]7501"
    rest = t.feed(b";?\x07\x1b[c")
    assert rest.out == b";?\x07\x1b[c"
    assert rest.events == [StatusQuery(False)]


# --- the host terminal's answer to cuewrap's own query ----------------------------------


def feed_all(f: AnswerFilter, data: bytes, split: int | None = None) -> list[object]:
    parts = [data] if split is None else [data[:split], data[split:]]
    items: list[object] = []
    for p in parts:
        items += f.feed(p)
    items += f.flush(everything=True)
    return items


def test_the_hosts_answer_is_taken_out_when_asked_at_every_split() -> None:
    answer = b"\x1bP>|WezTerm 2024\x1b\\\x1b]7501;?\x1b\\\x1b[?62;22ckeys"
    for split in range(len(answer) + 1):
        items = feed_all(AnswerFilter(status=True), answer, split)
        kinds = [i.kind for i in items if isinstance(i, TerminalAnswer)]
        assert kinds == ["xtversion", "osc7501", "da1"], split
        assert b"".join(i for i in items if isinstance(i, bytes)) == b"keys"


def test_not_asked_the_echo_stays_data_as_in_pi_mode() -> None:
    data = b"\x1b]7501;?\x1b\\\x1b[?62c"
    items = feed_all(AnswerFilter(status=False), data)
    assert HostStatusReply() in items
    assert b"".join(i for i in items if isinstance(i, bytes)) == b"\x1b]7501;?\x1b\\"


def test_a_query_inside_a_frame_is_content_never_answered() -> None:
    """With the sequence guard (docs/terminal-guard.md), a query inside a synchronized frame the
    program draws is rendered content (a model's text): removed, and cuewrap does not answer it.
    Claude Code asks before its first frame."""
    framed = b"\x1b[?2026h" + b"\x1b]7501;?\x07" + b"\x1b[?2026l"
    out, events = run([framed], answer_query=True, consume_status=True, guard_frames=True)
    assert out == b"\x1b[?2026h\x1b[?2026l"
    assert not any(isinstance(e, StatusQuery) for e in events)
    out, events = run([STARTUP + framed], answer_query=True, guard_frames=True)
    assert [e for e in events if isinstance(e, StatusQuery)] == [StatusQuery(True)]


def test_a_report_from_a_program_that_never_asked_is_no_fact() -> None:
    """Generic mode: a program reports only after its query was answered. A report from one that
    never asked (a file a shell prints, a model's answer a line program shows raw) is text it
    prints: no fact, passed untouched. After the query, reports are facts."""
    out, events = run([b"cat: " + REPORT + b"done\r\n"], answer_query=True, consume_status=False)
    assert out == b"cat: " + REPORT + b"done\r\n"
    assert events == []
    out, events = run([STARTUP, REPORT], answer_query=True, consume_status=False)
    assert [e for e in events if isinstance(e, ProgramStatus)] == [
        ProgramStatus("idle", "claude-code", None, False)
    ]
    # Pi mode (no answer_query): Pi's reports count, as PI_PROGRAM_STATUS=1 turns them on
    out, events = run([REPORT], answer_query=False, consume_status=True)
    assert events == [ProgramStatus("idle", "claude-code", None, False)]


CODEX = b"\x1b]7501;state=working:app=codex\x1b\\"


def test_a_preset_that_proves_unasked_reports_counts_only_its_own_app() -> None:
    """Codex CLI reports without asking (its preset's ``status_app``: ``own_status_app``). Its
    reports under its own ``app=`` count, and its bare ``clear`` at exit; a report naming any
    other program in its output (a file it shows, a forged one) is still text, no fact and
    passed untouched, until a query was answered."""
    kw: dict[str, bool | str] = {"answer_query": True, "consume_status": True}
    out, events = run([b"x" + CODEX + b"y"], **kw, own_status_app="codex")
    assert out == b"xy" and events == [ProgramStatus("working", "codex", None, False)]
    clear = b"\x1b]7501;state=clear\x1b\\"
    out, events = run([clear], **kw, own_status_app="codex")
    assert out == b"" and events == [ProgramStatus("clear", None, None, False)]
    # another program's report: no fact, passed as it is (a bare PTY shows it as text)
    out, events = run([REPORT + b"text"], **kw, own_status_app="codex")
    assert out == REPORT + b"text" and events == []
    # without the preset's word, Codex's own report is no fact either (the rule of the query)
    out, events = run([CODEX], **kw)
    assert out == CODEX and events == []
