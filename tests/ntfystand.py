"""A local stand-in for ntfy's HTTP API (the ntfy server is not packaged here), as ntfy's
documentation describes it (docs.ntfy.sh "Publishing", "Subscribing"):

- publish: ``POST``/``PUT /<topic>`` (the body the message; ``Title``, ``Priority``, ``Tags``,
  ``Actions``, ``X-Sequence-ID`` headers), ``POST /`` with a JSON body (``topic``, ``message``,
  ``title``, ``priority``, ``tags``, ``actions`` as a JSON array, ``sequence_id``), and
  ``POST /<topic>/<sequence_id>``; the answer is the message as JSON. A message without a
  sequence id has its own id as one.
- ``PUT /<topic>/<sequence_id>/clear`` (alias ``/read``) and ``DELETE /<topic>/<sequence_id>``:
  a ``message_clear`` / ``message_delete`` event on the topic (``legacy=True``: 404, as a
  server before 2.16).
- subscribe: ``GET /<topic>/json[?since=<id>|<unix time>|all]``: an ``open`` line, the cached
  events after ``since``, then each new one as it comes; ``keepalive`` lines meanwhile.
- ``token``: every request must carry ``Authorization: Bearer <token>`` (else 403 and
  ``refused`` counts it); ``write_only``: tokens that may only publish to the given topics
  (a GET with one is 403).
- ``mode``: "ok", "down" (every request: the connection closed without an answer), "5xx" (500),
  "4xx" (400 for publishes), "slow" (each answer ``slow`` seconds late); ``drop()`` cuts every
  open stream (a dropped connection).

``tap(message, label)`` does what the ntfy app does for an ``http`` action button.
``events`` is every event by topic; ``published(topic)`` the ``message`` events, each with its
sequence id; ``current(topic)`` the notifications as a phone shows them now (updates by
sequence id applied, cleared and deleted gone); ``raw`` every request body received (bytes).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class NtfyStandIn:
    def __init__(self, token: str | None = None, *, legacy: bool = False) -> None:
        self.token = token  # an access token every request must carry (ntfy's Bearer auth)
        self.write_only: dict[str, set[str]] = {}  # token -> topics it may publish to only
        self.legacy = legacy
        self.mode = "ok"
        self.refuse_streams = False  # GETs: the connection closed at once (publishes work)
        self.slow = 3.0
        self.refused = 0  # requests without a valid token
        self.requests: list[tuple[str, str]] = []  # (method, path without the query)
        self.raw: list[bytes] = []
        self.events: dict[str, list[dict[str, Any]]] = {}
        self.cond = threading.Condition()
        self._drops = 0
        stand = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def authorized(self, write_topic: str | None) -> bool:
                auth = self.headers.get("Authorization") or ""
                given = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
                if given is not None and given in stand.write_only:
                    if write_topic is not None and write_topic in stand.write_only[given]:
                        return True
                    stand.refused += 1
                    self.reply(403, {"code": 40301, "error": "forbidden"})
                    return False
                if stand.token is None or given == stand.token:
                    return True
                stand.refused += 1
                self.reply(403 if given else 401, {"code": 40101, "error": "unauthorized"})
                return False

            def reply(self, status: int, body: dict[str, Any]) -> None:
                out = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                try:
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    # the client gave up first (its timeout, its end): as a server sees it,
                    # not a traceback on the test run's output
                    self.close_connection = True

            def trouble(self, publish: bool) -> bool:
                """The mode's misbehaviour; True when the request ends here."""
                if stand.mode == "down":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return True
                if stand.mode == "slow":
                    time.sleep(stand.slow)
                if stand.mode == "5xx":
                    self.reply(500, {"code": 50001, "error": "internal server error"})
                    return True
                if stand.mode == "4xx" and publish:
                    self.reply(400, {"code": 40001, "error": "invalid request"})
                    return True
                return False

            def body(self) -> bytes:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stand.raw.append(data)
                return data

            def do_POST(self) -> None:
                path = urllib.parse.urlsplit(self.path).path.strip("/")
                stand.requests.append((self.command, "/" + path))
                data = self.body()
                if self.trouble(True):
                    return
                parts = path.split("/") if path else []
                if not parts:  # JSON publish
                    try:
                        doc = json.loads(data)
                    except ValueError:
                        self.reply(400, {"code": 40024, "error": "invalid JSON"})
                        return
                    topic = str(doc.get("topic") or "")
                    if not self.authorized(topic):
                        return
                    msg = stand.publish(topic, doc)
                elif len(parts) <= 2:
                    if not self.authorized(parts[0]):
                        return
                    h = self.headers
                    actions = h.get("Actions")
                    sid = parts[1] if len(parts) == 2 else h.get("X-Sequence-ID")
                    doc = {"message": data.decode("utf-8", "replace"), "title": h.get("Title"),
                           "priority": h.get("Priority"), "tags": h.get("Tags"),
                           "actions": actions,
                           "sequence_id": sid}  # fmt: skip
                    msg = stand.publish(parts[0], doc)
                else:
                    self.reply(404, {"code": 40401, "error": "page not found"})
                    return
                self.reply(200, msg)

            def do_PUT(self) -> None:
                path = urllib.parse.urlsplit(self.path).path.strip("/")
                parts = path.split("/")
                if len(parts) == 3 and parts[2] in ("clear", "read"):
                    stand.requests.append((self.command, "/" + path))
                    self.body()
                    self.lifecycle(parts[0], parts[1], "message_clear")
                    return
                self.do_POST()

            def do_DELETE(self) -> None:
                path = urllib.parse.urlsplit(self.path).path.strip("/")
                stand.requests.append((self.command, "/" + path))
                parts = path.split("/")
                if len(parts) != 2:
                    self.reply(404, {"code": 40401, "error": "page not found"})
                    return
                self.lifecycle(parts[0], parts[1], "message_delete")

            def lifecycle(self, topic: str, sid: str, event: str) -> None:
                if self.trouble(False) or not self.authorized(topic):
                    return
                if stand.legacy:
                    self.reply(404, {"code": 40401, "error": "page not found"})
                    return
                self.reply(200, stand.add(topic, {"event": event, "sequence_id": sid}))

            def do_GET(self) -> None:
                split = urllib.parse.urlsplit(self.path)
                stand.requests.append((self.command, split.path))
                topic, _, kind = split.path.strip("/").partition("/")
                if split.path == "/v1/health" and stand.mode in ("ok", "slow"):
                    self.reply(200, {"healthy": True})
                    return
                if stand.mode == "down" or stand.refuse_streams:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if not self.authorized(None):
                    return
                if kind != "json":
                    self.reply(404, {"code": 40401, "error": "page not found"})
                    return
                query = urllib.parse.parse_qs(split.query)
                since = query.get("since", [None])[0]
                poll = query.get("poll", ["0"])[0] in ("1", "true")
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                drops = stand._drops
                try:
                    with stand.cond:
                        cached = stand.events.get(topic, [])
                        start = stand.after(cached, since)
                        seen = len(cached)
                    if not poll:
                        self.line({"id": _id(), "time": int(time.time()), "event": "open",
                                   "topic": topic})  # fmt: skip
                    for ev in cached[start:seen]:
                        self.line(ev)
                    if poll:
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    quiet = time.monotonic()
                    while not stand.closing and stand._drops == drops:
                        with stand.cond:
                            stand.cond.wait(0.1)
                            new = stand.events.get(topic, [])[seen:]
                        for ev in new:
                            self.line(ev)
                        seen += len(new)
                        if time.monotonic() - quiet > 2:
                            self.line({"id": _id(), "time": int(time.time()),
                                       "event": "keepalive", "topic": topic})  # fmt: skip
                            quiet = time.monotonic()
                    self.close_connection = True  # dropped: no final chunk
                except OSError:
                    pass

            def line(self, ev: dict[str, Any]) -> None:
                data = json.dumps(ev).encode() + b"\n"
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.closing = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- the server's side ---------------------------------------------------------------
    def add(self, topic: str, fields: dict[str, Any]) -> dict[str, Any]:
        ev = {"id": _id(), "time": int(time.time()), "topic": topic, **fields}
        with self.cond:
            self.events.setdefault(topic, []).append(ev)
            self.cond.notify_all()
        return ev

    def publish(self, topic: str, doc: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {"event": "message", "message": doc.get("message") or "triggered"}
        for key in ("title", "priority", "tags", "actions"):
            if doc.get(key) not in (None, ""):
                fields[key] = doc[key]
        if isinstance(fields.get("actions"), str):  # the header's simple format
            fields["actions"] = _simple_actions(fields["actions"])
        ev = self.add(topic, fields)
        sid = doc.get("sequence_id") if not self.legacy else None
        ev["sequence_id"] = sid or ev["id"]
        return ev

    @staticmethod
    def after(cached: list[dict[str, Any]], since: str | None) -> int:
        if since is None:
            return len(cached)
        if since == "all":
            return 0
        for i, ev in enumerate(cached):
            if ev["id"] == since:
                return i + 1
        if since.isdigit():
            return next((i for i, ev in enumerate(cached) if ev["time"] >= int(since)),
                        len(cached))  # fmt: skip
        return 0

    def drop(self) -> None:
        """Every open stream is cut (the subscribers reconnect)."""
        with self.cond:
            self._drops += 1
            self.cond.notify_all()

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

    # -- what the phone sees -------------------------------------------------------------
    def published(self, topic: str) -> list[dict[str, Any]]:
        with self.cond:
            return [dict(ev) for ev in self.events.get(topic, []) if ev["event"] == "message"]

    def current(self, topic: str) -> list[dict[str, Any]]:
        """The notifications on a phone subscribed to ``topic`` now, by sequence id."""
        shown: dict[str, dict[str, Any]] = {}
        with self.cond:
            for ev in self.events.get(topic, []):
                sid = ev.get("sequence_id") or ev["id"]
                if ev["event"] == "message":
                    shown[sid] = ev
                elif ev["event"] in ("message_clear", "message_delete"):
                    shown.pop(sid, None)
        return list(shown.values())

    def tap(self, message: dict[str, Any], label: str) -> int:
        """The phone's user taps the ``http`` button named ``label``: its request's status."""
        button = next(b for b in message.get("actions") or [] if b["label"] == label)
        assert button["action"] == "http"
        req = urllib.request.Request(
            button["url"],
            data=str(button.get("body", "")).encode(),
            method=button.get("method", "POST"),
            headers=dict(button.get("headers") or {}),
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)


def _id() -> str:
    return secrets.token_urlsafe(9)


def _simple_actions(header: str) -> list[dict[str, Any]]:
    """The ``Actions`` header's simple format: ``http, LABEL, URL, k=v…; …``."""
    out = []
    for part in header.split(";"):
        fields = [f.strip() for f in part.split(",")]
        if len(fields) < 3:
            continue
        action: dict[str, Any] = {"action": fields[0], "label": fields[1], "url": fields[2]}
        for kv in fields[3:]:
            key, _, value = kv.partition("=")
            if key.startswith("headers."):
                action.setdefault("headers", {})[key[len("headers.") :]] = value
            else:
                action[key] = value
        out.append(action)
    return out
