"""A scripted fake Anthropic Messages API for driving real Claude Code in tests.

Serves ``POST /v1/messages`` on 127.0.0.1: server-sent events (``message_start``,
``content_block_start``, ``content_block_delta`` with ``text_delta`` or ``input_json_delta``,
``content_block_stop``, ``message_delta`` with the ``stop_reason``, ``message_stop``) when the
request asks to stream, one JSON message otherwise. Claude Code sends more than the
conversation (a title, a quota check…): only a request that offers tools (``"tools"`` in its
body: the agent's own turns) takes a *step* from the queue; every other request, and an
agent turn when the queue is empty, gets the text ``default``.

    # tests/ is on sys.path under pytest (rootdir conftest, no __init__.py)
    from fakeanthropic import FakeAnthropic, text, tool_use

    with FakeAnthropic([tool_use("Bash", {"command": "echo hi"}), text("done")]) as fa:
        fa.base_url            # "http://127.0.0.1:PORT" (Claude Code's ANTHROPIC_BASE_URL)
        fa.push(text("more"))  # append steps at any time
        fa.wait_turns(2)       # block until two agent turns were asked for
        fa.turns               # the body (parsed JSON) of every agent turn, in order
        fa.ended               # when each agent turn's last event was written (monotonic)

Steps: ``text(content)`` (stop reason ``end_turn``), ``tool_use(name, input)`` (one tool call,
ids ``toolu_1``… per server, stop reason ``tool_use``), ``http_error(status, message)``; the
first two take ``delay=`` (seconds before
the first byte) and ``chunk_delay=`` (seconds between events; default 0.01).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fakemodel import FakeHTTPServer, JSONHandler, Served

MODEL_ID = "claude-sonnet-4-5"

__all__ = ["MODEL_ID", "FakeAnthropic", "Step", "http_error", "text", "tool_use"]


@dataclass(frozen=True)
class Step:
    """One scripted reply. Build with :func:`text` or :func:`tool_use`."""

    kind: str  # "text" | "tool_use" | "error"
    text: str = ""
    name: str = ""
    input: str = "{}"  # the tool's input, JSON
    delay: float = 0.0
    chunk_delay: float | None = None


def text(content: str = "done", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    return Step("text", text=content, delay=delay, chunk_delay=chunk_delay)


def tool_use(
    name: str, input: dict[str, Any], *, delay: float = 0.0, chunk_delay: float | None = None
) -> Step:
    return Step(
        "tool_use", name=name, input=json.dumps(input), delay=delay, chunk_delay=chunk_delay
    )


def http_error(status: int = 400, message: str = "bad request") -> Step:
    """An HTTP error with an Anthropic error body (``invalid_request_error`` for a 4xx, which
    Claude Code does not retry; ``api_error`` otherwise)."""
    return Step("error", text=message, input=str(status))


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Handler(JSONHandler):
    server: _Server

    def do_GET(self) -> None:
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        fake = self.server.fake
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 100})
            return
        if not path.endswith("/v1/messages"):
            fake._note_other(path)
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
            return
        step, tool_id = fake._take(body)
        if step.delay:
            time.sleep(step.delay)
        if step.kind == "error":
            status = int(step.input)
            kind = "invalid_request_error" if status < 500 else "api_error"
            self._json(status, {"type": "error", "error": {"type": kind, "message": step.text}})
            return
        if not body.get("stream"):
            self._json(200, _message(step, tool_id, body))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        gap = step.chunk_delay if step.chunk_delay is not None else fake.chunk_delay
        try:
            for chunk in _events(step, tool_id, body):
                self.wfile.write(chunk)
                self.wfile.flush()
                if gap:
                    time.sleep(gap)
        except (BrokenPipeError, ConnectionResetError):
            pass
        if body.get("tools"):
            fake.ended.append(time.monotonic())
        self.close_connection = True


def _message(step: Step, tool_id: str, body: dict[str, Any]) -> dict[str, Any]:
    if step.kind == "tool_use":
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": tool_id, "name": step.name, "input": json.loads(step.input)}
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": step.text}]
        stop = "end_turn"
    return {
        "id": f"msg_{tool_id or 'text'}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL_ID),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _events(step: Step, tool_id: str, body: dict[str, Any]) -> Iterator[bytes]:
    msg = _message(step, tool_id, body)
    start = dict(msg, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": 10, "output_tokens": 1}
    yield _sse("message_start", {"type": "message_start", "message": start})
    if step.kind == "tool_use":
        block = {"type": "tool_use", "id": tool_id, "name": step.name, "input": {}}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        half = len(step.input) // 2
        for part in (step.input[:half], step.input[half:]):
            delta = {"type": "input_json_delta", "partial_json": part}
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        words = step.text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            delta = {"type": "text_delta", "text": piece}
            yield _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        stop = "end_turn"
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


class _Server(FakeHTTPServer):
    fake: FakeAnthropic


class FakeAnthropic(Served):
    """See the module docstring."""

    def __init__(
        self, steps: list[Step] | None = None, *, default: str = "done", chunk_delay: float = 0.01
    ) -> None:
        self._queue: deque[Step] = deque(steps or [])
        self.default = default
        self.chunk_delay = chunk_delay
        self.turns: list[dict[str, Any]] = []  # agent turns (requests with tools)
        self.others = 0  # other requests to /v1/messages (titles, quota checks…)
        self.ended: list[float] = []  # when each agent turn's stream was written (monotonic)
        self.unknown: list[str] = []  # paths not served
        self._lock = threading.Condition()
        self._ids = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeAnthropic:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._serve(server)
        return self

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._queue.extend(steps)

    def _take(self, body: dict[str, Any]) -> tuple[Step, str]:
        with self._lock:
            if not body.get("tools"):
                self.others += 1
                return text(self.default), ""
            self.turns.append(body)
            self._lock.notify_all()
            step = self._queue.popleft() if self._queue else text(self.default)
            tool_id = ""
            if step.kind == "tool_use":
                self._ids += 1
                tool_id = f"toolu_{self._ids:02d}"
            return step, tool_id

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
def serve(steps: list[Step] | None = None, **kw: Any) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(steps, **kw) as fa:
        yield fa


if __name__ == "__main__":  # a manual run: python tests/fakeanthropic.py
    import sys

    with FakeAnthropic(
        [text(" ".join(sys.argv[1:]) or "Hello from the fake Anthropic API.")]
    ) as fa:
        fa.serve_until_interrupted(fa.base_url)
