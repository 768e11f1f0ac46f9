"""A local stand-in for ntfy's HTTP API (the ntfy server is not packaged here), enough for
docs/answering.md's recipe: publish (``POST``/``PUT /<topic>``, the body the message, the
``Title`` and ``Actions`` headers kept) and subscribe (``GET /<topic>/json``: an ``open`` line,
then one JSON line per message published after it, as ntfy streams them). ``tap(message,
label)`` does what the ntfy app does for an ``http`` action button: its request."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class NtfyStandIn:
    def __init__(self, token: str | None = None) -> None:
        self.token = token  # an access token every request must carry (ntfy's Bearer auth)
        self.refused = 0  # requests without it
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.cond = threading.Condition()
        stand = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def authorized(self) -> bool:
                if stand.token is None or self.headers.get("Authorization") == (
                    f"Bearer {stand.token}"
                ):
                    return True
                stand.refused += 1
                self.send_error(403)
                return False

            def do_POST(self) -> None:
                if not self.authorized():
                    return
                topic = self.path.strip("/")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                msg = {"id": str(time.monotonic_ns()), "time": int(time.time()),
                       "event": "message", "topic": topic,
                       "message": body.decode("utf-8", "replace"),
                       "title": self.headers.get("Title"),
                       "actions": self.headers.get("Actions")}  # fmt: skip
                with stand.cond:
                    stand.messages.setdefault(topic, []).append(msg)
                    stand.cond.notify_all()
                out = json.dumps(msg).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_PUT = do_POST

            def do_GET(self) -> None:
                if not self.authorized():
                    return
                topic, _, kind = self.path.strip("/").partition("/")
                if kind != "json":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.end_headers()
                with stand.cond:
                    seen = len(stand.messages.get(topic, []))
                try:
                    self.wfile.write(json.dumps({"event": "open", "topic": topic}).encode() + b"\n")
                    self.wfile.flush()
                    while not stand.closing:
                        with stand.cond:
                            stand.cond.wait(0.2)
                            new = stand.messages.get(topic, [])[seen:]
                        for msg in new:
                            self.wfile.write(json.dumps(msg).encode() + b"\n")
                            self.wfile.flush()
                        seen += len(new)
                except OSError:
                    pass

        self.closing = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> NtfyStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing = True
        self.server.shutdown()
        self.server.server_close()

    def published(self, topic: str) -> list[dict[str, Any]]:
        with self.cond:
            return list(self.messages.get(topic, []))

    @staticmethod
    def buttons(message: dict[str, Any]) -> list[dict[str, str]]:
        """The ``Actions`` header in ntfy's simple format: ``http, LABEL, URL, k=v…; …``."""
        out = []
        for part in (message.get("actions") or "").split(";"):
            fields = [f.strip() for f in part.split(",")]
            if len(fields) < 3:
                continue
            action = {"action": fields[0], "label": fields[1], "url": fields[2]}
            for kv in fields[3:]:
                key, _, value = kv.partition("=")
                action[key] = value
            out.append(action)
        return out

    def tap(self, message: dict[str, Any], label: str) -> None:
        """The phone's user taps the ``http`` button named ``label``."""
        button = next(b for b in self.buttons(message) if b["label"] == label)
        assert button["action"] == "http"
        headers = {k[len("headers.") :]: v for k, v in button.items() if k.startswith("headers.")}
        req = urllib.request.Request(
            button["url"],
            data=button.get("body", "").encode(),
            method=button.get("method", "POST"),
            headers=headers,
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert resp.status == 200
