"""A scripted fake Gemini API (generateContent) for driving real Gemini CLI in tests.

Serves ``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`` (server-sent events, one
``GenerateContentResponse`` per event), ``…:generateContent`` (one JSON answer),
``…:countTokens`` and ``GET /v1beta/models`` on 127.0.0.1 (Gemini CLI's
``GOOGLE_GEMINI_BASE_URL``). Only a request that offers tools (``"tools"`` in its body: the
agent's own turns) takes a *step* from the queue; every other request (a check, a summary), and
an agent turn when the queue is empty, gets the text ``default``.

    from fakegemini import FakeGemini, text, function_call, http_error

    with FakeGemini([function_call("run_shell_command", {"command": "ls"}), text("ok")]) as f:
        f.base_url             # "http://127.0.0.1:PORT"
        f.turns                # the body (parsed JSON) of every agent turn, in order
        f.ended                # when each agent turn's last event was written (monotonic)

Steps: ``text(content)``, ``function_call(name, args)``, ``http_error(status, message)``; the
first two take ``delay=`` (seconds before the first byte) and ``chunk_delay=`` (seconds
between the text's events; default 0.01).
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

MODEL_ID = "gemini-2.5-flash"

__all__ = ["MODEL_ID", "FakeGemini", "Step", "function_call", "http_error", "text"]


@dataclass(frozen=True)
class Step:
    """One scripted reply. Build with :func:`text`, :func:`function_call` or :func:`http_error`."""

    kind: str  # "text" | "call" | "error"
    text: str = ""
    name: str = ""
    args: str = "{}"  # the call's arguments, JSON
    status: int = 0
    delay: float = 0.0
    chunk_delay: float | None = None


def text(content: str = "done", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    return Step("text", text=content, delay=delay, chunk_delay=chunk_delay)


def function_call(name: str, args: dict[str, Any], *, delay: float = 0.0) -> Step:
    return Step("call", name=name, args=json.dumps(args), delay=delay)


def http_error(status: int = 400, message: str = "bad request") -> Step:
    """An HTTP error with a Google API error body (a 4xx: not retried)."""
    return Step("error", text=message, status=status)


def _response(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": MODEL_ID}


def _events(step: Step) -> Iterator[dict[str, Any]]:
    if step.kind == "call":
        call = {"functionCall": {"name": step.name, "args": json.loads(step.args)}}
        yield _response([call], "STOP")
        return
    words = step.text.split(" ")
    for i, word in enumerate(words):
        last = i == len(words) - 1
        yield _response([{"text": word if last else word + " "}], "STOP" if last else None)


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
        self._json(200, {"models": [{"name": f"models/{MODEL_ID}"}]})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        fake = self.server.fake
        if path.endswith(":countTokens"):
            self._json(200, {"totalTokens": 10})
            return
        if not path.endswith((":streamGenerateContent", ":generateContent")):
            fake._note_other(path)
            self._json(404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})
            return
        step = fake._take(body)
        if step.delay:
            time.sleep(step.delay)
        if step.kind == "error":
            error = {"code": step.status, "message": step.text, "status": "INVALID_ARGUMENT"}
            self._json(step.status, {"error": error})
            return
        events = list(_events(step))
        if path.endswith(":generateContent"):
            whole = "".join(
                p.get("text", "") for e in events for p in e["candidates"][0]["content"]["parts"]
            )
            parts = (
                events[0]["candidates"][0]["content"]["parts"]
                if step.kind == "call"
                else [{"text": whole}]
            )
            self._json(200, _response(parts, "STOP"))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        gap = step.chunk_delay if step.chunk_delay is not None else fake.chunk_delay
        try:
            for i, event in enumerate(events):
                if i and gap:
                    time.sleep(gap)
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if body.get("tools"):
            fake.ended.append(time.monotonic())
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeGemini


class FakeGemini:
    """See the module docstring."""

    def __init__(
        self, steps: list[Step] | None = None, *, default: str = "done", chunk_delay: float = 0.01
    ) -> None:
        self._queue: deque[Step] = deque(steps or [])
        self.default = default
        self.chunk_delay = chunk_delay
        self.turns: list[dict[str, Any]] = []
        self.others = 0
        self.ended: list[float] = []
        self.unknown: list[str] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def start(self) -> FakeGemini:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _take(self, body: dict[str, Any]) -> Step:
        with self._lock:
            if not body.get("tools"):
                self.others += 1
                return text(self.default)
            self.turns.append(body)
            return self._queue.popleft() if self._queue else text(self.default)

    def _note_other(self, path: str) -> None:
        with self._lock:
            self.unknown.append(path)


@contextlib.contextmanager
def serve(steps: list[Step] | None = None, **kw: Any) -> Iterator[FakeGemini]:
    with FakeGemini(steps, **kw) as f:
        yield f
