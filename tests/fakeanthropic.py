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

Steps (tests/fakeapi.py, which also serves it): ``text(content)`` (stop reason ``end_turn``),
``tool_use(name, input)`` (one tool call, ids ``toolu_01``… per server, stop reason
``tool_use``), ``http_error(status, message)``; the first two take ``delay=`` (seconds before
the first byte) and ``chunk_delay=`` (seconds between events; default 0.01).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fakeapi import AgentAPI, AgentHandler, Step, http_error, text, words
from fakeapi import call as tool_use

MODEL_ID = "claude-sonnet-4-5"

__all__ = ["MODEL_ID", "FakeAnthropic", "Step", "http_error", "text", "tool_use"]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Handler(AgentHandler):
    def do_GET(self) -> None:
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    turn_paths = ("/v1/messages",)

    def _aside(self, path: str) -> tuple[int, Any] | None:
        return (200, {"input_tokens": 100}) if path.endswith("/count_tokens") else None

    def _error(self, status: int, message: str) -> Any:
        if status == 404:
            kind = "not_found_error"
        else:  # a 4xx is not retried
            kind = "invalid_request_error" if status < 500 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _answer(self, path: str, body: dict[str, Any], step: Step, calls: int, n: int) -> None:
        tool_id = f"toolu_{calls:02d}" if step.kind == "call" else ""
        if not body.get("stream"):
            self._json(200, _message(step, tool_id, body))
            return
        self._stream(step, body, _events(step, tool_id, body))


def _message(step: Step, tool_id: str, body: dict[str, Any]) -> dict[str, Any]:
    if step.kind == "call":
        content: list[dict[str, Any]] = [
            {
                "type": "tool_use",
                "id": tool_id,
                "name": step.name,
                "input": json.loads(step.arguments),
            }
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
    if step.kind == "call":
        block = {"type": "tool_use", "id": tool_id, "name": step.name, "input": {}}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        half = len(step.arguments) // 2
        for part in (step.arguments[:half], step.arguments[half:]):
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
        for piece in words(step.text):
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


class FakeAnthropic(AgentAPI):
    """See the module docstring."""

    handler = _Handler


if __name__ == "__main__":  # a manual run: python tests/fakeanthropic.py
    import sys

    with FakeAnthropic(
        [text(" ".join(sys.argv[1:]) or "Hello from the fake Anthropic API.")]
    ) as fa:
        fa.serve_until_interrupted(fa.base_url)
