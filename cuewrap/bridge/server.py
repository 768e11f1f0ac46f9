"""The bridge channel: a private Unix socket served on the relay's ``Loop``
(docs/design.md#the-bridge).

``BridgeServer.start()`` makes a private directory (mode 0700) with a listening socket in it and
a random token; ``env()`` gives the two variables that carry them to Pi. A connection is kept
only when its peer is the child process itself (``SO_PEERCRED`` pid == ``child_pid()``) and its
first line is ``auth`` with the token; its second line must be a ``hello`` of protocol 1. From
then on every valid line becomes a fact passed to ``on_fact``; everything else is dropped and
counted by reason (``stats()``), with ``on_reject`` told (rate-limited).

Bounded: a few connections, one partial line (``MAX_LINE``) per connection, one read chunk at a
time, a line-rate budget per connection, a small outbound buffer. Non-blocking throughout,
no threads. Socket EOF on a connection that said hello gives ``BridgeGone``; when a new
runtime says hello while an older connection is still open (``/reload``, ``/new``), the old
one is drained first and closed with its ``BridgeGone``, so facts stay in order.

What the bytes of one connection mean (framing, the line-rate budget, the auth and hello
handshake) is ``connection.py``'s, without sockets; this module keeps the socket I/O, the peer
check, the auth timeout and what the connection's events lead to. The protocol is in
``protocol.py`` and ``docs/bridge-protocol.md``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from cuewrap.bridge import protocol
from cuewrap.bridge.channel import ENV_SOCKET, ENV_TOKEN, Channel, open_channel
from cuewrap.bridge.connection import (
    BridgeConnection,
    Closed,
    ConnectionEvent,
    Gone,
    Hello,
    Own,
    Received,
    Refused,
    Requested,
    admission,
)
from cuewrap.bridge.protocol import Request
from cuewrap.facts import BridgeGone, BridgeHello, CueToggle, Fact
from cuewrap.loop import Loop, Timer

__all__ = ["ENV_SOCKET", "ENV_TOKEN", "BridgeServer", "peer_credentials"]

MAX_CONNECTIONS = 4  # open connections, authenticated or not
READ_CHUNK = 64 * 1024  # bytes read per readable callback
LINE_RATE = 500.0  # lines per second per connection (steady)
LINE_BURST = 1000.0  # lines per connection before the rate applies
MAX_OUTBUF = 64 * 1024  # bytes waiting to be written to one connection
MAX_REPLY = 8000  # characters of a reply or notice text
AUTH_TIMEOUT = 5.0  # seconds for a new connection to send auth + hello
DRAIN_LIMIT = 1024 * 1024  # bytes read from an old connection when a new runtime says hello
REJECT_REPORTS_PER_S = 20.0  # on_reject calls per second (all are counted in stats)


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    fd: int
    pid: int
    proto: BridgeConnection  # what its bytes mean
    outbuf: bytearray = field(default_factory=bytearray)
    timer: Timer | None = None
    closed: bool = False

    @property
    def live(self) -> bool:
        return self.proto.state == "live"


def peer_credentials(sock: socket.socket) -> tuple[int | None, int | None]:
    """``(pid, uid)`` of the process that connected ``sock`` (None where unknown)."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux
        fmt = "3i"
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(fmt))
        pid, uid, _gid = struct.unpack(fmt, raw)
        return pid, uid
    try:  # macOS: SOL_LOCAL (0), LOCAL_PEERPID (2)
        raw = sock.getsockopt(0, 2, 4)
        return struct.unpack("i", raw)[0], None
    except OSError:
        return None, None


