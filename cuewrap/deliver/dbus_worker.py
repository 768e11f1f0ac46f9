"""The desktop worker: one long-lived process per cuewrap session for everything it asks of
the session bus — desktop notifications (docs/design.md#delivery, #follow-ups) and the
do-not-disturb watch (``dnd_worker.py``, docs/attention.md) on one connection.

Started by ``helper.DesktopHelper`` (the parent side, shared by ``dbus.DBusNotifier`` and
``dnd.DesktopWatch``) as a lean interpreter (``python -S -P``: no site, no current directory
on its path; what it imports is jeepney and this package) with stderr on /dev/null; it dies
with cuewrap (its stdin reaches EOF, and PR_SET_PDEATHSIG on Linux). It talks to
``org.freedesktop.Notifications`` over jeepney (notify-py's own dependency, so nothing new)
and to the parent in JSON lines:

    parent -> worker  {"op": "hello"}                         (the notifications' side)
                      {"op": "notify", "cue": N, "title": …, "body": …, "replaces": ID,
                       "urgency": 1|2, "actions": [key, label, …] (optional: buttons)}
                      {"op": "close", "cue": N, "id": ID}
                      {"op": "watch"}                         (do-not-disturb, dnd_worker.py)
    worker -> parent  {"ready": true, "actions": bool}        (capabilities read, at hello)
                      {"fatal": reason}                       (no notifications: no bus, no
                                                               server, or the bus went away)
                      {"cue": N, "op": "notify", "state": "delivered"|"failed", "id": ID,
                       "reason": …}
                      {"cue": N, "op": "close", "state": "withdrawn"|"failed", "reason": …}
                      {"event": "activated", "id": ID, "action": key, "lead_back": …}
                      {"event": "closed", "id": ID, "reason": code}
                      {"dnd": {"quiet": …, "via": …, "readable": …}}   (the watch's)

One select loop over stdin and the bus socket: calls are sent without waiting (replies are
matched by serial, each bounded by REPLY_TIMEOUT), so the server's signals —
``ActionInvoked`` (a click) and ``NotificationClosed`` — are never missed, and the watch's
reads never hold up a notification. A click on a
notification of ours (its "default" action) leads back to Pi: inside tmux the pane's window
and pane are selected (and the client switched to its session); where ``WINDOWID`` and
``xdotool`` exist the terminal window is raised (given the focus directly where no window
manager activates it). What was done is reported (``lead_back``). A click on one of its
buttons (an answer button, docs/answering.md) leads nowhere (``lead_back`` ""): the parent
acts on its key.
"""

from __future__ import annotations

import json
import os
import selectors
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cuewrap.deliver.dnd_worker import OnReply, Watch

APP_NAME = "Pi"
PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"
REPLY_TIMEOUT = 2.0
ACTION = ["default", "Show Pi"]


def _extra_actions(request: dict[str, Any]) -> list[str]:
    """The notification's own buttons after the default action (key, label, …; the parent
    bounds them)."""
    extra = request.get("actions")
    if not isinstance(extra, list) or len(extra) % 2:
        return []
    return [str(x) for x in extra[:16]]


