"""The ntfy stand-in itself (tests/ntfystand.py) speaks ntfy's HTTP API as its documentation
describes it: a publish with headers and one as JSON, updates by sequence id, clear and
delete, the JSON stream with ``since=``, tokens. (The phone's tests rely on it.)"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from ntfystand import NtfyStandIn

pytestmark = pytest.mark.unit

TOPIC = "standin-topic-Xk29Lp"


def call(url: str, method: str, body: bytes | None = None, **headers: str) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def poll(ntfy: NtfyStandIn, since: str) -> list[dict[str, Any]]:
    status, body = call(f"{ntfy.url}/{TOPIC}/json?poll=1&since={since}", "GET")
    assert status == 200
    return [json.loads(line) for line in body.splitlines()]


def test_publish_update_clear_delete_and_since() -> None:
    with NtfyStandIn() as ntfy:
        status, body = call(f"{ntfy.url}/{TOPIC}", "POST", b"hello", Title="T", Priority="4",
                            Actions="http, Yes, https://x/r, method=POST, body=tok 1")  # fmt: skip
        first = json.loads(body)
        assert status == 200 and first["sequence_id"] == first["id"]
        assert first["actions"] == [{"action": "http", "label": "Yes", "url": "https://x/r",
                                     "method": "POST", "body": "tok 1"}]  # fmt: skip
        doc = {"topic": TOPIC, "message": "v1", "sequence_id": "s1", "tags": ["question"]}
        call(ntfy.url, "POST", json.dumps(doc).encode())
        call(ntfy.url, "POST", json.dumps({**doc, "message": "v2"}).encode())
        assert {m["message"] for m in ntfy.current(TOPIC)} == {"hello", "v2"}
        assert call(f"{ntfy.url}/{TOPIC}/s1/clear", "PUT")[0] == 200
        assert call(f"{ntfy.url}/{TOPIC}/{first['id']}", "DELETE")[0] == 200
        assert ntfy.current(TOPIC) == []
        events = poll(ntfy, "all")
        assert [e["event"] for e in events] == ["message"] * 3 + ["message_clear", "message_delete"]
        assert [e["event"] for e in poll(ntfy, events[2]["id"])] == [
            "message_clear", "message_delete"]  # fmt: skip


def test_tokens_and_a_legacy_server() -> None:
    with NtfyStandIn(token="tk", legacy=True) as ntfy:
        ntfy.write_only["tk_w"] = {TOPIC}
        assert call(f"{ntfy.url}/{TOPIC}", "POST", b"x")[0] == 401
        assert call(f"{ntfy.url}/{TOPIC}", "POST", b"x", Authorization="Bearer tk_w")[0] == 200
        assert call(f"{ntfy.url}/{TOPIC}/json?poll=1", "GET", Authorization="Bearer tk_w")[0] == 403
        assert call(f"{ntfy.url}/{TOPIC}/s/clear", "PUT", Authorization="Bearer tk")[0] == 404
        assert ntfy.refused == 2
