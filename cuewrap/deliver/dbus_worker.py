"""The D-Bus desktop worker: one long-lived process per cuewrap session (docs/design.md#delivery,
#follow-ups).

Started by ``dbus.DBusNotifier`` (the parent side) with stderr on /dev/null; it dies with
cuewrap (its stdin reaches EOF, and PR_SET_PDEATHSIG on Linux). It talks to
``org.freedesktop.Notifications`` over jeepney (notify-py's own dependency, so nothing new)
and to the parent in JSON lines:

    parent -> worker  {"op": "notify", "cue": N, "title": …, "body": …, "replaces": ID,
                       "urgency": 1|2, "actions": [key, label, …] (optional: buttons)}
                      {"op": "close", "cue": N, "id": ID}
    worker -> parent  {"ready": true, "actions": bool}        (connected, capabilities read)
                      {"fatal": reason}                       (then it exits)
                      {"cue": N, "op": "notify", "state": "delivered"|"failed", "id": ID,
                       "reason": …}
                      {"cue": N, "op": "close", "state": "withdrawn"|"failed", "reason": …}
                      {"event": "activated", "id": ID, "action": key, "lead_back": …}
                      {"event": "closed", "id": ID, "reason": code}

One select loop over stdin and the bus socket: calls are sent without waiting (replies are
matched by serial, each bounded by REPLY_TIMEOUT), so the server's signals —
``ActionInvoked`` (a click) and ``NotificationClosed`` — are never missed. A click on a
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
import shutil
import subprocess
import sys
import time
from typing import Any

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


class Fatal(Exception):
    """The worker cannot go on; ``str`` is the reason it reports before it exits."""


def main() -> int:
    try:
        worker = Worker(_connect())
    except Fatal as exc:
        _emit({"fatal": str(exc)})
        return 1
    _emit({"ready": True, "actions": worker.actions})
    try:
        return worker.serve()
    except Fatal as exc:
        _emit({"fatal": str(exc)})
        return 1


def _connect() -> Any:
    """A connection to the session bus (its address guessed from ``XDG_RUNTIME_DIR`` where
    ``DBUS_SESSION_BUS_ADDRESS`` is unset), or ``Fatal``."""
    try:
        from jeepney.io.blocking import open_dbus_connection
    except Exception as exc:
        raise Fatal(f"jeepney unavailable: {_why(exc)}") from None
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime and os.path.exists(os.path.join(runtime, "bus")):
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={runtime}/bus"
    try:
        return open_dbus_connection(bus="SESSION", auth_timeout=1.0)
    except KeyError:
        raise Fatal("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)") from None
    except Exception as exc:
        raise Fatal(f"cannot reach the session bus: {_why(exc)}") from None


class Worker:
    """The notification service over one bus connection: its signals subscribed and its
    capabilities read at construction (or ``Fatal``), then ``serve`` until stdin ends."""

    def __init__(self, conn: Any) -> None:
        from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call
        from jeepney.bus_messages import message_bus

        self.conn = conn
        self.target = DBusAddress(PATH, bus_name=IFACE, interface=IFACE)
        try:
            rule = MatchRule(type="signal", interface=IFACE, path=PATH)
            conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=REPLY_TIMEOUT)
            caps_reply = conn.send_and_get_reply(
                new_method_call(self.target, "GetCapabilities"), timeout=REPLY_TIMEOUT
            )
        except Exception as exc:
            raise Fatal(f"the notification service did not answer: {_why(exc)}") from None
        if caps_reply.header.message_type == MessageType.error:
            name = caps_reply.header.fields.get(HeaderFields.error_name, "error")
            raise Fatal(f"{name}"[:300])
        caps = list(caps_reply.body[0]) if caps_reply.body else []
        self.actions = "actions" in caps
        # a server with body-markup reads '<', '>' and '&' in the body as markup (bold,
        # links): the body is plain text (a summary may hold any of them), so it is escaped
        self.markup = "body-markup" in caps
        self.pending: dict[int, tuple[float, dict[str, Any]]] = {}  # serial -> (deadline, req)

    def serve(self) -> int:
        """One select loop over stdin and the bus until stdin ends (0) or the bus goes away
        (``Fatal``)."""
        sel = selectors.DefaultSelector()
        sel.register(0, selectors.EVENT_READ, "stdin")
        sel.register(self.conn.sock, selectors.EVENT_READ, "bus")
        buf = b""
        while True:
            self._receive()
            timeout = self._expire(time.monotonic())
            for key, _ in sel.select(timeout):
                if key.data != "stdin":
                    continue
                data = os.read(0, 65536)
                if not data:
                    return 0  # cuewrap is gone or done: our notifications stay as they are
                buf = self._requests(buf + data)

    def _receive(self) -> None:
        """What jeepney already has buffered, or can read now."""
        while True:
            try:
                self._on_message(self.conn.receive(timeout=0))
            except TimeoutError:
                return
            except Exception as exc:
                raise Fatal(f"the session bus went away: {_why(exc)}") from None

    def _expire(self, now: float) -> float | None:
        """Calls without a reply in time fail; how long until the next one's deadline."""
        for serial, (deadline, request) in list(self.pending.items()):
            if now >= deadline:
                del self.pending[serial]
                _reply(request, "failed", reason="the notification service did not answer")
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
                    self._call(request)
                except Exception as exc:
                    _reply(request, "failed", reason=_why(exc))
        return buf

    def _call(self, request: dict[str, Any]) -> None:
        from jeepney import new_method_call

        op = request.get("op")
        if op == "notify":
            hints = {
                "urgency": ("y", int(request.get("urgency", 1))),
                "suppress-sound": ("b", True),
            }
            body = str(request["body"])
            msg = new_method_call(
                self.target,
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
        elif op == "close":
            msg = new_method_call(self.target, "CloseNotification", "u", (int(request["id"]),))
        else:
            return
        serial = next(self.conn.outgoing_serial)
        self.conn.send(msg, serial=serial)
        self.pending[serial] = (time.monotonic() + REPLY_TIMEOUT, request)

    def _on_message(self, msg: Any) -> None:
        from jeepney import HeaderFields, MessageType

        hdr = msg.header
        serial = hdr.fields.get(HeaderFields.reply_serial)
        if serial in self.pending:
            _, request = self.pending.pop(serial)
            if hdr.message_type == MessageType.error:
                name = hdr.fields.get(HeaderFields.error_name, "error")
                detail = msg.body[0] if msg.body else ""
                _reply(request, "failed", reason=f"{name}: {detail}"[:300])
            elif request["op"] == "notify":
                _reply(request, "delivered", id=int(msg.body[0]), reason="")
            else:
                _reply(request, "withdrawn", reason="CloseNotification")
            return
        if hdr.message_type != MessageType.signal:
            return
        member = hdr.fields.get(HeaderFields.member)
        if member == "ActionInvoked" and len(msg.body) >= 2:
            # the notification itself leads back; one of its buttons is cuewrap's to act on
            done = lead_back() if str(msg.body[1]) == "default" else ""
            _emit({"event": "activated", "id": int(msg.body[0]), "action": str(msg.body[1]),
                   "lead_back": done})  # fmt: skip
        elif member == "NotificationClosed" and len(msg.body) >= 2:
            _emit({"event": "closed", "id": int(msg.body[0]), "reason": int(msg.body[1])})


def _reply(request: dict[str, Any], state: str, **more: object) -> None:
    _emit({"cue": request.get("cue"), "op": request.get("op"), "state": state, **more})


def lead_back() -> str:
    """Bring the user to Pi: its tmux window and pane, then the terminal window."""
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
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=2.0, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


if __name__ == "__main__":
    sys.exit(main())
