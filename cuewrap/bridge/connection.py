"""One bridge connection without I/O (h11's shape): bytes in, events out.

``BridgeConnection.receive(data, now)`` takes whatever the socket gave and returns what it
means, in order; ``eof()`` says what the end of the stream means. It owns the three things a
connection has to get right by itself:

- framing: newline-delimited lines of at most ``protocol.MAX_LINE`` bytes; one partial line
  is kept between calls; the rest of an over-long line is discarded up to its newline;
- the rate limit: a token bucket per connection (``line_burst`` lines, refilled at
  ``line_rate`` per second of ``now``); a line over budget is refused as ``flood``;
- the handshake: the first line must be ``auth`` with the token (compared in constant time),
  the second a ``hello`` of protocol ``PROTOCOL_VERSION``; a broken handshake closes the
  connection. Afterwards every line is a fact, a ``/cue`` request or a refusal.

``admission()`` decides whether a new connection may start the handshake at all (how many are
open, whose they are). The server (``server.py``) keeps the sockets, reading the peer's
credentials, the auth timeout and what the events lead to: facts passed on, requests
answered, refusals counted, the connection closed.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Literal

from cuewrap.bridge import protocol
from cuewrap.bridge.protocol import Auth, OwnWrite, Rejection, Request
from cuewrap.facts import BridgeHello, Fact

State = Literal["auth", "hello", "live", "closed"]


@dataclass(frozen=True)
class Hello:
    """The handshake is complete: this runtime's hello (the first fact of the connection)."""

    hello: BridgeHello


@dataclass(frozen=True)
class Received:
    """A fact from a live connection."""

    fact: Fact


@dataclass(frozen=True)
class Requested:
    """``/cue`` from a live connection: answer it."""

    request: Request


@dataclass(frozen=True)
class Own:
    """One of Pi's own writes to its terminal from a live connection, whole and checked
    (``term.provenance.own_write_refusal``): relay it."""

    data: bytes


@dataclass(frozen=True)
class Refused:
    """A line (or the connection) was refused; ``detail`` names a type or field, never a value."""

    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Closed:
    """The handshake failed or the stream ended before it completed: drop the connection."""


@dataclass(frozen=True)
class Gone:
    """A live connection ended (its runtime is gone)."""


ConnectionEvent = Hello | Received | Requested | Own | Refused | Closed | Gone


def admission(
    *, open_now: int, limit: int, pid: int | None, uid: int | None, my_uid: int, child: int | None
) -> str:
    """Why a new connection is refused, or "" when it may go on to the handshake: at most
    ``limit`` open connections, the peer is this user (``uid``, where known) and is the child
    itself (``pid`` == ``child``; no child yet: nobody)."""
    if open_now >= limit:
        return "too_many_connections"
    if uid is not None and uid != my_uid:
        return "wrong_uid"
    if child is None:
        return "no_child"
    if pid is None or pid != child:
        return "wrong_pid"
    return ""


