"""What the fake APIs of third-party agents share (``fakeanthropic``, ``fakeresponses``,
``fakegemini``): the scripted steps, the queue of agent turns, the serving.

Only a request that offers tools (``"tools"`` in its body: the agent's own turns) takes a
*step* from the queue; every other request (a title, a summary, a quota check), and an agent
turn when the queue is empty, gets the text ``default``. Each fake records:

- ``turns``    the body (parsed JSON) of every agent turn, in order (``wait_turns(n)``)
- ``others``   how many other requests it answered
- ``ended``    when each agent turn's last event was written (monotonic)
- ``unknown``  the paths it did not serve

Steps: ``text(content)``, ``call(name, arguments)`` (one tool call; each API module names it
its own way: ``tool_use``, ``tool_call``, ``function_call``), ``http_error(status, message)``
(a 4xx is not retried by the agents); the first two take ``delay=`` (seconds before the first
byte) and ``chunk_delay=`` (seconds between events; default: the server's, 0.01).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Self

from fakemodel import FakeHTTPServer, JSONHandler, Served

__all__ = ["AgentAPI", "AgentHandler", "Step", "call", "http_error", "text"]


@dataclass(frozen=True)
class Step:
    """One scripted reply. Build with :func:`text`, :func:`call` or :func:`http_error`."""

    kind: str  # "text" | "call" | "error"
    text: str = ""
    name: str = ""
    arguments: str = "{}"  # the call's arguments, JSON
    status: int = 0
    delay: float = 0.0
    chunk_delay: float | None = None


def text(content: str = "done", *, delay: float = 0.0, chunk_delay: float | None = None) -> Step:
    """The model's text; streamed word by word."""
    return Step("text", text=content, delay=delay, chunk_delay=chunk_delay)


def call(
    name: str, arguments: dict[str, Any], *, delay: float = 0.0, chunk_delay: float | None = None
) -> Step:
    """One tool call of ``name`` with ``arguments``."""
    return Step(
        "call", name=name, arguments=json.dumps(arguments), delay=delay, chunk_delay=chunk_delay
    )


def http_error(status: int = 400, message: str = "bad request") -> Step:
    """An HTTP error with the API's own error body."""
    return Step("error", text=message, status=status)


def words(content: str) -> list[str]:
    """``content`` cut into the pieces a stream sends: each word with its following space."""
    parts = content.split(" ")
    return [p if i == len(parts) - 1 else p + " " for i, p in enumerate(parts)]


class AgentHandler(JSONHandler):
    """A handler of an agent API: reads a request's JSON body, streams events."""

    server: _AgentServer
    #: the stream also waits ``chunk_delay`` after its last event (before the connection ends)
    gap_after_last = True

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        return body if isinstance(body, dict) else {}

    #: the paths of the agent's turns (what a path ends with)
    turn_paths: tuple[str, ...] = ()
    #: put before an unserved path in ``unknown``
    note_prefix = ""

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?", 1)[0]
        fake = self.server.fake
        aside = self._aside(path)
        if aside is not None:
            self._json(*aside)
            return
        if not path.endswith(self.turn_paths):
            fake._note_other(self.note_prefix + path)
            self._json(404, self._error(404, path))
            return
        step, calls, n = fake._take(body)
        if step.delay:
            time.sleep(step.delay)
        if step.kind == "error":
            self._json(step.status, self._error(step.status, step.text))
            return
        self._answer(path, body, step, calls, n)

    def _aside(self, path: str) -> tuple[int, Any] | None:
        """The answer (status, JSON) to a request that is no turn (a token count), if it is one."""
        return None

    def _error(self, status: int, message: str) -> Any:
        """The API's error body."""
        raise NotImplementedError

    def _answer(self, path: str, body: dict[str, Any], step: Step, calls: int, n: int) -> None:
        """Answer a turn with ``step`` (not an error): ``calls`` tool calls so far (this one
        counted), ``n`` requests."""
        raise NotImplementedError

    def _stream(self, step: Step, body: dict[str, Any], chunks: Iterable[bytes]) -> None:
        """Send ``chunks`` as an event stream, ``chunk_delay`` apart; note an agent turn's end."""
        fake = self.server.fake
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        gap = step.chunk_delay if step.chunk_delay is not None else fake.chunk_delay
        try:
            for i, chunk in enumerate(chunks):
                if i and gap:
                    time.sleep(gap)
                self.wfile.write(chunk)
                self.wfile.flush()
            if gap and self.gap_after_last:
                time.sleep(gap)
        except (BrokenPipeError, ConnectionResetError):
            pass
        if body.get("tools"):
            fake.ended.append(time.monotonic())
        self.close_connection = True


class _AgentServer(FakeHTTPServer):
    fake: AgentAPI


class AgentAPI(Served):
    """A fake agent API on 127.0.0.1, served by ``handler``; see the module docstring."""

    handler: type[AgentHandler]
    #: what ``base_url`` ends with (``/v1`` where the agent wants it)
    url_suffix = ""

    def __init__(
        self, steps: list[Step] | None = None, *, default: str = "done", chunk_delay: float = 0.01
    ) -> None:
        self._queue: deque[Step] = deque(steps or [])
        self.default = default
        self.chunk_delay = chunk_delay
        self.turns: list[dict[str, Any]] = []  # agent turns (requests with tools)
        self.others = 0  # other requests
        self.ended: list[float] = []  # when each agent turn's stream was written (monotonic)
        self.unknown: list[str] = []  # paths not served
        self._lock = threading.Condition()
        self._ids = 0  # tool calls served
        self._n = 0  # requests taken

    def start(self) -> Self:
        server = _AgentServer(("127.0.0.1", 0), self.handler)
        server.fake = self
        self._serve(server)
        return self

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.url_suffix}"

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._queue.extend(steps)

    def _take(self, body: dict[str, Any]) -> tuple[Step, int, int]:
        """The step for a request; the number of tool calls so far, that of requests."""
        with self._lock:
            self._n += 1
            if not body.get("tools"):
                self.others += 1
                return text(self.default), self._ids, self._n
            self.turns.append(body)
            self._lock.notify_all()
            step = self._queue.popleft() if self._queue else text(self.default)
            if step.kind == "call":
                self._ids += 1
            return step, self._ids, self._n

    def _note_other(self, path: str) -> None:
        with self._lock:
            self.unknown.append(path)

    def wait_turns(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Block until at least ``n`` agent turns were asked for; return their bodies."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.turns) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.turns)} of {n} agent turns after {timeout} s")
                self._lock.wait(left)
            return list(self.turns)
