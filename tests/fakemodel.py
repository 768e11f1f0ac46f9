"""A scripted fake OpenAI-compatible streaming chat server for driving real Pi in tests.

Serves ``POST /v1/chat/completions`` (SSE ``chat.completion.chunk`` stream, always; Pi always
streams) and ``GET /v1/models`` on 127.0.0.1. Each chat request consumes one *step* from a
queue; when the queue is empty the server answers with ``default`` (text "done").

    # tests/ is on sys.path under pytest (rootdir conftest, no __init__.py)
    from fakemodel import FakeModel, text, tool_call, http_error, delay, hang

    with FakeModel([tool_call("bash", {"command": "sleep 2; echo hi"}), text("done")]) as fm:
        fm.base_url           # "http://127.0.0.1:PORT/v1"
        fm.push(text("more")) # append steps at any time
        fm.wait_requests(2)   # block until two chat requests were received
        fm.requests           # every chat request body (parsed JSON), in order
        fm.tool_results()     # the `role: tool` messages of the last request

Steps:
  text(content)                      assistant text, finish_reason "stop"
  tool_call(name, args)              one tool call (ids call_1, call_2, ... per server),
                                     finish_reason "tool_calls"
  tool_calls((name, args), ...)      several tool calls in one assistant message
  http_error(status, message)        HTTP error with an OpenAI-style JSON error body (type
                                     "server_error", which Pi retries whatever the status;
                                     error_type="invalid_request_error" for one it does not)
  delay(seconds, then=text("done"))  wait before the first byte of ``then``
  hang(partial="")                   send headers (and optional partial text), then never
                                     finish until the client disconnects or the server stops
Every step also takes ``delay=`` (seconds before the first byte) and ``chunk_delay=``
(seconds between SSE chunks; default: the server's ``chunk_delay``, 0.01). A queue entry may
also be a callable ``(request_body) -> Step``.

Standalone (used by ``scripts/demo``)::

    python tests/fakemodel.py [--port N] [--script script.json] [--chunk-delay S]

prints ``http://127.0.0.1:PORT/v1`` on stdout once listening and serves until killed. The
script is a JSON list of step objects, e.g. ``[{"type": "tool_call", "name": "bash",
"arguments": {"command": "echo hi"}}, {"type": "text", "text": "done"}]`` (keys: type =
text|tool_call|tool_calls|http_error|hang, text, name, arguments, calls, status, message,
partial, delay, chunk_delay). Without ``--script``: a bash tool call
``echo hello from the fake model; sleep 2``, then text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

MODEL_ID = "fake-model"

__all__ = [
    "DEMO_SCRIPT",
    "MODEL_ID",
    "FakeModel",
    "Step",
    "delay",
    "hang",
    "http_error",
    "text",
    "tool_call",
    "tool_calls",
]


@dataclass(frozen=True)
class Step:
    """One scripted reply. Build with the helper functions, not directly."""

    type: str  # text | tool_calls | http_error | hang
    text: str = ""
    calls: tuple[tuple[str, str], ...] = ()  # (tool name, JSON arguments)
    status: int = 500
    message: str = ""
    error_type: str = "server_error"  # http_error: the body's error type
    delay: float = 0.0
    chunk_delay: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type}
        if self.type == "text":
            d["text"] = self.text
        elif self.type == "tool_calls":
            d["calls"] = [{"name": n, "arguments": json.loads(a)} for n, a in self.calls]
        elif self.type == "http_error":
            d["status"], d["message"], d["error_type"] = self.status, self.message, self.error_type
        elif self.type == "hang":
            d["partial"] = self.text
        if self.delay:
            d["delay"] = self.delay
        if self.chunk_delay is not None:
            d["chunk_delay"] = self.chunk_delay
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Step:
        kind = d.get("type", "text")
        common = {"delay": float(d.get("delay", 0.0)), "chunk_delay": d.get("chunk_delay")}
        if kind == "text":
            return text(str(d.get("text", "done")), **common)
        if kind == "tool_call":
            return tool_call(str(d["name"]), d.get("arguments", {}), **common)
        if kind == "tool_calls":
            return tool_calls(*[(c["name"], c.get("arguments", {})) for c in d["calls"]], **common)
        if kind == "http_error":
            return http_error(
                int(d.get("status", 500)),
                str(d.get("message", "fake upstream failure")),
                error_type=str(d.get("error_type", "server_error")),
                delay=common["delay"],
            )
        if kind == "hang":
            return hang(str(d.get("partial", "")), **common)
        raise ValueError(f"unknown step type {kind!r}")


def _args_json(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def text(content: str = "done", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    """Assistant text, then finish_reason ``stop``."""
    return Step("text", text=content, delay=delay, chunk_delay=chunk_delay)


def tool_call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    delay: float = 0.0,
    chunk_delay: float | None = None,
) -> Step:
    """One tool call (arguments: a dict, or a raw JSON string), finish_reason ``tool_calls``."""
    return tool_calls((name, arguments or {}), delay=delay, chunk_delay=chunk_delay)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str],
    delay: float = 0.0,
    chunk_delay: float | None = None,
) -> Step:
    """Several tool calls in one assistant message (Pi runs them in parallel)."""
    return Step(
        "tool_calls",
        calls=tuple((n, _args_json(a)) for n, a in calls),
        delay=delay,
        chunk_delay=chunk_delay,
    )


def http_error(
    status: int = 500,
    message: str = "fake upstream failure",
    *,
    error_type: str = "server_error",
    delay: float = 0.0,
) -> Step:
    """An HTTP error; body ``{"error": {"message": ..., "type": error_type}}``. Pi retries an
    error whose text matches its retryable patterns (``server_error`` among them)."""
    return Step("http_error", status=status, message=message, error_type=error_type, delay=delay)


def delay(seconds: float, then: Step | None = None) -> Step:
    """``then`` (default text "done") with ``seconds`` of silence before its first byte."""
    return replace(then or text("done"), delay=seconds)


def hang(partial: str = "", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    """Stream ``partial`` text (may be empty), then never finish until the client goes away
    or the server stops."""
    return Step("hang", text=partial, delay=delay, chunk_delay=chunk_delay)


DEMO_SCRIPT: list[Step] = [
    tool_call("bash", {"command": "echo hello from the fake model; sleep 2"}),
    text("The command ran: it printed hello from the fake model."),
]

QueueItem = Step | Callable[[dict[str, Any]], Step]


@dataclass
class _Served:
    """What happened to one chat request (for debugging and assertions)."""

    index: int
    step: Step
    completed: bool = False
    disconnected: bool = False
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None  # wall-clock time of its last byte (the decision log's clock)


class FakeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Served:
    """A fake server of the tests, served by a daemon thread (also the fake Anthropic API):
    ``start()`` and ``stop()``, or ``with``."""

    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        self._shut()

    def _serve(self, server: ThreadingHTTPServer, poll_interval: float = 0.5) -> None:
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True
        )
        self._thread.start()

    def _shut(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def serve_until_interrupted(self, base_url: str) -> None:
        """A manual run: say where it serves (``base_url``), serve until Ctrl-C."""
        print(base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class JSONHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler that answers in JSON (also the fake Anthropic API's)."""

    protocol_version = "HTTP/1.1"
    #: end the connection after each JSON answer
    close_after_json = False

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def _json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if self.close_after_json:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        if self.close_after_json:
            self.close_connection = True


