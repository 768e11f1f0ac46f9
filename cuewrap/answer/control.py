"""The session's control socket: ``<pid>.sock`` in the registry directory (docs/answering.md).

The directory is the user's own, mode 0700 (``registry.own_directory``); the socket is made
0600. A connection is kept only when its peer runs as the same uid (``SO_PEERCRED``); it
carries one request (``wire.read_request``: one line, at most ``wire.MAX_REQUEST`` bytes,
within ``REQUEST_TIME`` seconds) and gets one reply line, then it is closed. Everything runs
on the session's loop and never blocks it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from collections.abc import Callable

from cuewrap.answer import wire
from cuewrap.decisionlog import DecisionLog
from cuewrap.loop import Loop, Timer

REQUEST_TIME = 2.0  # seconds a connection has to send its request
MAX_CLIENTS = 8  # connections open at once; more are closed at accept

Reply = Callable[[bool, str], None]
Handler = Callable[[wire.Request, Reply], None]
MuteHandler = Callable[[wire.MuteRequest, Reply], None]


def peer_uid(conn: socket.socket) -> int | None:
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


class _Client:
    def __init__(self, server: ControlServer, conn: socket.socket) -> None:
        self.server = server
        self.conn = conn
        self.data = b""
        self.done = False
        self.timer: Timer | None = server.loop.call_later(REQUEST_TIME, self._too_slow)
        server.loop.add_reader(conn.fileno(), self._readable)

    def _readable(self) -> None:
        try:
            chunk = self.conn.recv(wire.MAX_REQUEST + 1 - len(self.data))
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        self.data += chunk
        got = wire.read_request(self.data)
        if isinstance(got, wire.Incomplete):
            return
        self._stop_reading()
        if isinstance(got, str):
            self.server.log.write("answer_request", result="refused", why=got)
            self.reply(False, got)
            return
        if isinstance(got, wire.PopupRequest):  # deliver/batch.py
            if self.server.on_popup is not None:
                self.server.on_popup()
            self.reply(True)
            return
        if isinstance(got, wire.MuteRequest):  # docs/attention.md
            if self.server.on_mute is None:
                self.reply(False, "this session cannot be muted from outside")
            else:
                self.server.on_mute(got, self.reply)
            return
        self.server.handler(got, self.reply)

    def _too_slow(self) -> None:
        self.timer = None
        self._stop_reading()
        self.reply(False, "no request in time")

    def _stop_reading(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        with contextlib.suppress(Exception):
            self.server.loop.remove_reader(self.conn.fileno())

    def reply(self, ok: bool, why: str = "") -> None:
        if self.done:
            return
        with contextlib.suppress(OSError):
            self.conn.send(wire.reply_line(ok, why))  # one short line: the buffer takes it
        self.close()

    def close(self) -> None:
        if self.done:
            return
        self.done = True
        self._stop_reading()
        with contextlib.suppress(OSError):
            self.conn.close()
        self.server.clients.discard(self)


class ControlServer:
    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        path: str,
        handler: Handler,
        *,
        on_mute: MuteHandler | None = None,
        on_popup: Callable[[], None] | None = None,
    ) -> None:
        """``on_mute``: ``cuewrap mute`` / ``unmute`` (wiring/attention.py; None: refused);
        ``on_popup``: another session asks this one to show the popup they share
        (deliver/batch.py)."""
        self.loop = loop
        self.log = log
        self.path = path
        self.handler = handler
        self.on_mute = on_mute
        self.on_popup = on_popup
        self.clients: set[_Client] = set()
        self.sock: socket.socket | None = None

    def start(self) -> bool:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # our own pid's: a previous process with this pid is gone
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old = os.umask(0o177)
            try:
                sock.bind(self.path)
            finally:
                os.umask(old)
            os.chmod(self.path, 0o600)
            sock.listen(MAX_CLIENTS)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            self.log.error("control", exc)
            return False
        self.sock = sock
        self.loop.add_reader(sock.fileno(), self._accept)
        return True

    def _accept(self) -> None:
        if self.sock is None:
            return
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        uid = peer_uid(conn)
        if uid != os.getuid() or len(self.clients) >= MAX_CLIENTS:
            why = "another uid" if uid != os.getuid() else "too many connections"
            self.log.write("answer_request", result="refused", why=why)
            conn.close()
            return
        conn.setblocking(False)
        self.clients.add(_Client(self, conn))

    def close(self) -> None:
        for client in list(self.clients):
            client.reply(False, "the session ended")
        if self.sock is not None:
            with contextlib.suppress(Exception):
                self.loop.remove_reader(self.sock.fileno())
            self.sock.close()
            self.sock = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)
