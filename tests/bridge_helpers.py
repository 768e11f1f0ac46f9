"""Helpers for the bridge tests: a BridgeServer on a Loop in a background thread, a minimal
fake OpenAI-compatible model server, and an isolated Pi agent directory.

The fake model is deliberately small (the project's full one is ``tests/fakemodel.py``): each
chat request takes the next scripted reply — ``("text", "...")``, ``("bash", "command")`` or
``("error", "500")`` (an HTTP error) —
and the server records every request body, so a test can read the tool results Pi sent back.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from pirig import fake_models, pi_environment
from waiting import wait_until

from cuewrap.bridge.server import BridgeServer
from cuewrap.facts import Fact
from cuewrap.loop import Loop

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


# -- a BridgeServer on its own loop thread ----------------------------------------------------


def _at_once(text: Callable[[str], str]) -> Callable[[str, Callable[[str], None]], None]:
    """A ``/cue`` handler that replies at once with ``text(action)``."""
    return lambda action, reply: reply(text(action))


class ServerThread:
    """Runs a started ``BridgeServer`` on a ``Loop`` in a daemon thread.

    Facts and rejections are collected in lists (appends are atomic). ``call(fn)`` runs ``fn``
    on the loop thread and returns its result, for ``stats()`` or ``push_notice()``.
    """

    def __init__(
        self,
        child_pid: Callable[[], int | None],
        on_request: Callable[[str], str] | None = None,
    ) -> None:
        self.facts: list[Fact] = []
        self.rejections: list[str] = []
        # Pi's own writes to its terminal that came through the bridge (provenance)
        self.owns: list[bytes] = []
        self.errors: list[tuple[str, BaseException]] = []
        self.loop = Loop(on_error=lambda where, exc: self.errors.append((where, exc)))
        self.server = BridgeServer(
            self.loop,
            child_pid=child_pid,
            on_fact=self.facts.append,
            on_reject=self.rejections.append,
            on_request=_at_once(on_request or (lambda action: f"status:{action}")),
            on_own=self.owns.append,
        )
        self.server.start()
        self._calls: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]]
        self._calls = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self.loop.add_reader(self._wake_r, self._run_calls)
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            self.loop.run_once(0.05)

    def _run_calls(self) -> None:
        try:
            os.read(self._wake_r, 4096)
        except BlockingIOError:
            pass
        while True:
            try:
                fn, fut = self._calls.get_nowait()
            except queue.Empty:
                return
            try:
                fut.set_result(fn())
            except Exception as exc:
                fut.set_exception(exc)

    def call(self, fn: Callable[[], T]) -> T:
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._calls.put((fn, fut))
        os.write(self._wake_w, b"x")
        return fut.result(timeout=5)

    def env(self) -> dict[str, str]:
        return self.server.env()

    def stats(self) -> dict[str, Any]:
        return self.call(self.server.stats)

    def wait_for(
        self, pred: Callable[[list[Fact]], bool], timeout: float = 20.0, what: str = ""
    ) -> list[Fact]:
        def holds() -> tuple[list[Fact]] | None:
            snapshot = list(self.facts)
            return (snapshot,) if pred(snapshot) else None  # a tuple: true even when empty

        return wait_until(holds, timeout, what or repr(pred),
                          detail=lambda: f"facts={self.facts!r}")[0]  # fmt: skip

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=5)
        self.server.close()
        self.loop.remove_reader(self._wake_r)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.loop.close()


def types(facts: list[Fact]) -> list[str]:
    return [type(f).__name__ for f in facts]


# -- a minimal fake OpenAI-compatible streaming model ----------------------------------------

MODEL_ID = "fake-model"
Reply = tuple[str, str]  # ("text", content) | ("bash", command) | ("error", "500")


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
        self._send(200, "application/json", body.encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fake = self.server.fake
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        kind, content = fake.take(body)
        if kind == "error":
            err = {"error": {"message": "fake upstream failure", "type": "server_error"}}
            self._send(int(content), "application/json", json.dumps(err).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        n = len(fake.requests)
        chunks: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant"}, None)]
        if kind == "bash":
            call = {
                "index": 0,
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": content})},
            }
            chunks += [({"tool_calls": [call]}, None), ({}, "tool_calls")]
        else:
            chunks += [({"content": content}, None), ({}, "stop")]
        for delta, finish in chunks:
            obj = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()
            time.sleep(0.01)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: MiniModel


class MiniModel:
    """Scripted replies; when the script is empty, every request gets the text "done"."""

    def __init__(self, script: list[Reply] | None = None) -> None:
        self._script: queue.Queue[Reply] = queue.Queue()
        for r in script or []:
            self._script.put(r)
        self.requests: list[dict[str, Any]] = []
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.fake = self
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        for r in replies:
            self._script.put(r)

    def take(self, body: dict[str, Any]) -> Reply:
        self.requests.append(body)
        try:
            return self._script.get_nowait()
        except queue.Empty:
            return ("text", "done")

    def tool_results(self) -> list[str]:
        """Contents of every ``role: tool`` message Pi sent (all requests)."""
        out: list[str] = []
        for body in self.requests:
            for m in body.get("messages", []):
                if m.get("role") == "tool":
                    c = m.get("content")
                    out.append(c if isinstance(c, str) else json.dumps(c))
        return out

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


# -- real Pi ------------------------------------------------------------------------------------


def make_agent_dir(path: Path, base_url: str) -> Path:
    """An isolated ``PI_CODING_AGENT_DIR`` pointing Pi at the fake model."""
    path.mkdir(parents=True, exist_ok=True)
    model = {"id": MODEL_ID, "name": "Fake model", "reasoning": False, "input": ["text"]}
    models = fake_models(base_url, model)
    settings = {
        "defaultProvider": "fake",
        "defaultModel": MODEL_ID,
        "quietStartup": True,
        "retry": {"enabled": True, "maxRetries": 1, "baseDelayMs": 200},
    }
    (path / "models.json").write_text(json.dumps(models))
    (path / "settings.json").write_text(json.dumps(settings))
    return path


def pi_env(bindir: Path, agent_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The one Pi environment of the tests (``pirig.pi_environment``), home beside
    ``agent_dir``, plus ``extra``."""
    home = agent_dir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = pi_environment(bindir, agent_dir, home)
    env.update(extra)
    return env