class _Handler(JSONHandler):
    server: _Server
    close_after_json = True

    # -- plumbing ---------------------------------------------------------------------------

    def _client_gone(self) -> bool:
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _sleep(self, seconds: float) -> bool:
        """Sleep, waking early when the client disconnects or the server stops.
        Returns False in that case."""
        fm = self.server.fake
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return True
            if fm._stopping.wait(min(left, 0.05)) or self._client_gone():
                return False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        obj = {
            "id": self._cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return b"data: " + json.dumps(obj).encode() + b"\n\n"

    # -- routes -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL_ID, "object": "model", "owned_by": "cuewrap-tests"}],
                },
            )
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        fm = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
            return
        served = fm._take(body)
        step = served.step
        try:
            self._serve(step, served)
        except (BrokenPipeError, ConnectionResetError):
            served.disconnected = True
        finally:
            self.close_connection = True

    def _serve(self, step: Step, served: _Served) -> None:
        fm = self.server.fake
        if step.delay and not self._sleep(step.delay):
            served.disconnected = True
            return
        if step.type == "http_error":
            self._json(step.status, {"error": {"message": step.message, "type": step.error_type}})
            served.completed = True
            return
        self._cid = f"chatcmpl-fake-{served.index + 1}"
        cd = fm.chunk_delay if step.chunk_delay is None else step.chunk_delay
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        chunks: list[bytes] = [self._chunk({"role": "assistant", "content": ""})]
        if step.type in ("text", "hang"):
            for piece in re.findall(r"\s*\S+\s*|\s+", step.text):
                chunks.append(self._chunk({"content": piece}))
        if step.type == "tool_calls":
            for i, (name, args) in enumerate(step.calls):
                cid = fm._next_call_id()
                chunks.append(
                    self._chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": cid,
                                    "type": "function",
                                    "function": {"name": name, "arguments": ""},
                                }
                            ]
                        }
                    )
                )
                half = len(args) // 2
                for part in (args[:half], args[half:]):
                    if part:
                        chunks.append(
                            self._chunk(
                                {"tool_calls": [{"index": i, "function": {"arguments": part}}]}
                            )
                        )
        for i, c in enumerate(chunks):
            if i and cd and not self._sleep(cd):
                served.disconnected = True
                return
            self.wfile.write(c)
            self.wfile.flush()
        if step.type == "hang":
            while self._sleep(3600):
                pass
            served.disconnected = True
            return
        finish = "tool_calls" if step.type == "tool_calls" else "stop"
        prompt_tokens = max(1, len(json.dumps(fm.requests[served.index])) // 4)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 20,
            "total_tokens": prompt_tokens + 20,
        }
        self.wfile.write(self._chunk({}, finish, usage=usage))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        served.ended = time.time()
        served.completed = True