class BridgeConnection:
    def __init__(self, token: str, now: float, *, line_rate: float, line_burst: float) -> None:
        self._token = token.encode()
        self.line_rate = line_rate
        self.line_burst = line_burst
        self.state: State = "auth"
        self._inbuf = bytearray()
        self._discarding = False  # inside a line longer than MAX_LINE
        self._budget = line_burst
        self._refilled = now
        self._own: list[bytes] = []  # the parts of an own write so far
        self._own_size = 0
        self._own_dropping = False  # the parts of a write already refused, up to its last

    @property
    def closed(self) -> bool:
        return self.state == "closed"

    @property
    def buffered(self) -> int:
        """Bytes of a partial line kept for the next ``receive`` (at most ``MAX_LINE``)."""
        return len(self._inbuf)

    # -- input ------------------------------------------------------------------------------
    def receive(self, data: bytes, now: float) -> list[ConnectionEvent]:
        """What ``data`` (the next bytes read) means. Nothing once the connection is closed."""
        events: list[ConnectionEvent] = []
        start = 0
        while not self.closed:
            nl = data.find(b"\n", start)
            if nl < 0:
                break
            piece = data[start:nl]
            start = nl + 1
            if self._discarding:  # the rest of an over-long line, already counted
                self._discarding = False
                continue
            if self._inbuf:
                self._inbuf += piece
                line = bytes(self._inbuf)
                self._inbuf.clear()
            else:
                line = piece
            self._line(line, now, events)
        if self.closed or self._discarding:
            return events
        rest = len(data) - start
        if len(self._inbuf) + rest > protocol.MAX_LINE:
            self._inbuf.clear()
            self._discarding = True
            self._charge(now)
            events.append(Refused("too_long"))
        elif rest:
            self._inbuf += data[start:]
        return events

    def eof(self) -> list[ConnectionEvent]:
        """The stream ended (or a newer runtime replaced this one): what that means."""
        if self.closed:
            return []
        events: list[ConnectionEvent] = []
        if self.state == "live":
            if self._inbuf:
                events.append(Refused("truncated"))
            events.append(Gone())
        else:
            if self._inbuf or self._discarding:
                events.append(Refused("truncated"))
            events.append(Refused("no_auth" if self.state == "auth" else "no_hello"))
            events.append(Closed())
        self.close()
        return events

    def close(self) -> None:
        self.state = "closed"
        self._inbuf.clear()

    # -- one line ---------------------------------------------------------------------------
    def _charge(self, now: float) -> bool:
        """Take one line from the rate budget; False when it is exhausted."""
        refill = (now - self._refilled) * self.line_rate
        self._budget = min(self.line_burst, self._budget + refill)
        self._refilled = now
        if self._budget < 1.0:
            return False
        self._budget -= 1.0
        return True

    def _line(self, line: bytes, now: float, events: list[ConnectionEvent]) -> None:
        if not self._charge(now):
            events.append(Refused("flood"))
            return
        parsed = protocol.parse_line(line)
        if self.state == "auth":
            if isinstance(parsed, Auth) and hmac.compare_digest(parsed.token.encode(), self._token):
                self.state = "hello"
            else:
                events.append(Refused("bad_token" if isinstance(parsed, Auth) else "no_auth"))
                self._fail(events)
        elif self.state == "hello":
            if not isinstance(parsed, BridgeHello):
                if isinstance(parsed, Rejection):
                    events.append(Refused(parsed.reason, parsed.detail))
                events.append(Refused("no_hello"))
                self._fail(events)
            elif parsed.protocol != protocol.PROTOCOL_VERSION:
                events.append(Refused("bad_version", str(parsed.protocol)))
                self._fail(events)
            else:
                self.state = "live"
                events.append(Hello(parsed))
        elif isinstance(parsed, Rejection):
            events.append(Refused(parsed.reason, parsed.detail))
        elif isinstance(parsed, Request):
            events.append(Requested(parsed))
        elif isinstance(parsed, OwnWrite):
            self._own_part(parsed, events)
        elif isinstance(parsed, (Auth, BridgeHello)):
            events.append(Refused("unexpected", "auth" if isinstance(parsed, Auth) else "hello"))
        else:
            events.append(Received(parsed))

    def _own_part(self, part: OwnWrite, events: list[ConnectionEvent]) -> None:
        """Join an own write's parts; the whole is checked, then relayed or refused (never
        half of it)."""
        from cuewrap.term.provenance import OWN_MAX, own_write_refusal

        if not self._own_dropping:
            self._own.append(part.data)
            self._own_size += len(part.data)
            if self._own_size > OWN_MAX:
                self._own_dropping = True
                events.append(Refused("bad_field", "own.data:too_long"))
        if part.more:
            if self._own_dropping:
                self._own.clear()
            return
        data = b"".join(self._own)
        dropping = self._own_dropping
        self._own.clear()
        self._own_size = 0
        self._own_dropping = False
        if dropping:
            return
        why = own_write_refusal(data)
        if why:
            events.append(Refused("bad_field", f"own.data:{why}"))
        else:
            events.append(Own(data))

    def _fail(self, events: list[ConnectionEvent]) -> None:
        self.close()
        events.append(Closed())