@contextmanager
def mini_model(script: list[Reply] | None = None) -> Iterator[MiniModel]:
    m = MiniModel(script)
    try:
        yield m
    finally:
        m.close()


# -- a PTY child whose output is always drained ----------------------------------------------


class Drained:
    """A pexpect child whose output a thread reads all the time (Pi blocks on a full PTY).

    ``expect(text)`` waits for ``text`` in the output after the previous match; ``send`` writes.
    """

    def __init__(self, child: Any, log: Path | None = None) -> None:
        self.child = child
        self._buf: list[str] = []
        self._text = ""
        self._pos = 0
        self._lock = threading.Lock()
        self._proc = threading.Lock()  # every call into the child
        self.eof = threading.Event()
        self._log = log.open("w", encoding="utf-8") if log else None
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int:
        return int(self.child.pid)

    def _drain(self) -> None:
        from launch import read_available

        while True:
            data = read_available(self.child, self._proc)
            if data is None:
                self.eof.set()
                return
            if not data:
                continue
            with self._lock:
                self._buf.append(data)
            if self._log is not None:
                self._log.write(data)
                self._log.flush()

    def output(self) -> str:
        with self._lock:
            if self._buf:
                self._text += "".join(self._buf)
                self._buf.clear()
            return self._text

    def expect(self, text: str, timeout: float = 30.0) -> None:
        i = wait_until(
            lambda: self.output().find(text, self._pos) + 1,  # 0 (falsy) while not found
            timeout,
            f"{text!r} in the output",
            detail=lambda: f"last output: {self.output()[-2000:]!r}",
        )
        self._pos = i - 1 + len(text)

    def expect_eof(self, timeout: float = 30.0) -> None:
        if not self.eof.wait(timeout):
            raise AssertionError("the child did not exit")

    def send(self, data: str) -> None:
        self.child.send(data)

    def close(self) -> None:
        with self._proc:
            if self.child.isalive():
                self.child.terminate(force=True)
        self._thread.join(timeout=5)
        self.child.close()
        if self._log is not None:
            self._log.close()
