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

Steps (tests/fakeapi.py, which also serves it): ``text(content)``, ``function_call(name,
args)``, ``http_error(status, message)``; the first two take ``delay=`` (seconds before the
first byte) and ``chunk_delay=`` (seconds between the text's events; default 0.01).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fakeapi import AgentAPI, AgentHandler, Step, http_error, text, words
from fakeapi import call as function_call

MODEL_ID = "gemini-2.5-flash"

__all__ = ["MODEL_ID", "FakeGemini", "Step", "function_call", "http_error", "text"]


def _response(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": MODEL_ID}


def _events(step: Step) -> Iterator[dict[str, Any]]:
    if step.kind == "call":
        call = {"functionCall": {"name": step.name, "args": json.loads(step.arguments)}}
        yield _response([call], "STOP")
        return
    pieces = words(step.text)
    for i, piece in enumerate(pieces):
        yield _response([{"text": piece}], "STOP" if i == len(pieces) - 1 else None)


class _Handler(AgentHandler):
    gap_after_last = False

    def do_GET(self) -> None:
        self._json(200, {"models": [{"name": f"models/{MODEL_ID}"}]})

    turn_paths = (":streamGenerateContent", ":generateContent")

    def _aside(self, path: str) -> tuple[int, Any] | None:
        return (200, {"totalTokens": 10}) if path.endswith(":countTokens") else None

    def _error(self, status: int, message: str) -> Any:
        kind = "NOT_FOUND" if status == 404 else "INVALID_ARGUMENT"
        return {"error": {"code": status, "message": message, "status": kind}}

    def _answer(self, path: str, body: dict[str, Any], step: Step, calls: int, n: int) -> None:
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
        sse = (b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)
        self._stream(step, body, sse)


class FakeGemini(AgentAPI):
    """See the module docstring."""

    handler = _Handler
