"""The phone's worker process: every HTTP request to the ntfy server (docs/phone.md).

Started by the phone channel (``phone.py``) on its first reminder, as ``python -S -P``
(``workers.python_worker``); nothing on the session's relay loop ever waits for the network.

stdin, one JSON object a line: first ``{"op": "config", "server", "token", "token_command"}``
(the access token never in the environment or on the command line), then

- ``{"op": "publish", "ref", "msg"}``: the message as JSON to the server's root;
- ``{"op": "clear" | "delete", "ref", "topic", "sid"}``: a reminder cleared / deleted by its
  sequence id (``PUT /<topic>/<sid>/clear``, ``DELETE /<topic>/<sid>``);
- ``{"op": "listen", "topic", "since"}`` / ``{"op": "unlisten"}``: the reply topic's JSON
  stream, resumed with ``since=`` the last message's id after a dropped connection.

stdout, one JSON object a line: ``{"ref", "ok", "status", "why", "tries"}`` per request;
``{"reply": {"id", "message"}}`` per message on the reply topic (its text bounded);
``{"stream": "open" | "down", "why"}``.

Requests go one at a time from a bounded queue (``MAX_QUEUE``; more: refused at once), each
tried at most ``TRIES`` times (a connection error, a timeout, 429 or 5xx; never a 4xx), with
``TIMEOUT`` seconds each. EOF on stdin ends it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

MAX_QUEUE = 32
TRIES = 3
TIMEOUT = 5.0  # seconds per request
BACKOFF = (0.5, 1.0, 2.0)
STREAM_TIMEOUT = 70.0  # seconds without a byte (ntfy's keepalive comes every 45 s)
RECONNECT = (0.5, 1.0, 2.0, 5.0, 10.0)
MAX_LINE = 1 << 16
MAX_MESSAGE = 512  # characters of a reply's text passed on


class Worker:
    def __init__(self) -> None:
        self.server = ""
        self.token: str | None = None
        self.jobs: queue.Queue[dict[str, Any]] = queue.Queue(MAX_QUEUE)
        self.out_lock = threading.Lock()
        self.listen_gen = 0
        self.listen_lock = threading.Lock()

    def emit(self, msg: dict[str, Any]) -> None:
        data = (json.dumps(msg) + "\n").encode()
        with self.out_lock:
            try:
                os.write(1, data)
            except OSError:
                os._exit(0)  # the session is gone

    # -- requests ----------------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        h = {"User-Agent": "cuewrap"}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    def request(self, method: str, path: str, body: bytes | None) -> tuple[int | None, str]:
        """(status, why): status None when no answer came (connection, timeout)."""
        url = self.server + path
        headers = self.headers()
        if body is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
                resp.read(MAX_LINE)
                return resp.status, ""
        except urllib.error.HTTPError as exc:
            return exc.code, f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            return None, _short(exc)

    def run_job(self, job: dict[str, Any]) -> None:
        op = job.get("op")
        if op == "publish":
            method, path = "POST", "/"
            body: bytes | None = json.dumps(job.get("msg")).encode()
        else:
            topic = urllib.parse.quote(str(job.get("topic")), safe="")
            sid = urllib.parse.quote(str(job.get("sid")), safe="")
            method, path, body = (
                ("PUT", f"/{topic}/{sid}/clear", None)
                if op == "clear"
                else ("DELETE", f"/{topic}/{sid}", None)
            )
        status: int | None = None
        why = ""
        tries = 0
        for tries in range(1, TRIES + 1):
            status, why = self.request(method, path, body)
            if status is not None and (200 <= status < 300 or (status < 500 and status != 429)):
                break
            if tries < TRIES:
                time.sleep(BACKOFF[tries - 1])
        ok = status is not None and 200 <= status < 300
        self.emit({"ref": job.get("ref"), "ok": ok, "status": status, "why": why,
                   "tries": tries})  # fmt: skip

    def publisher(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                self.run_job(job)
            except Exception as exc:  # never dies on one request
                self.emit({"ref": job.get("ref"), "ok": False, "status": None,
                           "why": _short(exc), "tries": 0})  # fmt: skip

    # -- the reply topic ---------------------------------------------------------------------
    def listen(self, topic: str, since: str) -> None:
        with self.listen_lock:
            self.listen_gen += 1
            gen = self.listen_gen
        threading.Thread(target=self.stream, args=(gen, topic, since), daemon=True).start()

    def unlisten(self) -> None:
        with self.listen_lock:
            self.listen_gen += 1

    def live(self, gen: int) -> bool:
        with self.listen_lock:
            return gen == self.listen_gen

    def stream(self, gen: int, topic: str, since: str) -> None:
        failures = 0
        quoted = urllib.parse.quote(topic, safe="")
        while self.live(gen):
            url = f"{self.server}/{quoted}/json?since={urllib.parse.quote(since, safe='')}"
            req = urllib.request.Request(url, headers=self.headers())
            why = ""
            try:
                with urllib.request.urlopen(req, timeout=STREAM_TIMEOUT) as resp:
                    for raw in resp:
                        if not self.live(gen):
                            return
                        if len(raw) > MAX_LINE:
                            continue
                        try:
                            event = json.loads(raw)
                        except ValueError:
                            continue
                        if not isinstance(event, dict):
                            continue
                        kind = event.get("event")
                        if kind == "open":
                            failures = 0
                            self.emit({"stream": "open", "why": ""})
                        elif kind == "message" and isinstance(event.get("id"), str):
                            since = event["id"][:64]
                            text = event.get("message")
                            self.emit({"reply": {"id": since,
                                                 "message": str(text)[:MAX_MESSAGE]}})  # fmt: skip
                why = "the server closed the stream"
            except urllib.error.HTTPError as exc:
                why = f"HTTP {exc.code}"
            except (OSError, ValueError) as exc:
                why = _short(exc)
            if not self.live(gen):
                return
            self.emit({"stream": "down", "why": why})
            time.sleep(RECONNECT[min(failures, len(RECONNECT) - 1)])
            failures += 1

    # -- stdin -------------------------------------------------------------------------------
    def configure(self, msg: dict[str, Any]) -> None:
        self.server = str(msg.get("server") or "").rstrip("/")
        token = msg.get("token")
        argv = msg.get("token_command")
        if not token and isinstance(argv, list) and argv:
            try:
                done = subprocess.run([str(a) for a in argv], capture_output=True,
                                      timeout=TIMEOUT, check=False)  # fmt: skip
                words = done.stdout.decode("utf-8", "replace").split()
                token = words[0] if done.returncode == 0 and len(words) == 1 else None
                if token is None:
                    self.emit({"stream": "token", "why": "phone.token_command printed no token"})
            except (OSError, subprocess.SubprocessError) as exc:
                self.emit({"stream": "token", "why": f"phone.token_command: {_short(exc)}"})
        self.token = token if isinstance(token, str) and token else None

    def serve(self) -> int:
        threading.Thread(target=self.publisher, daemon=True).start()
        for line in sys.stdin.buffer:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            op = msg.get("op")
            if op == "config":
                self.configure(msg)
            elif op in ("publish", "clear", "delete"):
                try:
                    self.jobs.put_nowait(msg)
                except queue.Full:
                    self.emit({"ref": msg.get("ref"), "ok": False, "status": None,
                               "why": f"{MAX_QUEUE} requests queued", "tries": 0})  # fmt: skip
            elif op == "listen":
                self.listen(str(msg.get("topic")), str(msg.get("since") or "all"))
            elif op == "unlisten":
                self.unlisten()
        return 0


def _short(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason if reason is not None else exc) or exc.__class__.__name__
    return text.replace("\n", " ")[:120]


def main() -> int:
    return Worker().serve()


if __name__ == "__main__":
    sys.exit(main())
