"""BridgeServer with real Unix sockets on a real Loop (single thread, fake clock)."""

from __future__ import annotations

import gc
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from shared import HELLO, enc

from cuewrap.bridge import protocol
from cuewrap.bridge.server import ENV_SOCKET, ENV_TOKEN, BridgeServer
from cuewrap.facts import (
    AgentEnd,
    AgentSettled,
    AgentStart,
    BridgeGone,
    BridgeHello,
    CueToggle,
    Fact,
)
from cuewrap.loop import Loop

pytestmark = pytest.mark.unit


class Harness:
    def __init__(self, child_pid: Callable[[], int | None] = os.getpid) -> None:
        self.now = 1000.0
        self.errors: list[tuple[str, BaseException]] = []
        self.loop = Loop(on_error=lambda where, exc: self.errors.append((where, exc)))
        self.loop.clock = lambda: self.now
        self.facts: list[Fact] = []
        self.rejects: list[str] = []
        self.requests: list[str] = []
        self.answer: Callable[[str], str] = lambda action: f"page:{action}"
        self.server = BridgeServer(
            self.loop,
            child_pid=child_pid,
            on_fact=self.facts.append,
            on_reject=self.rejects.append,
            on_request=self._on_request,
        )
        self.clients: list[socket.socket] = []

    def _on_request(self, action: str, reply: Callable[[str], None]) -> None:
        self.requests.append(action)
        reply(self.answer(action))

    def start(self) -> Harness:
        self.server.start()
        return self

    def pump(self, until: Callable[[], bool] = lambda: False, rounds: int = 200) -> None:
        for _ in range(rounds):
            self.loop.run_once(0.01)
            if until():
                return

    def connect(self) -> socket.socket:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        assert self.server.path
        c.connect(self.server.path)
        c.settimeout(5)
        self.clients.append(c)
        self.pump(lambda: self.server.stats()["connections_accepted"] or self.rejected())
        return c

    def live(self, **hello: Any) -> socket.socket:
        """A connection that sent auth + hello."""
        c = self.connect()
        n = len(self.facts)
        c.sendall(enc({"type": "auth", "token": self.server.token}))
        c.sendall(enc({**HELLO, "pid": os.getpid(), **hello}))
        self.pump(lambda: len(self.facts) > n)
        assert isinstance(self.facts[-1], BridgeHello)
        return c

    def rejected(self) -> dict[str, int]:
        r = self.server.stats()["rejected"]
        assert isinstance(r, dict)
        return r

    def closed_by_server(self, c: socket.socket) -> bool:
        self.pump(rounds=5)
        c.settimeout(2)
        try:
            while True:
                data = c.recv(65536)
                if not data:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        for c in self.clients:
            c.close()
        self.server.close()
        self.loop.close()


