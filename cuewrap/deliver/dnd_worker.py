"""The desktop's do-not-disturb, watched inside the desktop worker (``dbus_worker.py``, on its
bus connection; docs/attention.md).

Started when ``dnd.DesktopWatch`` sends the worker ``{"op": "watch"}``. It reads what can be
read cheaply and is told of changes, never polls:

- the notification server's ``org.freedesktop.Notifications`` property ``Inhibited``
  (KDE Plasma and servers that follow the specification's draft);
- dunst's ``paused`` (``org.dunstproject.cmd0``, what ``dunstctl set-paused`` sets);
- both re-read when the server says its properties changed (``PropertiesChanged`` on
  ``/org/freedesktop/Notifications``) or another server takes the name;
- GNOME's ``show-banners`` (``org.gnome.desktop.notifications``) through ``gsettings``, where
  GNOME Shell is the notification server (or ``XDG_CURRENT_DESKTOP`` says GNOME): read at
  start, then followed with ``gsettings monitor``.

The bus is read through the worker's calls (sent without waiting, replies matched by serial):
a read never blocks the notifications' side nor swallows the server's signals. It writes one
JSON line once the first reading is whole and one per change::

    {"dnd": {"quiet": bool, "via": [what says so], "readable": [what could be read]}}
"""

from __future__ import annotations

import json
import os
import selectors
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess

PATH = "/org/freedesktop/Notifications"
NAME = "org.freedesktop.Notifications"
DUNST = "org.dunstproject.cmd0"
GNOME = ("org.gnome.desktop.notifications", "show-banners")
TIMEOUT = 1.0

OnReply = Callable[[Any], None]
"""A call's reply: the message, or None when none came in time (the worker's REPLY_TIMEOUT)."""
Call = Callable[[Any, OnReply], None]
"""The worker's ``call``: a message sent without waiting, its reply to ``on_reply``."""


def _emit(msg: dict[str, object]) -> None:
    os.write(1, (json.dumps({"dnd": msg}) + "\n").encode())


def _boolean(reply: Any) -> bool | None:
    """A boolean property's value from a ``Get`` reply, or None (no reply, absent, error,
    not a bool)."""
    from jeepney import MessageType

    if reply is None or reply.header.message_type == MessageType.error or not reply.body:
        return None
    value = reply.body[0]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool):
        return value[1]
    return None


def _gnome_banners() -> bool | None:
    """GNOME's show-banners (False: do-not-disturb), or None where there is no such key."""
    import shutil
    import subprocess

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


def _gnome(server: str) -> bool:
    """GNOME's setting counts only where GNOME Shell shows the notifications (a GNOME schema
    installed under another desktop says nothing about it)."""
    if server == "gnome-shell":
        return True
    return "GNOME" in os.environ.get("XDG_CURRENT_DESKTOP", "").upper().split(":")


class Watch:
    """Made by the worker at ``{"op": "watch"}`` with its connection (or None), its ``call``
    and its selector: subscribes, asks the server's name (is it GNOME's?), then reads;
    ``read()`` again at each change the bus signals."""

    def __init__(self, conn: Any, call: Call, sel: selectors.BaseSelector) -> None:
        self.call = call
        self.sel = sel
        self.conn = conn
        self.gnome: bool | None = None
        self.monitor: subprocess.Popen[bytes] | None = None
        self.values: dict[str, bool | None] = {}
        self.reading = 0  # Get calls out
        self.again = False  # a change came while reading: read once more after
        self.started = False
        self.last: dict[str, object] | None = None
        if self.conn is None:
            self._start("")
            return
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus

        props = MatchRule(
            type="signal",
            interface="org.freedesktop.DBus.Properties",
            member="PropertiesChanged",
            path=PATH,
        )
        owner = MatchRule(
            type="signal", interface="org.freedesktop.DBus", member="NameOwnerChanged"
        )
        owner.add_arg_condition(0, NAME)
        for rule in (props, owner):
            call(message_bus.AddMatch(rule), lambda reply: None)
        call(self._method(NAME, "GetServerInformation"), self._server)

    def _method(self, interface: str, name: str, *args: str) -> Any:
        from jeepney import DBusAddress, new_method_call

        target = DBusAddress(PATH, bus_name=NAME, interface=interface)
        return new_method_call(target, name, "ss" if args else None, args)

    def _server(self, reply: Any) -> None:
        name = ""
        if reply is not None and reply.body and isinstance(reply.body[0], str):
            name = reply.body[0][:100]
        self._start(name)

    def _start(self, server: str) -> None:
        """GNOME's setting read and followed where it counts, then the first reading."""
        self.started = True
        if _gnome(server):
            self.gnome = _gnome_banners()
        if self.gnome is not None:
            import subprocess

            try:
                self.monitor = subprocess.Popen(
                    ["gsettings", "monitor", *GNOME],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError:
                self.monitor = None
            if self.monitor is not None and self.monitor.stdout is not None:
                self.sel.register(self.monitor.stdout, selectors.EVENT_READ, self._banners)
        self.read()

    def _banners(self) -> bool:
        assert self.monitor is not None and self.monitor.stdout is not None
        line = self.monitor.stdout.readline()
        if not line:
            self.sel.unregister(self.monitor.stdout)
            self.gnome = None
        else:
            self.gnome = b"true" in line.split(b":", 1)[-1]
        self.tell()
        return True

    def read(self) -> None:
        """Read the server's properties again (both at once), then ``tell``."""
        if not self.started:
            return
        if self.reading:
            self.again = True
            return
        if self.conn is None:
            self.values = {}
            self.tell()
            return
        self.reading = 2
        for label, interface, prop in (("Inhibited", NAME, "Inhibited"),
                                       ("dunst paused", DUNST, "paused")):  # fmt: skip
            get = self._method("org.freedesktop.DBus.Properties", "Get", interface, prop)
            self.call(get, self._getter(label))

    def _getter(self, label: str) -> OnReply:
        return lambda reply: self._got(label, reply)

    def _got(self, label: str, reply: Any) -> None:
        self.values[label] = _boolean(reply)
        self.reading -= 1
        if self.reading:
            return
        if self.again:
            self.again = False
            self.read()
            return
        self.tell()

    def state(self) -> dict[str, object]:
        readable: list[str] = []
        via: list[str] = []
        for label, value in (
            ("Inhibited", self.values.get("Inhibited")),
            ("dunst paused", self.values.get("dunst paused")),
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

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.kill()
