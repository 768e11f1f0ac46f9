"""One desktop popup for many sessions (docs/attention.md): reminders of several sessions that
come within ``WINDOW`` seconds of each other share one D-Bus notification that names them all.

No daemon: the sessions share a small file beside their registry entries, one per session bus
(``popup-<hash of the bus address>.json``), read and written under an exclusive ``flock`` (a
few hundred bytes: the lock is held for microseconds). It holds the shared notification's
server id and its members: each session's pid, label, status and whether it needs input.

- ``join``: right before a session's own popup. A batch whose last reminder is at most
  ``WINDOW`` seconds old, with another live member, is joined; otherwise this session starts
  a new one (alone: it sends its own popup as before, and ``shown`` records the server's id).
  A batch whose popup is still being sent (no id yet) is waited for (``PENDING``).
- The **lead** renders the shared popup — the first member that needs input, else the
  earliest — so that a click (the server tells only the client that sent it) leads to the
  session that needs the user first. A member that is not the lead asks the lead to render
  (``poke``: one line on its control socket, not waited for); if that fails it renders itself.
- ``leave``: a member's reminder went stale (the user came back, the wait was answered): it
  leaves; the popup is closed only when nobody is left, else the lead renders the rest.
- Dead members (their pid is gone) are dropped at every read.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

WINDOW = 5.0  # seconds between reminders that share one popup
PENDING = 2.0  # seconds a batch without an id yet is waited for
MAX_MEMBERS = 32
MAX_BATCHES = 8
MAX_TEXT = 200


class Shared(NamedTuple):
    """Render this: the shared popup's server id, its title and body, and who leads."""

    replaces: int
    title: str
    body: str
    lead: int


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Batch:
    def __init__(
        self, directory: str, bus: str, app: str, poke: Callable[[int], bool] | None = None
    ) -> None:
        key = hashlib.sha256(bus.encode()).hexdigest()[:16]
        self.path = os.path.join(directory, f"popup-{key}.json")
        self.lock = os.path.join(directory, f"popup-{key}.lock")
        self.pid = os.getpid()
        self.app = app
        self.poke = poke if poke is not None else _poke(directory)

    # -- the file -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[dict[str, Any]]]:
        """The batches (each ``{"id", "at", "members"}``), written back when changed."""
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            batches = self._read()
            before = json.dumps(batches, sort_keys=True)
            yield batches
            batches[:] = [b for b in batches if b["members"]][-MAX_BATCHES:]
            if json.dumps(batches, sort_keys=True) != before:
                tmp = f"{self.path}.{self.pid}.tmp"
                with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
                    json.dump({"batches": batches}, fh)
                os.replace(tmp, self.path)
        finally:
            os.close(fd)

    def _read(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                raw = json.load(fh)
        except (OSError, ValueError):
            raw = {}
        out = []
        listed = raw.get("batches") if isinstance(raw, dict) else None
        for b in listed if isinstance(listed, list) else []:
            if not isinstance(b, dict):
                continue
            members = b.get("members")
            ok = [
                m
                for m in (members if isinstance(members, list) else [])
                if isinstance(m, dict)
                and isinstance(m.get("pid"), int)
                and isinstance(m.get("at"), int | float)
                and _alive(m["pid"])
            ][:MAX_MEMBERS]
            sid, at = b.get("id"), b.get("at")
            if ok:
                out.append({"id": sid if isinstance(sid, int) else 0,
                            "at": at if isinstance(at, int | float) else 0,
                            "members": ok})  # fmt: skip
        return out

    def _mine(self, batches: list[dict[str, Any]], cue: int | None = None) -> dict[str, Any] | None:
        for b in batches:
            for m in b["members"]:
                if m["pid"] == self.pid and (cue is None or m.get("cue") == cue):
                    return b
        return None

    # -- a session's side -----------------------------------------------------------------
    def join(self, cue: int, label: str, status: str, needs: bool, now: float) -> Shared | None:
        """Before this session's popup for ``cue``: None to send its own (alone), ``Shared``
        to show the shared one, or ``PENDING_JOIN`` (try again in a moment)."""
        me = {"pid": self.pid, "cue": cue, "label": label[:MAX_TEXT], "status": status[:MAX_TEXT],
              "needs": needs, "at": now, "app": self.app[:50]}  # fmt: skip
        with self._locked() as batches:
            own = self._mine(batches)
            if own is not None and len(own["members"]) > 1 and own["id"]:
                # this session's earlier reminder is in a shared popup still: replaced there
                own["members"] = [m for m in own["members"] if m["pid"] != self.pid] + [me]
                return self._shared(own)
            others = [
                b
                for b in batches
                if b is not own and b["members"] and now - float(b["at"]) <= WINDOW
            ]
            if others and not others[-1]["id"] and now - float(others[-1]["at"]) <= PENDING:
                return PENDING_JOIN  # that batch's first popup is on its way
            if own is not None:
                own["members"] = [m for m in own["members"] if m["pid"] != self.pid]
            if not others or not others[-1]["id"]:
                batches.append({"id": 0, "at": now, "members": [me]})
                return None
            b = others[-1]
            b["members"] = [*b["members"], me][-MAX_MEMBERS:]
            b["at"] = now
            return self._shared(b)

    def shown(self, cue: int, server_id: int) -> None:
        """This session's popup for ``cue`` got ``server_id``: its batch's id."""
        with self._locked() as batches:
            b = self._mine(batches, cue)
            if b is not None:
                b["id"] = server_id

    def render(self) -> tuple[int, Shared] | None:
        """What this session shows as the lead now: (its cue, the shared popup), or None."""
        with self._locked() as batches:
            b = self._mine(batches)
            if b is None or not b["id"]:
                return None
            cue = next(m.get("cue") for m in b["members"] if m["pid"] == self.pid)
            return (cue, self._shared(b)) if isinstance(cue, int) else None

    def leave(self, cue: int) -> tuple[int, bool]:
        """This session's ``cue`` went stale: (the shared popup's id or 0, whether others are
        still in it). The lead of the rest is asked to show them."""
        with self._locked() as batches:
            b = self._mine(batches, cue)
            if b is None:
                return 0, False
            b["members"] = [m for m in b["members"] if m["pid"] != self.pid]
            sid = int(b["id"])
            rest = list(b["members"])
            lead = _lead(rest) if rest else None
        if lead is None:
            return sid, False
        self.poke(lead)
        return sid, True

    def closed(self, server_id: int) -> None:
        """The shared popup was closed (dismissed, expired): its batch ends."""
        with self._locked() as batches:
            for b in batches:
                if b["id"] == server_id:
                    b["members"] = []

    def _shared(self, b: dict[str, Any]) -> Shared:
        members = b["members"]
        lead = _lead(members)
        order = sorted(members, key=lambda m: (not m.get("needs"), m["at"]))
        labels = [str(m.get("label") or "?") for m in order]
        lines = []
        for m, label in zip(order, labels, strict=True):
            named = f"{label} ({m['pid']})" if labels.count(label) > 1 else label
            lines.append(f"{named}: {m.get('status') or ''}")
        apps = {str(m.get("app") or "") for m in members}
        app = apps.pop() if len(apps) == 1 else "cuewrap"
        if len(members) == 1:  # the last one left: as its own popup reads
            only = members[0]
            title = f"{app} — {only.get('label') or '?'}"
            return Shared(int(b["id"]), title, str(only.get("status") or ""), lead)
        title = f"{app} — {len(members)} sessions"
        return Shared(int(b["id"]), title, "\n".join(lines), lead)


PENDING_JOIN = Shared(-1, "", "", 0)  # the batch's first popup is on its way: try again soon


def _lead(members: list[dict[str, Any]]) -> int:
    waiting = [m for m in members if m.get("needs")]
    pick = min(waiting or members, key=lambda m: float(m["at"]))
    return int(pick["pid"])


def _poke(directory: str) -> Callable[[int], bool]:
    """Ask session ``pid`` to render the shared popup: one line on its control socket, not
    waited for (its reply is dropped)."""

    def poke(pid: int) -> bool:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(os.path.join(directory, f"{pid}.sock"))
            sock.send(b'{"v": 1, "op": "popup"}\n')
            return True
        except OSError:
            return False
        finally:
            sock.close()

    return poke


def for_env(env: Mapping[str, str], app: str) -> Batch | None:
    """The batch of this session bus, beside the registry (None: no private directory)."""
    from cuewrap.sessions.registry import own_directory

    bus = env.get("DBUS_SESSION_BUS_ADDRESS") or os.path.join(env.get("XDG_RUNTIME_DIR", ""), "bus")
    directory = own_directory(env)
    return Batch(directory, bus, app) if directory is not None else None


def now() -> float:
    return time.time()