@pytest.fixture
def runtime_dir() -> Iterator[str]:
    """A short XDG_RUNTIME_DIR: pytest's tmp_path (pytest-NNN, the test's name) plus the
    socket's own directory can pass the socket path limit, and cuewrap then rightly falls
    back to the temp directory."""
    d = tempfile.mkdtemp(prefix="cw-rt-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def h(runtime_dir: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime_dir)
    harness = Harness().start()
    yield harness
    harness.close()
    assert not harness.errors


# -- setup ----------------------------------------------------------------------------------


def test_private_dir_socket_env_and_cleanup(h: Harness, runtime_dir: str) -> None:
    env = h.server.env()
    assert set(env) == {ENV_SOCKET, ENV_TOKEN}
    path, d = env[ENV_SOCKET], h.server.dir
    assert d and os.path.dirname(path) == d and os.path.dirname(d) == runtime_dir
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    assert len(env[ENV_TOKEN]) == 64 and int(env[ENV_TOKEN], 16) >= 0
    h.server.close()
    assert not os.path.exists(path) and not os.path.exists(d)
    assert h.server.env() == {}
    h.server.close()  # idempotent


def test_tokens_differ_between_servers() -> None:
    a = BridgeServer(Loop(), child_pid=os.getpid, on_fact=lambda f: None)
    b = BridgeServer(Loop(), child_pid=os.getpid, on_fact=lambda f: None)
    assert a.token != b.token


def test_start_without_runtime_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    s = BridgeServer(Loop(), child_pid=os.getpid, on_fact=lambda f: None)
    s.start()
    try:
        assert s.path and os.path.exists(s.path)
    finally:
        s.close()


# -- who may connect --------------------------------------------------------------------------


def test_right_pid_and_token_accepted(h: Harness) -> None:
    c = h.live()
    c.sendall(enc({"type": "agent_start"}) + enc({"type": "agent_settled", "aborted": False}))
    h.pump(lambda: len(h.facts) == 3)
    assert h.facts[1:] == [AgentStart(), AgentSettled(False)]
    hello = h.facts[0]
    assert isinstance(hello, BridgeHello) and hello.pid == os.getpid() and hello.mode == "tui"
    st = h.server.stats()
    assert st["trusted"] is True and st["hellos"] == 1 and st["live_connections"] == 1
    assert st["rejected"] == {}


def test_wrong_token_refused(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({"type": "auth", "token": "0" * 64}) + enc({**HELLO, "pid": os.getpid()}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"bad_token": 1}
    assert h.facts == [] and h.rejects == ["bad_token"]
    assert h.server.stats()["trusted"] is False


def test_hello_without_auth_refused(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({**HELLO, "pid": os.getpid()}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"no_auth": 1} and h.facts == []


def test_token_in_wrong_field_or_type_refused(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({"type": "auth", "secret": h.server.token}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"no_auth": 1}


def test_other_process_with_right_token_refused(h: Harness) -> None:
    assert h.server.path
    code = (
        "import socket, sys, json\n"
        "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "c.connect(sys.argv[1])\n"
        "c.settimeout(5)\n"
        "try:\n"
        "    c.sendall(json.dumps({'type': 'auth', 'token': sys.argv[2]}).encode() + b'\\n')\n"
        "    print('eof' if c.recv(100) == b'' else 'data')\n"
        "except OSError as e:\n"
        "    print('eof')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, h.server.path, h.server.token],
        stdout=subprocess.PIPE,
        text=True,
    )
    h.pump(lambda: bool(h.rejected()) or proc.poll() is not None, rounds=1000)
    out, _ = proc.communicate(timeout=10)
    assert out.strip() == "eof"
    assert h.rejected() == {"wrong_pid": 1}
    assert h.facts == []


def test_no_child_yet_refused(runtime_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime_dir)
    h = Harness(child_pid=lambda: None).start()
    try:
        c = h.connect()
        assert h.closed_by_server(c)
        assert h.rejected() == {"no_child": 1}
    finally:
        h.close()


def test_bad_protocol_version_refused(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({"type": "auth", "token": h.server.token}))
    c.sendall(enc({**HELLO, "protocol": 2, "pid": os.getpid()}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"bad_version": 1} and h.facts == []


def test_second_line_must_be_hello(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({"type": "auth", "token": h.server.token}) + enc({"type": "agent_start"}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"no_hello": 1} and h.facts == []
    c = h.connect()
    c.sendall(enc({"type": "auth", "token": h.server.token}) + enc({**HELLO, "pid": "x"}))
    assert h.closed_by_server(c)
    assert h.rejected() == {"no_hello": 2, "bad_field": 1}


def test_auth_timeout(h: Harness) -> None:
    c = h.connect()
    h.now += h.server.auth_timeout + 0.1
    assert h.closed_by_server(c)
    assert h.rejected() == {"auth_timeout": 1}


def test_connections_bounded(h: Harness) -> None:
    idle = [h.connect() for _ in range(h.server.max_connections)]
    extra = h.connect()
    assert h.closed_by_server(extra)
    assert h.rejected() == {"too_many_connections": 1}
    assert h.server.stats()["pending_connections"] == len(idle)


# -- lines on a live connection ------------------------------------------------------------


def test_line_split_across_reads(h: Harness) -> None:
    c = h.live()
    data = enc({"type": "agent_end", "stopReason": "stop"})
    for i in range(len(data)):
        c.sendall(data[i : i + 1])
        h.pump(rounds=1)
    h.pump(lambda: len(h.facts) == 2)
    assert h.facts[-1] == AgentEnd("stop")


def test_bad_lines_dropped_and_counted(h: Harness) -> None:
    c = h.live()
    c.sendall(
        b"garbage\n"
        + enc({"type": "what"})
        + enc({"type": "agent_settled", "aborted": "no"})
        + enc({"type": "auth", "token": h.server.token})
        + enc({**HELLO, "pid": os.getpid()})
        + b"x" * (protocol.MAX_LINE + 10)
        + b"\n"
        + enc({"type": "agent_start"})
    )
    h.pump(lambda: len(h.facts) == 2)
    h.pump(rounds=3)
    assert h.facts[1:] == [AgentStart()]
    assert h.rejected() == {
        "bad_json": 1,
        "unknown_type": 1,
        "bad_field": 1,
        "unexpected": 2,
        "too_long": 1,
    }
    assert h.server.stats()["last_rejection"] == "too_long"
    assert h.server.stats()["trusted"] is True  # bad lines do not end the connection


def test_flood_of_malformed_and_oversized_lines_bounded(h: Harness) -> None:
    """10,000 bad lines (1,000 of them over 16 KiB): all dropped and counted, memory bounded."""
    h.server.line_burst = 100_000.0  # count by reason first; the flood limit is tested below
    c = h.live()
    bad = [
        b"{not json",
        enc({"type": "nope"})[:-1],
        enc({"type": "tool_execution_start", "toolCallId": 1, "toolName": "bash"})[:-1],
        b"\xff" * 100,
        b"",
    ]
    big = b"y" * (protocol.MAX_LINE + 4000)
    n_big = 1000
    lines = [big if i % 10 == 0 else bad[i % len(bad)] for i in range(10_000)]
    assert sum(1 for x in lines if x is big) == n_big

    def writer() -> None:
        for x in lines:
            c.sendall(x + b"\n")
        c.sendall(enc({"type": "agent_start"}))

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t = threading.Thread(target=writer)
    t.start()
    max_inbuf = 0
    for _ in range(20000):
        h.loop.run_once(0.01)
        for conn in h.server._conns:
            max_inbuf = max(max_inbuf, conn.proto.buffered)
        if h.facts and h.facts[-1] == AgentStart():
            break
    t.join(timeout=10)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert h.facts[-1] == AgentStart()
    counts = h.rejected()
    assert sum(counts.values()) == 10_000
    assert counts["too_long"] == n_big
    assert max_inbuf <= protocol.MAX_LINE
    assert peak < 2 * 1024 * 1024, peak  # ~20 MB went through
    assert len(h.rejects) < 100  # on_reject is rate-limited; stats() has every count


def test_flood_limit(h: Harness) -> None:
    h.server.line_burst = 50.0
    c = h.live()  # the auth and hello lines used 2 of the burst
    c.sendall(enc({"type": "agent_start"}) * 60)
    h.pump(lambda: sum(h.rejected().values()) == 12)
    assert h.facts.count(AgentStart()) == 48
    assert h.rejected() == {"flood": 12}
    h.now += 1.0  # budget refills at line_rate per second
    c.sendall(enc({"type": "agent_start"}))
    h.pump(lambda: h.facts.count(AgentStart()) == 49)


def test_on_fact_exception_does_not_stop_the_stream(h: Harness) -> None:
    c = h.live()
    seen: list[Fact] = []

    def flaky(f: Fact) -> None:
        seen.append(f)
        if isinstance(f, AgentStart):
            raise RuntimeError("boom")

    h.server._on_fact = flaky
    c.sendall(enc({"type": "agent_start"}) + enc({"type": "agent_settled", "aborted": True}))
    h.pump(lambda: len(seen) == 2)
    assert seen == [AgentStart(), AgentSettled(True)]
    assert [w for w, _ in h.errors] == ["bridge:on_fact"]
    h.errors.clear()


# -- end of a runtime ----------------------------------------------------------------------


def test_drain_all_takes_a_whole_runtime_the_loop_never_saw(h: Harness) -> None:
    """On a loaded machine Pi can connect, speak and exit before cuewrap's loop runs once:
    the connection still waits on the listener when the exit is seen. ``drain_all`` (called
    at the child's exit) accepts it and reads it all, so nothing Pi said is lost."""
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert h.server.path
    c.connect(h.server.path)
    c.sendall(
        enc({"type": "auth", "token": h.server.token})
        + enc({**HELLO, "pid": os.getpid()})
        + enc({"type": "agent_start"})
        + enc({"type": "agent_settled", "aborted": False})
        + enc({"type": "session_shutdown", "reason": "quit"})
    )
    c.close()
    assert h.server.stats()["connections_accepted"] == 0  # the loop never ran
    h.server.drain_all()
    assert [type(f).__name__ for f in h.facts] == [
        "BridgeHello",
        "AgentStart",
        "AgentSettled",
        "SessionShutdown",
        "BridgeGone",
    ]
    assert h.server.stats()["connections_accepted"] == 1


def test_eof_gives_bridge_gone(h: Harness) -> None:
    c = h.live()
    c.sendall(enc({"type": "session_shutdown", "reason": "quit"}))
    c.close()
    h.pump(lambda: h.facts[-1:] == [BridgeGone()])
    assert [type(f).__name__ for f in h.facts] == ["BridgeHello", "SessionShutdown", "BridgeGone"]
    st = h.server.stats()
    assert st["trusted"] is False and st["live_connections"] == 0


def test_eof_before_hello_is_not_bridge_gone(h: Harness) -> None:
    c = h.connect()
    c.sendall(enc({"type": "auth", "token": h.server.token}))
    h.pump(rounds=5)
    c.close()
    h.pump(lambda: bool(h.rejected()))
    assert h.facts == [] and h.rejected() == {"no_hello": 1}


def test_new_runtime_supersedes_old_connection_in_order(h: Harness) -> None:
    """/reload: the old connection's last lines and its BridgeGone come before the new hello,
    even when the new connection is read first."""
    old = h.live(sessionId="old")
    old.sendall(enc({"type": "session_shutdown", "reason": "reload"}))
    old_fd = h.server._conns[0].fd
    h.loop.remove_reader(old_fd)  # force: the new connection is read first
    new = h.connect()
    new.sendall(enc({"type": "auth", "token": h.server.token}))
    new.sendall(enc({**HELLO, "sessionId": "new", "pid": os.getpid()}))
    h.pump(lambda: len(h.facts) >= 4)
    names = [type(f).__name__ for f in h.facts]
    assert names == ["BridgeHello", "SessionShutdown", "BridgeGone", "BridgeHello"]
    last = h.facts[-1]
    assert isinstance(last, BridgeHello) and last.session_id == "new"
    assert h.closed_by_server(old)
    new.sendall(enc({"type": "agent_start"}))
    h.pump(lambda: h.facts[-1] == AgentStart())
    st = h.server.stats()
    assert st["live_connections"] == 1 and st["hellos"] == 2 and st["trusted"] is True
    del new


# -- two-way ----------------------------------------------------------------------------------


def read_line(c: socket.socket) -> dict[str, Any]:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = c.recv(65536)
        assert chunk, "EOF"
        buf += chunk
    return json.loads(buf)


def test_status_request_gets_reply(h: Harness) -> None:
    c = h.live()
    c.sendall(enc({"type": "request", "id": 5, "action": "status"}))
    h.pump(lambda: bool(h.requests))
    assert read_line(c) == {"type": "reply", "id": 5, "text": "page:status"}
    assert h.requests == ["status"] and len(h.facts) == 1  # no fact for a status request


def test_toggle_request_gives_fact_then_reply(h: Harness) -> None:
    c = h.live()
    c.sendall(enc({"type": "request", "id": 1, "action": "off"}))
    h.pump(lambda: bool(h.requests))
    assert h.facts[-1] == CueToggle(False)
    assert read_line(c) == {"type": "reply", "id": 1, "text": "page:off"}
    c.sendall(enc({"type": "request", "id": 2, "action": "on"}))
    h.pump(lambda: len(h.requests) == 2)
    assert h.facts[-1] == CueToggle(True)
    assert read_line(c)["id"] == 2


def test_request_handler_error_still_answers(h: Harness) -> None:
    c = h.live()

    def boom(action: str) -> str:
        raise RuntimeError("x")

    h.answer = boom
    c.sendall(enc({"type": "request", "id": 9, "action": "status"}))
    h.pump(lambda: bool(h.requests))
    msg = read_line(c)
    assert msg["id"] == 9 and "internal error" in msg["text"]
    assert [w for w, _ in h.errors] == ["bridge:on_request"]
    h.errors.clear()


def test_push_notice(h: Harness) -> None:
    assert h.server.push_notice("nobody") is False
    c = h.live()
    assert h.server.push_notice("cuewrap: desktop notifications unavailable") is True
    assert read_line(c) == {
        "type": "notify",
        "text": "cuewrap: desktop notifications unavailable",
    }


def test_outbound_buffer_bounded(h: Harness) -> None:
    """A peer that never reads: replies pile up in the kernel, then in a bounded buffer."""
    h.answer = lambda action: "z" * 8000
    c = h.live()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    for i in range(200):
        c.sendall(enc({"type": "request", "id": i, "action": "status"}))
        h.pump(rounds=1)
    h.pump(lambda: len(h.requests) == 200)
    conn = h.server._conns[0]
    assert len(conn.outbuf) <= h.server.max_outbuf
    assert h.rejected().get("outbound_full", 0) > 0
    assert h.loop.has_writer(conn.fd)
    # reading drains it
    got = 0
    c.settimeout(0.5)
    try:
        while True:
            h.pump(rounds=2)
            data = c.recv(1 << 20)
            if not data:
                break
            got += len(data)
    except TimeoutError:
        pass
    h.pump(rounds=5)
    assert not conn.outbuf and not h.loop.has_writer(conn.fd)
    assert got > h.server.max_outbuf