class BridgeServer:
    """Serve the bridge socket on ``loop``. All callbacks run on the loop.

    - ``child_pid()``: the pid of the spawned child (Pi), or None before it exists.
    - ``on_fact(fact)``: every accepted fact, in order (``BridgeHello`` first per connection,
      ``CueToggle`` for ``/cue on|off``, ``BridgeGone`` at the end).
    - ``on_reject(reason)``: a line or connection was refused (at most
      ``REJECT_REPORTS_PER_S`` calls per second; ``stats()`` has every count).
    - ``on_request(action, reply)``: ``"status"``, ``"on"``, ``"off"``, ``"mute …"`` or
      ``"unmute"`` from ``/cue``; ``reply(text)`` gives the text shown in Pi, now or later
      (the page may wait a moment for tmux's answer: ``wiring/cuepage.py``). Only the first
      reply counts; one after the connection closed is dropped.
    - ``on_own(data)``: one of Pi's own writes to its terminal (checked: complete escape
      sequences only), for the relay to write (docs/terminal-guard.md, "Whose sequence is
      it"); without it they are refused (``no_sink``). One it refuses ends the connection
      (``BridgeGone`` with ``why="refused"``).
    - ``note()``: what ``/cue`` says of a lost bridge (``stats()["provenance"]``).

    The limits are class attributes (module constants by default); tests may lower them on an
    instance before ``start()``.
    """

    max_connections = MAX_CONNECTIONS
    line_rate = LINE_RATE
    line_burst = LINE_BURST
    max_outbuf = MAX_OUTBUF
    auth_timeout = AUTH_TIMEOUT
    reject_reports_per_s = REJECT_REPORTS_PER_S

    def __init__(
        self,
        loop: Loop,
        *,
        child_pid: Callable[[], int | None],
        on_fact: Callable[[Fact], None],
        on_reject: Callable[[str], None] | None = None,
        on_request: Callable[[str, Callable[[str], None]], None] | None = None,
        on_own: Callable[[bytes], None] | None = None,
        note: Callable[[], str] | None = None,
    ) -> None:
        self._loop = loop
        self._child_pid = child_pid
        self._on_fact = on_fact
        self._on_reject = on_reject
        self._on_request = on_request
        self._on_own = on_own
        self._owns = 0
        self.token = secrets.token_hex(32)
        self._note = note  # what /cue says of a lost bridge (wiring/bridgewatch.py)
        self.dir: str | None = None
        self.path: str | None = None
        self._channel: Channel | None = None
        self._lsock: socket.socket | None = None
        self._conns: list[_Conn] = []
        self._current: _Conn | None = None  # the newest live connection
        self._counts: Counter[str] = Counter()
        self._last_rejection = ""
        self._report_budget = self.reject_reports_per_s
        self._report_refilled = loop.clock()
        self._accepted = 0
        self._hellos = 0
        self._facts = 0
        self._requests = 0

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, channel: Channel | None = None) -> None:
        """Listen on ``channel`` (opened earlier, before the child was spawned) or on a new
        one. Raises OSError (nothing left behind)."""
        try:
            if channel is None:
                channel = open_channel()
            self._channel = channel
            self.dir, self.path, self.token = channel.dir, channel.path, channel.token
            self._lsock = channel.sock
            self._loop.add_reader(channel.sock.fileno(), self._on_accept)
        except OSError:
            self.close()
            raise

    def env(self) -> dict[str, str]:
        """The variables to add to the child's environment (empty before ``start()``)."""
        if self.path is None:
            return {}
        return {ENV_SOCKET: self.path, ENV_TOKEN: self.token}

    def close(self) -> None:
        """Close every connection and the listener; remove the socket and directory."""
        for conn in list(self._conns):
            self._drop(conn)
        if self._lsock is not None:
            self._loop.remove_reader(self._lsock.fileno())
            self._lsock = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self.path = self.dir = None

    # -- what the /cue page shows -------------------------------------------------------------
    def stats(self) -> dict[str, object]:
        return {
            "listening": self._lsock is not None,
            "trusted": self._current is not None,  # a live connection said hello
            "hellos": self._hellos,  # hellos accepted so far (one per Pi runtime)
            "live_connections": sum(1 for c in self._conns if c.live),
            "pending_connections": sum(1 for c in self._conns if not c.live),
            "connections_accepted": self._accepted,
            "facts": self._facts,
            "requests": self._requests,
            "own_writes": self._owns,
            "provenance": self._note() if self._note is not None else "",
            "rejected": dict(self._counts),
            "last_rejection": self._last_rejection,
        }

    def push_notice(self, text: str) -> bool:
        """Show ``text`` in Pi (``ctx.ui.notify``) through the current connection."""
        conn = self._current
        if conn is None:
            return False
        return self._send(conn, protocol.notify(text[:MAX_REPLY]))

    # -- accepting ----------------------------------------------------------------------------
    def _on_accept(self) -> None:
        self._accept_waiting(16)

    def _accept_waiting(self, most: int) -> None:
        """Accept (or refuse) up to ``most`` connections waiting on the listener."""
        for _ in range(most):
            if self._lsock is None:
                return
            try:
                sock, _addr = self._lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        try:
            pid, uid = peer_credentials(sock)
        except OSError:
            pid, uid = None, None
        reason = admission(
            open_now=len(self._conns),
            limit=self.max_connections,
            pid=pid,
            uid=uid,
            my_uid=os.getuid(),
            child=self._child_pid(),
        )
        if reason:
            sock.close()
            self._reject(reason)
            return
        assert pid is not None
        sock.setblocking(False)
        proto = BridgeConnection(
            self.token, self._loop.clock(), line_rate=self.line_rate, line_burst=self.line_burst
        )
        conn = _Conn(sock, sock.fileno(), pid, proto)
        self._conns.append(conn)
        self._accepted += 1
        conn.timer = self._loop.call_later(self.auth_timeout, lambda: self._on_auth_timeout(conn))
        self._loop.add_reader(conn.fd, lambda: self._on_readable(conn))

    def _on_auth_timeout(self, conn: _Conn) -> None:
        conn.timer = None
        if not conn.closed and not conn.live:
            self._reject("auth_timeout")
            self._drop(conn)

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def _recv(conn: _Conn) -> bytes | None:
        """One read: the bytes, b"" at EOF (or a broken socket), None when nothing is there."""
        try:
            return conn.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""

    def _on_readable(self, conn: _Conn) -> None:
        if conn.closed:
            return
        data = self._recv(conn)
        if data:
            self._handle(conn, conn.proto.receive(data, self._loop.clock()))
        elif data is not None:
            self._handle(conn, conn.proto.eof())

    def _handle(self, conn: _Conn, events: list[ConnectionEvent]) -> None:
        """Act on what the connection's bytes meant, in order."""
        for event in events:
            if conn.closed:
                return
            if isinstance(event, Received):
                self._emit(event.fact)
            elif isinstance(event, Refused):
                self._reject(event.reason, event.detail)
                if event.detail.startswith("own.data") and conn.live:
                    # one of Pi's own writes cuewrap cannot write: the connection no longer
                    # carries them faithfully, so it ends (Pi's extension then writes them to
                    # the terminal: docs/bridge-protocol.md, "A lost bridge")
                    self._drop(conn)
                    self._emit(BridgeGone(why="refused"))
                    return
            elif isinstance(event, Requested):
                self._request(conn, event.request)
            elif isinstance(event, Own):
                self._own(event.data)
            elif isinstance(event, Hello):
                self._go_live(conn, event.hello)
            elif isinstance(event, Gone):
                self._drop(conn)
                self._emit(BridgeGone())
            elif isinstance(event, Closed):
                self._drop(conn)

    def _own(self, data: bytes) -> None:
        if self._on_own is None:
            self._reject("no_sink", "own")
            return
        self._owns += 1
        try:
            self._on_own(data)
        except Exception:
            self._reject("own_failed", "own")

    def _go_live(self, conn: _Conn, hello: BridgeHello) -> None:
        # An older runtime's connection: take what it already sent, then end it, so that its
        # facts and its BridgeGone come before this hello.
        for old in [c for c in self._conns if c is not conn and c.live]:
            self._drain(old)
            if not old.closed:
                self._handle(old, old.proto.eof())
        if conn.timer is not None:
            conn.timer.cancel()
            conn.timer = None
        self._current = conn
        self._hellos += 1
        self._emit(hello)

    def drain_all(self) -> None:
        """Read everything already sent on every connection, EOFs included. Called when the
        child has exited: all it wrote is in the buffers, and its facts (session_shutdown,
        BridgeGone) must come before the exit fact. A connection still waiting to be
        accepted is accepted first: a child that ran its whole course while cuewrap was not
        scheduled (a loaded machine) connected, spoke and exited before the loop saw it."""
        self._accept_waiting(self.max_connections + 16)
        for conn in list(self._conns):
            self._drain(conn)

    def _drain(self, conn: _Conn) -> None:
        taken = 0
        while not conn.closed and taken < DRAIN_LIMIT:
            data = self._recv(conn)
            if data is None:
                return
            if not data:
                self._handle(conn, conn.proto.eof())
                return
            taken += len(data)
            self._handle(conn, conn.proto.receive(data, self._loop.clock()))

    def _drop(self, conn: _Conn) -> None:
        if conn.closed:
            return
        conn.closed = True
        if conn.timer is not None:
            conn.timer.cancel()
            conn.timer = None
        self._loop.remove_reader(conn.fd)
        self._loop.remove_writer(conn.fd)
        with contextlib.suppress(OSError):
            conn.sock.close()
        conn.proto.close()
        conn.outbuf.clear()
        if conn in self._conns:
            self._conns.remove(conn)
        if self._current is conn:
            self._current = None

    # -- requests and writing --------------------------------------------------------------
    def _request(self, conn: _Conn, req: Request) -> None:
        self._requests += 1
        if req.action in ("on", "off"):
            self._emit(CueToggle(enabled=req.action == "on"))
        replied = False

        def reply(text: str) -> None:
            nonlocal replied
            if replied:
                return
            replied = True
            if not conn.closed:
                self._send(conn, protocol.reply(req.id, str(text)[:MAX_REPLY]))

        if self._on_request is None:
            reply("cuewrap: no status available")
            return
        try:
            self._on_request(req.action, reply)
        except Exception as exc:  # fail open: the user still gets an answer
            self._report("bridge:on_request", exc)
            reply("cuewrap: internal error (see the decision log)")

    def _send(self, conn: _Conn, message: dict[str, object]) -> bool:
        data = protocol.encode(message)
        if len(conn.outbuf) + len(data) > self.max_outbuf:
            self._reject("outbound_full")
            return False
        conn.outbuf += data
        if not self._loop.has_writer(conn.fd):
            self._flush(conn)
        return True

    def _flush(self, conn: _Conn) -> None:
        if conn.closed:
            return
        try:
            sent = conn.sock.send(conn.outbuf)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:  # the peer went away; reading will see the EOF
            conn.outbuf.clear()
            sent = 0
        del conn.outbuf[:sent]
        if conn.outbuf and not self._loop.has_writer(conn.fd):
            self._loop.add_writer(conn.fd, lambda: self._flush(conn))
        elif not conn.outbuf:
            self._loop.remove_writer(conn.fd)

    # -- reporting ----------------------------------------------------------------------------
    def _emit(self, fact: Fact) -> None:
        self._facts += 1
        try:
            self._on_fact(fact)
        except Exception as exc:  # fail open: the next line still gets through
            self._report("bridge:on_fact", exc)

    def _reject(self, reason: str, detail: str = "") -> None:
        self._counts[reason] += 1
        self._last_rejection = f"{reason}: {detail}" if detail else reason
        if self._on_reject is None:
            return
        now = self._loop.clock()
        rate = self.reject_reports_per_s
        self._report_budget = min(rate, self._report_budget + (now - self._report_refilled) * rate)
        self._report_refilled = now
        if self._report_budget < 1.0:
            return
        self._report_budget -= 1.0
        try:
            self._on_reject(reason)
        except Exception as exc:
            self._report("bridge:on_reject", exc)

    def _report(self, where: str, exc: BaseException) -> None:
        if self._loop.on_error is not None:
            with contextlib.suppress(Exception):
                self._loop.on_error(where, exc)
