"""A scripted fake OpenAI Responses API for driving real Codex CLI in tests.

Serves ``POST /v1/responses`` on 127.0.0.1 (server-sent events: ``response.created``,
``response.output_item.added``, ``response.output_text.delta``, ``response.output_item.done``,
``response.completed``) and ``GET /v1/models``. Only a request that offers tools (``"tools"``
in its body: the agent's own turns) takes a *step* from the queue; every other request (a
title, a summary), and an agent turn when the queue is empty, gets the text ``default``.

    # tests/ is on sys.path under pytest (rootdir conftest, no __init__.py)
    from fakeresponses import FakeResponses, text, tool_call

    with FakeResponses([tool_call("shell", {"command": ["touch", "x"]}), text("done")]) as f:
        f.base_url             # "http://127.0.0.1:PORT/v1"
        f.wait_turns(2)        # block until two agent turns were asked for
        f.turns                # the body (parsed JSON) of every agent turn, in order
        f.ended                # when each agent turn's last event was written (monotonic)

Steps: ``text(content)``, ``tool_call(name, arguments)`` (one ``function_call`` item, call ids
``call_1``… per server), ``http_error(status, message)``; the first two take ``delay=``
(seconds before the first byte) and ``chunk_delay=`` (seconds between events; default 0.01).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "gpt-5-codex"

__all__ = ["MODEL_ID", "FakeResponses", "Step", "http_error", "text", "tool_call"]


@dataclass(frozen=True)
class Step:
    """One scripted reply. Build with :func:`text`, :func:`tool_call` or :func:`http_error`."""

    kind: str  # "text" | "tool_call" | "error"
    text: str = ""
    name: str = ""
    arguments: str = "{}"  # the call's arguments, JSON
    status: int = 0
    delay: float = 0.0
    chunk_delay: float | None = None


def text(content: str = "done", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    return Step("text", text=content, delay=delay, chunk_delay=chunk_delay)


def tool_call(
    name: str, arguments: dict[str, Any], *, delay: float = 0.0, chunk_delay: float | None = None
) -> Step:
    return Step(
        "tool_call",
        name=name,
        arguments=json.dumps(arguments),
        delay=delay,
        chunk_delay=chunk_delay,
    )


def http_error(status: int = 400, message: str = "bad request") -> Step:
    """An HTTP error with an OpenAI error body (``invalid_request_error``: not retried)."""
    return Step("error", text=message, status=status)


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def _json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            model = {"id": MODEL_ID, "object": "model", "owned_by": "cuewrap-tests"}
            self._json(200, {"object": "list", "data": [model], "models": []})
            return
        self.server.fake._note_other("GET " + path)
        self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding", "") == "zstd":  # pragma: no cover - not asked
            self._json(415, {"error": {"message": "zstd", "type": "invalid_request_error"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        fake = self.server.fake
        if not path.endswith("/responses"):
            fake._note_other("POST " + path)
            self._json(404, {"error": {"message": path, "type": "invalid_request_error"}})
            return
        step, call_id, n = fake._take(body)
        if step.delay:
            time.sleep(step.delay)
        if step.kind == "error":
            error = {"message": step.text, "type": "invalid_request_error", "code": None}
            self._json(step.status, {"error": error})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        gap = step.chunk_delay if step.chunk_delay is not None else fake.chunk_delay
        try:
            for chunk in _events(step, call_id, n, body):
                self.wfile.write(chunk)
                self.wfile.flush()
                if gap:
                    time.sleep(gap)
        except (BrokenPipeError, ConnectionResetError):
            pass
        if body.get("tools"):
            fake.ended.append(time.monotonic())
        self.close_connection = True


def _events(step: Step, call_id: str, n: int, body: dict[str, Any]) -> Iterator[bytes]:
    rid = f"resp_{n}"
    response = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", MODEL_ID),
        "status": "in_progress",
        "output": [],
    }
    yield _sse({"type": "response.created", "response": response})
    if step.kind == "tool_call":
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": call_id,
            "name": step.name,
            "arguments": "",
            "status": "in_progress",
        }
        yield _sse({"type": "response.output_item.added", "output_index": 0, "item": item})
        half = len(step.arguments) // 2
        for part in (step.arguments[:half], step.arguments[half:]):
            yield _sse(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "delta": part,
                }
            )
        done = dict(item, arguments=step.arguments, status="completed")
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        yield _sse({"type": "response.output_item.added", "output_index": 0, "item": item})
        words = step.text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            yield _sse(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": piece,
                }
            )
        content = [{"type": "output_text", "text": step.text, "annotations": []}]
        done = dict(item, content=content, status="completed")
    yield _sse({"type": "response.output_item.done", "output_index": 0, "item": done})
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    final = dict(response, status="completed", output=[done], usage=usage)
    yield _sse({"type": "response.completed", "response": final})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeResponses


class FakeResponses:
    """See the module docstring."""

    def __init__(
        self, steps: list[Step] | None = None, *, default: str = "done", chunk_delay: float = 0.01
    ) -> None:
        self._queue: deque[Step] = deque(steps or [])
        self.default = default
        self.chunk_delay = chunk_delay
        self.turns: list[dict[str, Any]] = []  # agent turns (requests with tools)
        self.others = 0  # other requests to /v1/responses
        self.ended: list[float] = []  # when each agent turn's stream was written (monotonic)
        self.unknown: list[str] = []  # paths not served
        self._lock = threading.Condition()
        self._ids = 0
        self._n = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeResponses:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._queue.extend(steps)

    def _take(self, body: dict[str, Any]) -> tuple[Step, str, int]:
        with self._lock:
            self._n += 1
            if not body.get("tools"):
                self.others += 1
                return text(self.default), "", self._n
            self.turns.append(body)
            self._lock.notify_all()
            step = self._queue.popleft() if self._queue else text(self.default)
            call_id = ""
            if step.kind == "tool_call":
                self._ids += 1
                call_id = f"call_{self._ids}"
            return step, call_id, self._n

    def _note_other(self, path: str) -> None:
        with self._lock:
            self.unknown.append(path)

    def wait_turns(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.turns) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.turns)} of {n} agent turns after {timeout} s")
                self._lock.wait(left)
            return list(self.turns)


@contextlib.contextmanager
def serve(steps: list[Step] | None = None, **kw: Any) -> Iterator[FakeResponses]:
    with FakeResponses(steps, **kw) as f:
        yield f


if __name__ == "__main__":  # a manual run: python tests/fakeresponses.py [TEXT]
    import sys

    with FakeResponses([text(" ".join(sys.argv[1:]) or "Hello from the fake API.")]) as f:
        print(f.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
