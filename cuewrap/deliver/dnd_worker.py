"""The desktop's do-not-disturb, watched in a worker process (docs/attention.md).

Started by ``dnd.DesktopWatch`` with stderr on /dev/null; it dies with cuewrap (stdin EOF,
PR_SET_PDEATHSIG). It reads what can be read cheaply and is told of changes, never polls:

- the notification server's ``org.freedesktop.Notifications`` property ``Inhibited``
  (KDE Plasma and servers that follow the specification's draft);
- dunst's ``paused`` (``org.dunstproject.cmd0``, what ``dunstctl set-paused`` sets);
- both re-read when the server says its properties changed (``PropertiesChanged`` on
  ``/org/freedesktop/Notifications``) or another server takes the name;
- GNOME's ``show-banners`` (``org.gnome.desktop.notifications``) through ``gsettings``, where
  GNOME Shell is the notification server (or ``XDG_CURRENT_DESKTOP`` says GNOME): read at
  start, then followed with ``gsettings monitor``.

It writes one JSON line at start and one per change::

    {"quiet": bool, "via": [what says so], "readable": [what could be read]}
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
from typing import Any

PATH = "/org/freedesktop/Notifications"
NAME = "org.freedesktop.Notifications"
DUNST = "org.dunstproject.cmd0"
GNOME = ("org.gnome.desktop.notifications", "show-banners")
TIMEOUT = 1.0


def _emit(msg: dict[str, object]) -> None:
    os.write(1, (json.dumps(msg) + "\n").encode())


def _get(conn: Any, interface: str, prop: str) -> bool | None:
    """A boolean property of the notification server, or None (absent, not a bool, error)."""
    from jeepney import DBusAddress, MessageType, Properties

    try:
        reply = conn.send_and_get_reply(
            Properties(DBusAddress(PATH, bus_name=NAME, interface=interface)).get(prop),
            timeout=TIMEOUT,
        )
    except Exception:
        return None
    if reply.header.message_type == MessageType.error or not reply.body:
        return None
    value = reply.body[0]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool):
        return value[1]
    return None


def _gnome_banners() -> bool | None:
    """GNOME's show-banners (False: do-not-disturb), or None where there is no such key."""
    if shutil.which("gsettings") is None:
        return None
    try:
        out = subprocess.run(
            ["gsettings", "get", *GNOME], capture_output=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    word = out.stdout.decode(errors="replace").strip()
    return {"true": True, "false": False}.get(word) if out.returncode == 0 else None


def _server_name(conn: Any) -> str:
    """The notification server's name (``GetServerInformation``): "gnome-shell", "dunst" …"""
    from jeepney import DBusAddress, MessageType, new_method_call

    try:
        reply = conn.send_and_get_reply(
            new_method_call(DBusAddress(PATH, bus_name=NAME, interface=NAME),
                            "GetServerInformation"),
            timeout=TIMEOUT,
        )  # fmt: skip
    except Exception:
        return ""
    if reply.header.message_type == MessageType.error or not reply.body:
        return ""
    return str(reply.body[0])[:100]


def _gnome(conn: Any) -> bool:
    """GNOME's setting counts only where GNOME Shell shows the notifications (a GNOME schema
    installed under another desktop says nothing about it)."""
    if conn is not None and _server_name(conn) == "gnome-shell":
        return True
    return "GNOME" in os.environ.get("XDG_CURRENT_DESKTOP", "").upper().split(":")


class Watch:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.gnome: bool | None = _gnome_banners() if _gnome(conn) else None
        self.last: dict[str, object] | None = None

    def state(self) -> dict[str, object]:
        readable: list[str] = []
        via: list[str] = []
        conn = self.conn
        for label, value in (
            ("Inhibited", None if conn is None else _get(conn, NAME, "Inhibited")),
            ("dunst paused", None if conn is None else _get(conn, DUNST, "paused")),
            ("GNOME show-banners", None if self.gnome is None else not self.gnome),
        ):
            if value is not None:
                readable.append(label)
                if value:
                    via.append(label)
        return {"quiet": bool(via), "via": via, "readable": readable}

    def tell(self) -> None:
        now = self.state()
        if now != self.last:
            self.last = now
            _emit(now)


def _subscribe(conn: Any) -> None:
    from jeepney import MatchRule
    from jeepney.bus_messages import message_bus

    props = MatchRule(
        type="signal",
        interface="org.freedesktop.DBus.Properties",
        member="PropertiesChanged",
        path=PATH,
    )
    owner = MatchRule(type="signal", interface="org.freedesktop.DBus", member="NameOwnerChanged")
    owner.add_arg_condition(0, NAME)
    for rule in (props, owner):
        conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=TIMEOUT)


def _connect() -> Any:
    try:
        from cuewrap.deliver.dbus_worker import _connect as connect

        conn = connect()
        _subscribe(conn)
        return conn
    except Exception:
        return None


def main() -> int:
    conn = _connect()
    watch = Watch(conn)
    monitor: subprocess.Popen[bytes] | None = None
    if watch.gnome is not None:
        try:
            monitor = subprocess.Popen(
                ["gsettings", "monitor", *GNOME],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            monitor = None
    watch.tell()
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ, "stdin")
    if conn is not None:
        sel.register(conn.sock, selectors.EVENT_READ, "bus")
    if monitor is not None and monitor.stdout is not None:
        sel.register(monitor.stdout, selectors.EVENT_READ, "gnome")
    try:
        while True:
            for key, _ in sel.select():
                if key.data == "stdin":
                    if not os.read(0, 4096):
                        return 0
                elif key.data == "bus":
                    if not _drain(conn):
                        sel.unregister(conn.sock)
                        watch.conn = None
                    watch.tell()
                elif key.data == "gnome":
                    assert monitor is not None and monitor.stdout is not None
                    line = monitor.stdout.readline()
                    if not line:
                        sel.unregister(monitor.stdout)
                        watch.gnome = None
                    else:
                        watch.gnome = b"true" in line.split(b":", 1)[-1]
                    watch.tell()
    finally:
        if monitor is not None:
            monitor.kill()


def _drain(conn: Any) -> bool:
    """Read what the bus sent (signals: their content does not matter, the state is read
    again); False when the bus went away."""
    while True:
        try:
            conn.receive(timeout=0)
        except TimeoutError:
            return True
        except Exception:
            return False


if __name__ == "__main__":
    raise SystemExit(main())