class _Server(FakeHTTPServer):
    fake: FakeModel


class FakeModel(Served):
    """The fake server. Start with ``start()`` or use as a context manager."""

    def __init__(
        self,
        steps: list[QueueItem] | None = None,
        *,
        port: int = 0,
        chunk_delay: float = 0.01,
        default: QueueItem | None = None,
    ) -> None:
        self.chunk_delay = chunk_delay
        self.default: QueueItem = default or text("done")
        self.requests: list[dict[str, Any]] = []
        self.served: list[_Served] = []
        self._queue: deque[QueueItem] = deque(steps or [])
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._call_seq = 0
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeModel:
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.fake = self
        self._serve(server, poll_interval=0.05)
        return self

    def stop(self) -> None:
        """Stop serving; any hanging stream is ended (the connection is closed)."""
        self._stopping.set()
        self._shut()

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------
    def push(self, *steps: QueueItem) -> None:
        """Append steps to the queue."""
        with self._lock:
            self._queue.extend(steps)

    def script(self, steps: list[QueueItem]) -> None:
        """Replace the pending queue."""
        with self._lock:
            self._queue = deque(steps)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next_call_id(self) -> str:
        with self._lock:
            self._call_seq += 1
            return f"call_{self._call_seq}"

    def _take(self, body: dict[str, Any]) -> _Served:
        with self._lock:
            item: QueueItem = self._queue.popleft() if self._queue else self.default
            self.requests.append(body)
            index = len(self.requests) - 1
        step = item(body) if callable(item) else item
        served = _Served(index=index, step=step)
        with self._lock:
            self.served.append(served)
            self._lock.notify_all()
        return served

    # -- inspection -----------------------------------------------------------------------
    def wait_requests(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until at least ``n`` chat requests arrived; return all request bodies."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= n, timeout):
                raise TimeoutError(f"fake model got {len(self.requests)} requests, wanted {n}")
            return list(self.requests)

    def messages(self, index: int = -1) -> list[dict[str, Any]]:
        """The ``messages`` of request ``index`` (default: the last one)."""
        return list(self.requests[index].get("messages", []))

    def tool_results(self, index: int = -1) -> list[dict[str, Any]]:
        """The ``role: tool`` messages of request ``index`` (``tool_call_id``, ``content``)."""
        return [m for m in self.messages(index) if m.get("role") == "tool"]

    @staticmethod
    def content_text(message: dict[str, Any]) -> str:
        """A message's content as plain text (content may be a string or a parts list)."""
        c = message.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            return "".join(p.get("text", "") for p in c if isinstance(p, dict))
        return ""

    def tool_names(self, index: int = -1) -> list[str]:
        """Names of the tools offered to the model in request ``index``."""
        return [t["function"]["name"] for t in self.requests[index].get("tools", [])]


@contextlib.contextmanager
def serve(steps: list[QueueItem] | None = None, **kw: Any) -> Iterator[FakeModel]:
    with FakeModel(steps, **kw) as fm:
        yield fm


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fake OpenAI-compatible streaming server for Pi")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--script", help="JSON file: a list of step objects")
    ap.add_argument("--chunk-delay", type=float, default=0.02)
    ap.add_argument("--default-text", default="done", help="reply once the script is used up")
    ns = ap.parse_args(argv)
    if ns.script:
        with open(ns.script, encoding="utf-8") as f:
            steps: list[QueueItem] = [Step.from_dict(d) for d in json.load(f)]
    else:
        steps = list(DEMO_SCRIPT)
    fm = FakeModel(
        steps, port=ns.port, chunk_delay=ns.chunk_delay, default=text(ns.default_text)
    ).start()
    try:
        fm.serve_until_interrupted(fm.base_url)
    finally:
        fm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