def _escape(text: str) -> str:
    """Plain text for a body-markup server (the markup is a small XML subset)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _emit(msg: dict[str, object]) -> None:
    os.write(1, (json.dumps(msg) + "\n").encode())


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def main() -> int:
    conn, why = _connect()
    worker = Worker(conn, why)
    try:
        return worker.serve()
    finally:
        if worker.watch is not None:
            worker.watch.close()


def _connect() -> tuple[Any, str]:
    """A connection to the session bus (its address guessed from ``XDG_RUNTIME_DIR`` where
    ``DBUS_SESSION_BUS_ADDRESS`` is unset), or None and why not."""
    try:
        from jeepney.io.blocking import open_dbus_connection
    except Exception as exc:
        return None, f"jeepney unavailable: {_why(exc)}"
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime and os.path.exists(os.path.join(runtime, "bus")):
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={runtime}/bus"
    try:
        return open_dbus_connection(bus="SESSION", auth_timeout=1.0), ""
    except KeyError:
        return None, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    except Exception as exc:
        return None, f"cannot reach the session bus: {_why(exc)}"


class Worker:
    """One bus connection, two users: the notifications (``hello``, then ``notify`` and
    ``close``) and the do-not-disturb watch (``watch``, dnd_worker.py). Every call is sent
    without waiting and its reply matched by serial, so neither user's calls can hold up the
    other's or swallow the server's signals. Serves until stdin ends."""

    def __init__(self, conn: Any, why: str) -> None:
        self.conn = conn
        self.why = why  # why there is no connection
        self.pending: dict[int, tuple[float, OnReply]] = {}  # serial -> (deadline, on_reply)
        self.hello = False  # the notifications' side asked for and ready
        self.actions = False
        # a server with body-markup reads '<', '>' and '&' in the body as markup (bold,
        # links): the body is plain text (a summary may hold any of them), so it is escaped
        self.markup = False
        self.watch: Watch | None = None
        self.sel = selectors.DefaultSelector()

    def serve(self) -> int:
        """One select loop over stdin, the bus (and the watch's own source) until stdin ends
        (0), or the bus goes away with nothing left to watch (1)."""
        self.sel.register(0, selectors.EVENT_READ, self._stdin)
        if self.conn is not None:
            self.sel.register(self.conn.sock, selectors.EVENT_READ, None)
        self._buf = b""
        while True:
            if self.conn is not None and not self._receive():
                if self.watch is None:
                    return 1
            timeout = self._expire(time.monotonic())
            for key, _ in self.sel.select(timeout):
                if key.data is not None and not key.data():
                    return 0

    def _stdin(self) -> bool:
        data = os.read(0, 65536)
        if not data:
            return False  # cuewrap is gone or done: our notifications stay as they are
        self._buf = self._requests(self._buf + data)
        return True

    def call(self, msg: Any, on_reply: OnReply) -> None:
        """Send ``msg``; ``on_reply`` gets its reply (or None in time: REPLY_TIMEOUT)."""
        if self.conn is None:
            on_reply(None)
            return
        serial = next(self.conn.outgoing_serial)
        self.conn.send(msg, serial=serial)
        self.pending[serial] = (time.monotonic() + REPLY_TIMEOUT, on_reply)

    def _receive(self) -> bool:
        """What jeepney already has buffered, or can read now; False when the bus went
        away (the notifications' side told, the watch reads again without it)."""
        while True:
            try:
                msg = self.conn.receive(timeout=0)
            except TimeoutError:
                return True
            except Exception as exc:
                self._lost(f"the session bus went away: {_why(exc)}")
                return False
            self._on_message(msg)

    def _lost(self, why: str) -> None:
        self.sel.unregister(self.conn.sock)
        self.conn, self.why = None, why
        pending, self.pending = self.pending, {}
        for _, on_reply in pending.values():
            on_reply(None)
        if self.hello:
            self.hello = False
            _emit({"fatal": why})
        if self.watch is not None:
            self.watch.conn = None
            self.watch.read()

    def _expire(self, now: float) -> float | None:
        """Calls without a reply in time get None; how long until the next one's deadline."""
        for serial, (deadline, on_reply) in list(self.pending.items()):
            if now >= deadline:
                del self.pending[serial]
                on_reply(None)
        timeout = min((d for d, _ in self.pending.values()), default=None)
        return None if timeout is None else max(0.0, timeout - now)

    def _requests(self, buf: bytes) -> bytes:
        """Each whole line of ``buf`` a request (a line that is not a JSON object is
        dropped); the unfinished rest."""
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict):
                try:
                    self._request(request)
                except Exception as exc:
                    _reply(request, "failed", reason=_why(exc))
        return buf

    def _request(self, request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "hello":
            self._hello()
        elif op == "watch":
            if self.watch is None:
                from cuewrap.deliver.dnd_worker import Watch

                self.watch = Watch(self.conn, self.call, self.sel)
        elif op in ("notify", "close"):
            self._call(request)

    def _hello(self) -> None:
        """The notifications' side: the server's signals subscribed and its capabilities
        read, then ``ready`` (or ``fatal``)."""
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus

        if self.conn is None:
            _emit({"fatal": self.why})
            return
        rule = MatchRule(type="signal", interface=IFACE, path=PATH)
        self.call(message_bus.AddMatch(rule), lambda reply: None)
        self.call(self._method("GetCapabilities"), self._capabilities)

    def _method(self, name: str, signature: str | None = None, body: tuple[Any, ...] = ()) -> Any:
        from jeepney import DBusAddress, new_method_call

        target = DBusAddress(PATH, bus_name=IFACE, interface=IFACE)
        return new_method_call(target, name, signature, body)

    def _capabilities(self, reply: Any) -> None:
        from jeepney import HeaderFields, MessageType

        if reply is None:
            _emit({"fatal": "the notification service did not answer: no reply in time"})
            return
        if reply.header.message_type == MessageType.error:
            name = reply.header.fields.get(HeaderFields.error_name, "error")
            _emit({"fatal": f"{name}"[:300]})
            return
        caps = list(reply.body[0]) if reply.body else []
        self.actions = "actions" in caps
        self.markup = "body-markup" in caps
        self.hello = True
        _emit({"ready": True, "actions": self.actions})

    def _call(self, request: dict[str, Any]) -> None:
        if not self.hello:
            _reply(request, "failed", reason=self.why or "the worker was not asked to start")
            return
        if request["op"] == "notify":
            hints = {
                "urgency": ("y", int(request.get("urgency", 1))),
                "suppress-sound": ("b", True),
            }
            body = str(request["body"])
            msg = self._method(
                "Notify",
                "susssasa{sv}i",
                (
                    str(request.get("app") or APP_NAME),
                    int(request.get("replaces", 0)),
                    "",
                    str(request["title"]),
                    _escape(body) if self.markup else body,
                    ACTION + _extra_actions(request) if self.actions else [],
                    hints,
                    -1,
                ),
            )
        else:
            msg = self._method("CloseNotification", "u", (int(request["id"]),))
        self.call(msg, lambda reply: self._answered(request, reply))

    def _answered(self, request: dict[str, Any], msg: Any) -> None:
        from jeepney import HeaderFields, MessageType

        if msg is None:
            _reply(request, "failed", reason="the notification service did not answer")
        elif msg.header.message_type == MessageType.error:
            name = msg.header.fields.get(HeaderFields.error_name, "error")
            detail = msg.body[0] if msg.body else ""
            _reply(request, "failed", reason=f"{name}: {detail}"[:300])
        elif request["op"] == "notify":
            _reply(request, "delivered", id=int(msg.body[0]), reason="")
        else:
            _reply(request, "withdrawn", reason="CloseNotification")

    def _on_message(self, msg: Any) -> None:
        from jeepney import HeaderFields, MessageType

        hdr = msg.header
        serial = hdr.fields.get(HeaderFields.reply_serial)
        if serial in self.pending:
            _, on_reply = self.pending.pop(serial)
            on_reply(msg)
            return
        if hdr.message_type != MessageType.signal:
            return
        member = hdr.fields.get(HeaderFields.member)
        if hdr.fields.get(HeaderFields.interface) != IFACE:
            if self.watch is not None:  # PropertiesChanged, NameOwnerChanged: read again
                self.watch.read()
        elif member == "ActionInvoked" and len(msg.body) >= 2 and self.hello:
            # the notification itself leads back; one of its buttons is cuewrap's to act on
            done = lead_back() if str(msg.body[1]) == "default" else ""
            _emit({"event": "activated", "id": int(msg.body[0]), "action": str(msg.body[1]),
                   "lead_back": done})  # fmt: skip
        elif member == "NotificationClosed" and len(msg.body) >= 2 and self.hello:
            _emit({"event": "closed", "id": int(msg.body[0]), "reason": int(msg.body[1])})


def _reply(request: dict[str, Any], state: str, **more: object) -> None:
    _emit({"cue": request.get("cue"), "op": request.get("op"), "state": state, **more})


def lead_back() -> str:
    """Bring the user to Pi: its tmux window and pane, then the terminal window."""
    import shutil

    done: list[str] = []
    pane = os.environ.get("TMUX_PANE", "")
    if os.environ.get("TMUX") and pane and shutil.which("tmux"):
        for args in (
            ["switch-client", "-t", pane],
            ["select-window", "-t", pane],
            ["select-pane", "-t", pane],
        ):
            ok = _run(["tmux", *args])
            done.append(f"tmux {args[0]} {'ok' if ok else 'failed'}")
    window = os.environ.get("WINDOWID", "")
    if window.isdigit() and shutil.which("xdotool"):
        ok = _run(["xdotool", "windowactivate", window])
        done.append(f"xdotool windowactivate {'ok' if ok else 'failed'}")
        if not ok:  # no window manager that activates windows: give it the focus directly
            ok = _run(["xdotool", "windowfocus", window])
            done.append(f"xdotool windowfocus {'ok' if ok else 'failed'}")
    return "; ".join(done) or "nothing to select (not in tmux, no WINDOWID with xdotool)"


def _run(argv: list[str]) -> bool:
    import subprocess

    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=2.0, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


if __name__ == "__main__":
    sys.exit(main())
