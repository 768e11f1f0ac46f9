"""One bridge connection without sockets: framing, the line-rate budget and the auth / hello
handshake, as bytes in and events out (tests/test_bridge_server.py runs the same rules over
real Unix sockets)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from shared import HELLO, enc

from cuewrap.bridge.connection import (
    BridgeConnection,
    Closed,
    ConnectionEvent,
    Gone,
    Hello,
    Received,
    Refused,
    Requested,
    admission,
)
from cuewrap.bridge.protocol import MAX_LINE, Request
from cuewrap.facts import AgentEnd, AgentStart, BridgeHello

pytestmark = pytest.mark.unit

TOKEN = "t" * 64
AUTH = {"type": "auth", "token": TOKEN}
END = AgentEnd(None)


def conn(now: float = 0.0, *, rate: float = 500.0, burst: float = 1000.0) -> BridgeConnection:
    return BridgeConnection(TOKEN, now, line_rate=rate, line_burst=burst)


def live(c: BridgeConnection | None = None) -> BridgeConnection:
    c = c or conn()
    events = c.receive(enc(AUTH) + enc(HELLO), 0.0)
    assert [type(e) for e in events] == [Hello] and c.state == "live"
    return c


def test_handshake_then_facts_and_requests() -> None:
    c = conn()
    assert c.receive(enc(AUTH), 0.0) == [] and c.state == "hello"
    (hello,) = c.receive(enc(HELLO), 0.0)
    assert isinstance(hello, Hello) and isinstance(hello.hello, BridgeHello)
    assert hello.hello.session_id == "sid-1"
    events = c.receive(
        enc({"type": "agent_start"})
        + enc({"type": "request", "id": 3, "action": "status"})
        + enc({"type": "agent_end"}),
        0.1,
    )
    assert events == [Received(AgentStart()), Requested(Request(3, "status")), Received(END)]


def test_lines_split_anywhere_give_the_same_events() -> None:
    stream = enc(AUTH) + enc(HELLO) + b"".join(enc({"type": t}) for t in ["agent_start"] * 20)
    whole = conn().receive(stream, 0.0)
    rnd = random.Random(7)
    for _ in range(50):
        c = conn()
        got: list[ConnectionEvent] = []
        i = 0
        while i < len(stream):
            n = rnd.randint(1, 40)
            got += c.receive(stream[i : i + n], 0.0)
            i += n
        assert got == whole
    assert len(whole) == 21


def test_wrong_token_closes_and_ignores_the_rest() -> None:
    c = conn()
    events = c.receive(enc({"type": "auth", "token": "x" * 64}) + enc(HELLO), 0.0)
    assert events == [Refused("bad_token"), Closed()] and c.closed
    assert c.receive(enc(AUTH), 0.0) == [] and c.eof() == []


def test_first_line_must_be_auth() -> None:
    c = conn()
    assert c.receive(enc(HELLO), 0.0) == [Refused("no_auth"), Closed()]


def test_second_line_must_be_a_hello_of_protocol_1() -> None:
    c = conn()
    events = c.receive(enc(AUTH) + enc({"type": "agent_start"}), 0.0)
    assert events == [Refused("no_hello"), Closed()]
    c = conn()
    events = c.receive(enc(AUTH) + b"not json\n", 0.0)
    assert events[:1] == [Refused("bad_json", events[0].detail)]  # type: ignore[union-attr]
    assert events[1:] == [Refused("no_hello"), Closed()]
    c = conn()
    events = c.receive(enc(AUTH) + enc({**HELLO, "protocol": 2}), 0.0)
    assert events == [Refused("bad_version", "2"), Closed()]


def test_after_the_handshake_bad_lines_are_refused_not_fatal() -> None:
    c = live()
    events = c.receive(
        b"{}\n" + enc(AUTH) + enc(HELLO) + enc({"type": "nope"}) + enc({"type": "agent_end"}), 1.0
    )
    assert [type(e) for e in events] == [Refused, Refused, Refused, Refused, Received]
    assert events[1] == Refused("unexpected", "auth") and events[2] == Refused(
        "unexpected", "hello"
    )
    assert c.state == "live"


def test_overlong_line_refused_once_and_skipped_to_its_newline() -> None:
    c = live()
    c.receive(b"x" * (MAX_LINE - 1), 1.0)
    assert c.buffered == MAX_LINE - 1
    assert c.receive(b"xx", 1.0) == [Refused("too_long")]
    assert c.buffered == 0  # nothing of it is kept
    assert c.receive(b"y" * 100_000, 1.0) == []  # still the same line: nothing more
    assert c.receive(b"zzz\n" + enc({"type": "agent_end"}), 1.0) == [Received(END)]


def test_a_line_of_exactly_max_line_is_framed() -> None:
    c = live()
    line = b'"' + b"a" * (MAX_LINE - 2) + b'"'
    assert len(line) == MAX_LINE
    (event,) = c.receive(line[:10], 1.0) + c.receive(line[10:] + b"\n", 1.0)
    assert isinstance(event, Refused) and event.reason == "bad_json"  # a string, not an object


def test_rate_budget_refuses_a_flood_and_refills_with_time() -> None:
    c = live(conn(rate=10.0, burst=5.0))  # the handshake took 2 of 5
    events = c.receive(enc({"type": "agent_end"}) * 5, 0.0)
    assert events == [Received(END)] * 3 + [Refused("flood")] * 2
    assert c.receive(enc({"type": "agent_end"}), 0.05) == [Refused("flood")]  # half a line
    assert c.receive(enc({"type": "agent_end"}), 0.2) == [Received(END)]
    events = c.receive(enc({"type": "agent_end"}) * 6, 100.0)  # refilled up to the burst only
    assert events.count(Refused("flood")) == 1


def test_eof_of_a_live_connection_is_gone() -> None:
    c = live()
    assert c.eof() == [Gone()] and c.closed
    c = live()
    c.receive(b'{"type": "agent_', 1.0)
    assert c.eof() == [Refused("truncated"), Gone()]


def test_eof_before_the_handshake_completes_is_closed() -> None:
    assert conn().eof() == [Refused("no_auth"), Closed()]
    c = conn()
    c.receive(enc(AUTH) + b'{"type": "hel', 0.0)
    assert c.eof() == [Refused("truncated"), Refused("no_hello"), Closed()]


def test_admission_counts_owner_and_child() -> None:
    def why(**kw: Any) -> str:
        args: dict[str, Any] = dict(open_now=0, limit=4, pid=42, uid=1000, my_uid=1000, child=42)
        args.update(kw)
        return admission(**args)

    assert why() == ""
    assert why(uid=None) == ""  # macOS: no uid from LOCAL_PEERPID, the pid still decides
    assert why(open_now=4) == "too_many_connections"
    assert why(uid=0) == "wrong_uid"
    assert why(child=None) == "no_child"
    assert why(pid=43) == "wrong_pid"
    assert why(pid=None) == "wrong_pid"
