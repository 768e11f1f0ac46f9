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

Steps (tests/fakeapi.py, which also serves it): ``text(content)``, ``tool_call(name,
arguments)`` (one ``function_call`` item, call ids ``call_1``… per server),
``http_error(status, message)``; the first two take ``delay=`` (seconds before the first byte)
and ``chunk_delay=`` (seconds between events; default 0.01).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from fakeapi import AgentAPI, AgentHandler, Step, http_error, text, words
from fakeapi import call as tool_call

MODEL_ID = "gpt-5-codex"

__all__ = ["MODEL_ID", "FakeResponses", "Step", "http_error", "text", "tool_call"]


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class _Handler(AgentHandler):
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            model = {"id": MODEL_ID, "object": "model", "owned_by": "cuewrap-tests"}
            self._json(200, {"object": "list", "data": [model], "models": []})
            return
        self.server.fake._note_other("GET " + path)
        self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    turn_paths = ("/responses",)
    note_prefix = "POST "

    def _aside(self, path: str) -> tuple[int, Any] | None:
        if self.headers.get("Content-Encoding", "") == "zstd":  # pragma: no cover - not asked
            return 415, self._error(415, "zstd")
        return None

    def _error(self, status: int, message: str) -> Any:
        code = {} if status in (404, 415) else {"code": None}
        return {"error": {"message": message, "type": "invalid_request_error", **code}}

    def _answer(self, path: str, body: dict[str, Any], step: Step, calls: int, n: int) -> None:
        call_id = f"call_{calls}" if step.kind == "call" else ""
        self._stream(step, body, _events(step, call_id, n, body))


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
    if step.kind == "call":
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
        for piece in words(step.text):
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


class FakeResponses(AgentAPI):
    """See the module docstring."""

    handler = _Handler
    url_suffix = "/v1"


if __name__ == "__main__":  # a manual run: python tests/fakeresponses.py [TEXT]
    import sys

    with FakeResponses([text(" ".join(sys.argv[1:]) or "Hello from the fake API.")]) as f:
        f.serve_until_interrupted(f.base_url)
