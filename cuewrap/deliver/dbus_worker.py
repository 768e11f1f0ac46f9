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


def main() -> int:
    try:
        from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection
    except Exception as exc:
        _emit({"fatal": f"jeepney unavailable: {_why(exc)}"})
        return 1
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime and os.path.exists(os.path.join(runtime, "bus")):
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={runtime}/bus"
    try:
        conn = open_dbus_connection(bus="SESSION", auth_timeout=1.0)
    except KeyError:
        _emit({"fatal": "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"})
        return 1
    except Exception as exc:
        _emit({"fatal": f"cannot reach the session bus: {_why(exc)}"})
        return 1
    target = DBusAddress(PATH, bus_name=IFACE, interface=IFACE)
    try:
        rule = MatchRule(type="signal", interface=IFACE, path=PATH)
        conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=REPLY_TIMEOUT)
        caps_reply = conn.send_and_get_reply(
            new_method_call(target, "GetCapabilities"), timeout=REPLY_TIMEOUT
        )
    except Exception as exc:
        _emit({"fatal": f"the notification service did not answer: {_why(exc)}"})
        return 1
    if caps_reply.header.message_type == MessageType.error:
        name = caps_reply.header.fields.get(HeaderFields.error_name, "error")
        _emit({"fatal": f"{name}"[:300]})
        return 1
    caps = list(caps_reply.body[0]) if caps_reply.body else []
    actions = "actions" in caps
    # a server with body-markup reads '<', '>' and '&' in the body as markup (bold, links):
    # the body is plain text (a summary may hold any of them), so they are escaped for it
    markup = "body-markup" in caps
    _emit({"ready": True, "actions": actions})

    pending: dict[int, tuple[float, dict[str, Any]]] = {}  # serial -> (deadline, request)

    def call(request: dict[str, Any]) -> None:
        op = request.get("op")
        if op == "notify":
            hints = {
                "urgency": ("y", int(request.get("urgency", 1))),
                "suppress-sound": ("b", True),
            }
            msg = new_method_call(
                target,
                "Notify",
                "susssasa{sv}i",
                (
                    str(request.get("app") or APP_NAME),
                    int(request.get("replaces", 0)),
                    "",
                    str(request["title"]),
                    _escape(str(request["body"])) if markup else str(request["body"]),
                    ACTION + _extra_actions(request) if actions else [],
                    hints,
                    -1,
                ),
            )
        elif op == "close":
            msg = new_method_call(target, "CloseNotification", "u", (int(request["id"]),))
        else:
            return
        serial = next(conn.outgoing_serial)
        conn.send(msg, serial=serial)
        pending[serial] = (time.monotonic() + REPLY_TIMEOUT, request)

    def reply(request: dict[str, Any], state: str, **more: object) -> None:
        _emit({"cue": request.get("cue"), "op": request.get("op"), "state": state, **more})

    def on_message(msg: Any) -> None:
        hdr = msg.header
        serial = hdr.fields.get(HeaderFields.reply_serial)
        if serial in pending:
            _, request = pending.pop(serial)
            if hdr.message_type == MessageType.error:
                name = hdr.fields.get(HeaderFields.error_name, "error")
                detail = msg.body[0] if msg.body else ""
                reply(request, "failed", reason=f"{name}: {detail}"[:300])
            elif request["op"] == "notify":
                reply(request, "delivered", id=int(msg.body[0]), reason="")
            else:
                reply(request, "withdrawn", reason="CloseNotification")
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

    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ, "stdin")
    sel.register(conn.sock, selectors.EVENT_READ, "bus")
    buf = b""
    while True:
        while True:  # what jeepney already has buffered, or can read now
            try:
                on_message(conn.receive(timeout=0))
            except TimeoutError:
                break
            except Exception as exc:
                _emit({"fatal": f"the session bus went away: {_why(exc)}"})
                return 1
        now = time.monotonic()
        for serial, (deadline, request) in list(pending.items()):
            if now >= deadline:
                del pending[serial]
                reply(request, "failed", reason="the notification service did not answer")
        timeout = min((d for d, _ in pending.values()), default=None)
        events = sel.select(None if timeout is None else max(0.0, timeout - now))
        for key, _ in events:
            if key.data != "stdin":
                continue
            data = os.read(0, 65536)
            if not data:
                return 0  # cuewrap is gone or done: our notifications stay as they are
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    request = json.loads(line)
                except ValueError:
                    continue
                if isinstance(request, dict):
                    try:
                        call(request)
                    except Exception as exc:
                        reply(request, "failed", reason=_why(exc))


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
