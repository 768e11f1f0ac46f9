"""Fuzzing what reads untrusted bytes, end to end, with a bounded number of examples: the tmux
control-mode reader (lines split anywhere, through a pipe into the control client), the bridge
connection (framing, token, rate budget; also over a real socket into the server) and the
notice parser (through the output tracker, under any consume policy). None of them raises,
what they keep between reads stays bounded, and what they report does not depend on where the
bytes were split."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared import HELLO, enc
from test_bridge_server import Harness

from cuewrap.bridge import protocol
from cuewrap.bridge.connection import BridgeConnection, Hello, Received, Refused, Requested
from cuewrap.facts import BridgeHello
from cuewrap.term import notices as N
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import CAP, OutputTracker
from cuewrap.tmux.view import parse_view

pytestmark = pytest.mark.unit

FUZZ = settings(
    max_examples=150, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, prev = [], 0
    for p in points:
        out.append(data[prev:p])
        prev = p
    out.append(data[prev:])
    return out


# -- tmux answers -------------------------------------------------------------------------------


@FUZZ
@given(
    pane=st.lists(st.text(max_size=60), max_size=3),
    clients=st.lists(st.text(max_size=60), max_size=6),
)
def test_tmux_view_parser_takes_any_answer(pane: list[str], clients: list[str]) -> None:
    view = parse_view(tuple(pane), tuple(clients))
    if view is not None:
        view.state, view.where  # noqa: B018 - computed from what tmux said, must not raise


# -- the bridge connection ----------------------------------------------------------------------

TOKEN = "k" * 64


_good = [
    enc({"type": "auth", "token": TOKEN}),
    enc(HELLO),
    enc({"type": "agent_start"}),
    enc({"type": "agent_settled", "aborted": False}),
    enc({"type": "request", "id": 3, "action": "status"}),
]
bridge_line = st.one_of(
    st.sampled_from(_good),
    st.sampled_from(
        [
            enc({"type": "auth", "token": "k" * 63 + "x"}),
            enc({"type": "auth"}),
            enc({**HELLO, "protocol": 2}),
            b"{\n",
            b"\n",
            b"null\n",
            b"[]\n",
            b'{"type": "agent_start", "x": ' + b"9" * 400 + b"}\n",
        ]
    ),
    st.binary(max_size=200),
    st.integers(min_value=protocol.MAX_LINE - 2, max_value=protocol.MAX_LINE + 3).map(
        lambda n: b"x" * n + b"\n"
    ),
)
bridge_stream = st.lists(bridge_line, max_size=25).map(b"".join)


def run_connection(chunks: list[bytes], times: list[float], rate: float, burst: float) -> list[Any]:
    c = BridgeConnection(TOKEN, 0.0, line_rate=rate, line_burst=burst)
    events = []
    for i, piece in enumerate(chunks):
        events += c.receive(piece, times[i % len(times)] if times else 0.0)
        assert c.buffered <= protocol.MAX_LINE
    events += c.eof()
    assert c.closed
    return events


@FUZZ
@given(data=bridge_stream, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_bridge_connection_any_split_same_events_bounded(data: bytes, cuts: list[int]) -> None:
    """With the budget never short, where the bytes were split changes nothing."""
    whole = run_connection([data], [], 1e9, 1e9)
    assert run_connection(split(data, cuts), [], 1e9, 1e9) == whole
    # live only after the right token, then a hello of protocol 1, as the first two lines
    if any(isinstance(e, Hello) for e in whole):
        assert data.startswith(_good[0])
    if any(isinstance(e, Received | Requested) for e in whole):
        assert any(isinstance(e, Hello) for e in whole)


@FUZZ
@given(
    lines=st.lists(st.sampled_from(_good[2:]), max_size=60),
    gaps=st.lists(st.floats(min_value=0, max_value=0.5), min_size=1, max_size=60),
    rate=st.floats(min_value=1, max_value=50),
    burst=st.integers(min_value=2, max_value=20),
)
def test_bridge_rate_budget_holds_for_any_timing(
    lines: list[bytes], gaps: list[float], rate: float, burst: int
) -> None:
    """Lines accepted over any span of time: at most the burst plus the rate times the span."""
    c = BridgeConnection(TOKEN, 0.0, line_rate=rate, line_burst=burst)
    assert [type(e) for e in c.receive(_good[0] + _good[1], 0.0)] == [Hello]
    now = 0.0
    accepted = 0
    for i, line in enumerate(lines):
        now += gaps[i % len(gaps)]
        accepted += sum(1 for e in c.receive(line, now) if not isinstance(e, Refused))
        assert accepted <= burst + rate * now + 1e-6
        assert all(e == Refused("flood") for e in c.receive(b"", now))


@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    authed=st.booleans(),
    data=bridge_stream,
    cuts=st.lists(st.integers(min_value=0), max_size=6),
)
def test_bridge_server_survives_any_bytes_over_a_socket(
    authed: bool, data: bytes, cuts: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A real server on a socket: any bytes, after a handshake or instead of one, raise
    nothing, and a well-behaved connection afterwards is still served."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("rt", numbered=True)))
        h = Harness().start()
    try:
        c = h.live() if authed else h.connect()
        for piece in split(data, cuts):
            try:
                c.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server closed it (a broken handshake)
            h.pump(rounds=2)
        c.close()
        h.pump(rounds=5)
        n = len(h.facts)
        h.live()  # a new runtime connects: served
        assert isinstance(h.facts[n], BridgeHello)
        assert not h.errors
    finally:
        h.close()


# -- the notice parser, through the output tracker ----------------------------------------------


class Policy:
    def __init__(self, answers: list[bool]) -> None:
        self.answers = answers
        self.asked = 0

    def consume(self, protocol: N.NoticeProtocol) -> bool:
        self.asked += 1
        return self.answers[self.asked % len(self.answers)] if self.answers else False


_notice_parts = st.sampled_from(
    [b"\x1b]9;", b"\x1b]777;notify;", b"\x1b]99;", b"i=1:d=0;", b"i=1:d=1;", b"p=body;",
     b"e=1;", b"aGVsbG8=", b"\x07", b"\x1b\\", b"\x1b", b";", b"title", b"\xe2\x82", b"\xac",
     b"\x1b]9;4;1;50\x07", b"\x1b[?2026h", b"\x18", b"\x1a", b"text ", b"\x1b]7501;state=idle\x07"]
)  # fmt: skip
notice_stream = st.lists(st.one_of(_notice_parts, st.binary(max_size=30)), max_size=60).map(
    b"".join
)


def run_tracker(
    chunks: list[bytes], policy: Policy | None, consume_status: bool = True
) -> tuple[bytes, list[Any]]:
    t = OutputTracker(StatusGuard(consume=consume_status), notices=policy)
    out, events = b"", []
    for piece in chunks:
        scan = t.feed(piece)
        out += scan.out
        events += scan.events
        assert len(t._pend) <= CAP + 8 and len(t.held_bytes) <= CAP + 8
        assert len(t.notices.parser._pending) <= N.PENDING_MAX
        for part in t.notices.parser._pending.values():
            assert all(len(x) <= N.TEXT_CAP for x in part[1:])  # type: ignore[arg-type]
    out += t.flush()
    for ev in events:
        if isinstance(ev, N.ChildNotification):
            assert len(ev.title) <= N.TEXT_CAP and len(ev.body) <= N.TEXT_CAP
    return out, events


@FUZZ
@given(data=notice_stream, cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_notices_passed_through_any_split_are_byte_identical(data: bytes, cuts: list[int]) -> None:
    """A policy that never takes one out: every byte passes, and the notifications reported
    are the same wherever the stream was split."""
    out, events = run_tracker([data], Policy([False]), consume_status=False)
    assert out == data
    out2, events2 = run_tracker(split(data, cuts), Policy([False]), consume_status=False)
    assert out2 == data
    assert [e for e in events2 if isinstance(e, N.ChildNotification)] == [
        e for e in events if isinstance(e, N.ChildNotification)
    ]


@FUZZ
@given(
    data=notice_stream,
    cuts=st.lists(st.integers(min_value=0), max_size=10),
    answers=st.lists(st.booleans(), max_size=5),
)
def test_notices_under_any_policy_never_raise_and_only_remove(
    data: bytes, cuts: list[int], answers: list[bool]
) -> None:
    """Whatever the policy says, nothing raises, and the output is the input with whole
    pieces taken out (in order: a subsequence), never anything added."""
    out, _ = run_tracker(split(data, cuts), Policy(answers))
    i = 0
    for b in out:
        i = data.index(b, i) + 1  # raises ValueError if out is not a subsequence of data


@FUZZ
@given(
    proto=st.sampled_from(N.NOTICE_PROTOCOLS),
    rests=st.lists(st.one_of(st.binary(max_size=64), _notice_parts), max_size=40),
    answers=st.lists(st.booleans(), max_size=4),
)
def test_notice_parser_any_osc_bounded(
    proto: N.NoticeProtocol, rests: list[bytes], answers: list[bool]
) -> None:
    p = N.NoticeParser()
    policy = Policy(answers)
    for rest in rests:
        note, _cut = p.osc(proto, rest * 50 if len(rest) % 7 == 0 else rest, policy)
        if note is not None:
            assert len(note.title) <= N.TEXT_CAP and len(note.body) <= N.TEXT_CAP
        assert len(p._pending) <= N.PENDING_MAX


def test_fuzz_inputs_reach_the_interesting_paths() -> None:
    """What the strategies above draw from can reach what matters, not only noise."""
    events = run_connection([b"".join(_good)], [], 1e9, 1e9)
    assert [type(e).__name__ for e in events] == ["Hello", "Received", "Received", "Requested",
                                                  "Gone"]  # fmt: skip
    out, evs = run_tracker([b"\x1b]777;notify;T;B\x07"], Policy([True]))
    assert out == b"" and evs == [N.ChildNotification("osc777", "T", "B", True)]
