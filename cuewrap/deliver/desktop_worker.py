"""The desktop-notification worker: a separate, short-lived process per notification.

Started by ``desktop.DesktopNotifier`` (the parent side, which has the wire format) with
stderr on /dev/null; it imports notify-py, says it is ready, waits for "go", makes ONE call and
reports the result on stdout. Nothing here runs in the relay's process.

Linux (and other D-Bus desktops): notify-py's own D-Bus notifier counts an *error* reply as
success (jeepney's ``send_and_get_reply`` returns error replies instead of raising), so "no
notification daemon" would read as delivered. The worker plugs a checked notifier into
notify-py (its ``use_custom_notifier`` hook): same ``Notify`` call over jeepney, 1 s auth and
2 s reply timeouts, an error reply is "failed" with the D-Bus error name, a notification id is
"delivered" (the daemon accepted it). It also asks for no sound (``suppress-sound``). macOS:
notify-py's bundled notificator; its exit status cannot confirm display: "unconfirmable".
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

APP_NAME = "Pi"


def _emit(msg: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main() -> int:
    try:
        request = json.loads(sys.stdin.readline())
        title, body = str(request["title"]), str(request["body"])
    except (ValueError, KeyError, TypeError):
        return 2
    try:
        send = _load_sender()
    except Exception as exc:
        _emit({"state": "failed", "reason": f"notify-py unavailable: {_why(exc)}"})
        return 1
    _emit({"ready": True})
    if sys.stdin.readline().strip() != "go":
        return 0
    try:
        state, reason = send(title, body)
    except Exception as exc:
        state, reason = "failed", _why(exc)
    _emit({"state": state, "reason": reason})
    return 0


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _send_silent(notify: Any, title: str, body: str) -> bool:
    """One notify-py call: our app name, no icon, no sound (docs/design.md#cue-rules rule 2:
    silent)."""
    return bool(
        notify.send_notification(
            supplied_title=title,
            supplied_message=body,
            supplied_application_name=APP_NAME,
            supplied_urgency="normal",
            supplied_icon_path="",
            supplied_audio_path=None,
        )
    )


def _load_sender() -> Callable[[str, str], tuple[str, str]]:
    """Import notify-py quietly and return ``send(title, body) -> (state, reason)``."""
    # loguru logs to stderr by default: silence it before notify-py imports it.
    from loguru import logger

    logger.remove()
    logger.disable("notifypy")

    if sys.platform == "darwin":
        from notifypy import Notify

        mac = Notify()

        def send_mac(title: str, body: str) -> tuple[str, str]:
            if _send_silent(mac, title, body):
                return "unconfirmable", "handed to the macOS notificator"
            return "failed", "the macOS notificator failed"

        return send_mac

    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        # the usual systemd location when the variable did not reach us
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime and os.path.exists(os.path.join(runtime, "bus")):
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={runtime}/bus"

    from notifypy import Notify
    from notifypy.os_notifiers._base import BaseNotifier

    class CheckedDBusNotifier(BaseNotifier):  # type: ignore[misc]
        """notify-py's D-Bus call, but an error reply is a failure, not a success."""

        def __init__(self, **_: object) -> None:
            self.result = ("failed", "not sent")

        def send_notification(self, **kw: object) -> bool:
            self.result = _dbus_notify(
                str(kw.get("notification_title") or " "),
                str(kw.get("notification_subtitle") or " "),
                str(kw.get("application_name") or APP_NAME),
            )
            return self.result[0] == "delivered"

    notify = Notify(use_custom_notifier=CheckedDBusNotifier)

    def send_dbus(title: str, body: str) -> tuple[str, str]:
        _send_silent(notify, title, body)
        result: tuple[str, str] = notify._notifier.result
        return result

    return send_dbus


def _dbus_notify(title: str, body: str, app: str) -> tuple[str, str]:
    """org.freedesktop.Notifications.Notify over jeepney (notify-py's own dependency)."""
    from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    try:
        conn = open_dbus_connection(bus="SESSION", auth_timeout=1.0)
    except KeyError:
        return "failed", "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
    except Exception as exc:
        return "failed", f"cannot reach the session bus: {_why(exc)}"
    try:
        target = DBusAddress(
            "/org/freedesktop/Notifications",
            bus_name="org.freedesktop.Notifications",
            interface="org.freedesktop.Notifications",
        )
        hints = {"urgency": ("y", 1), "suppress-sound": ("b", True)}
        call = new_method_call(
            target,
            "Notify",
            "susssasa{sv}i",
            (app, 0, "", title, body, [], hints, -1),
        )
        try:
            reply = conn.send_and_get_reply(call, timeout=2.0)
        except TimeoutError:
            return "failed", "the notification service did not answer within 2 s"
        if reply.header.message_type == MessageType.error:
            name = reply.header.fields.get(HeaderFields.error_name, "error")
            detail = reply.body[0] if reply.body else ""
            return "failed", f"{name}: {detail}"[:300]
        notification_id = reply.body[0] if reply.body else "?"
        return "delivered", f"notification id {notification_id}"
    finally:
        with contextlib.suppress(Exception):
            conn.close()
