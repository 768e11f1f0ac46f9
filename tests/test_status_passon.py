"""The child's OSC 7501 reports and a host terminal that speaks the Program Status Protocol
(docs/generic-mode.md, docs/pi-facts.md): taken out until the host answered cuewrap's query,
passed on after; the last one taken out before the answer written then; a ``clear`` when
cuewrap gives the terminal back with the child's status still shown."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from shared import PtyChild, read_host

from cuewrap.host import HostTerminal
from cuewrap.loop import Loop
from cuewrap.relay.inject import Injector
from cuewrap.relay.outputpath import OutputPath
from cuewrap.relay.relay import Relay
from cuewrap.term import sequences as seq
from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import OutputTracker

pytestmark = pytest.mark.unit

IDLE = b"\x1b]7501;state=idle:app=pi\x1b\\"
WORKING = b"\x1b]7501;state=working:app=pi\x1b\\"
DONE = b"\x1b]7501;state=done:app=pi\x07"  # BEL: replayed as written
CLEAR = b"\x1b]7501;state=clear\x1b\\"


def test_before_the_answer_reports_are_taken_out_and_the_last_is_kept() -> None:
    t = OutputTracker(StatusGuard(consume=True))
    assert t.feed(b"a" + IDLE + b"b" + DONE + b"c").out == b"abc"
    assert not t.status.shown
    assert t.status.pass_on() == DONE  # the last, exactly as written
    assert t.status.shown and not t.status.consume
    assert t.status.pass_on() == b""  # once


def test_after_the_answer_reports_pass_and_the_shown_state_follows_them() -> None:
    t = OutputTracker(StatusGuard(consume=True))
    assert t.status.pass_on() == b"" and not t.status.shown  # nothing was missed
    assert t.feed(WORKING).out == WORKING
    assert t.status.shown
    assert t.feed(b"x" + CLEAR).out == b"x" + CLEAR
    assert not t.status.shown  # the child cleared it itself


def test_a_missed_clear_is_replayed_but_leaves_nothing_shown() -> None:
    t = OutputTracker(StatusGuard(consume=True))
    t.feed(WORKING + CLEAR)
    assert t.status.pass_on() == CLEAR
    assert not t.status.shown


def test_a_report_split_across_reads_before_the_answer_is_replayed_whole() -> None:
    t = OutputTracker(StatusGuard(consume=True))
    out = t.feed(WORKING[:9]).out + t.feed(WORKING[9:]).out
    assert out == b""
    assert t.status.pass_on() == WORKING


def _relay() -> tuple[Relay, int, list[int]]:
    """A relay writing to a pipe (the host); its read end, and every fd to close."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    r, w = os.pipe()
    os.set_blocking(r, False)
    host = HostTerminal(0, w)
    relay = Relay(
        Loop(),
        PtyChild(master),  # type: ignore[arg-type]
        host,
        focus=None,
        path=OutputPath(OutputTracker(StatusGuard(consume=True))),
        injector=Injector(Loop(), host.write),
    )
    return relay, r, [r, w, master, slave]


@pytest.fixture
def host_pipe() -> Iterator[tuple[Relay, int]]:
    """``_relay()``, its fds closed after the test."""
    relay, r, fds = _relay()
    yield relay, r
    for fd in fds:
        os.close(fd)


def test_the_relay_writes_the_missed_report_at_the_answer_and_clears_at_exit(
    host_pipe: tuple[Relay, int],
) -> None:
    relay, r = host_pipe
    relay._output(b"frame " + IDLE)
    assert read_host(r) == b"frame "  # the host has not answered yet
    relay.reactions.perform(
        relay.input._steps([TerminalAnswer("osc7501", "?")], relay.reactions.path)
    )
    assert read_host(r) == IDLE  # the state it missed
    relay._output(WORKING)
    assert read_host(r) == WORKING
    # a stop (Ctrl-Z) undoes modes only; leaving for good clears the indicator too
    assert seq.PROGRAM_STATUS_CLEAR not in relay.reactions.restore_sequence()
    assert relay.reactions.restore_sequence(leaving=True).endswith(seq.PROGRAM_STATUS_CLEAR)
    relay._output(CLEAR)  # the child cleared it: nothing more at exit
    assert seq.PROGRAM_STATUS_CLEAR not in relay.reactions.restore_sequence(leaving=True)


def test_no_answer_no_report_and_no_clear(host_pipe: tuple[Relay, int]) -> None:
    relay, r = host_pipe
    relay._output(b"x" + WORKING)
    assert read_host(r) == b"x"
    assert relay.reactions.restore_sequence(leaving=True) == b""


def test_a_failed_tracker_still_clears_what_it_let_through(host_pipe: tuple[Relay, int]) -> None:
    relay, _ = host_pipe
    relay.reactions.perform(
        relay.input._steps([TerminalAnswer("osc7501", "?")], relay.reactions.path)
    )
    relay._output(WORKING)
    relay.reactions.failed(RuntimeError("test"))
    assert not isinstance(relay.reactions.path, OutputPath)
    assert relay.reactions.restore_sequence(leaving=True) == seq.PROGRAM_STATUS_CLEAR
