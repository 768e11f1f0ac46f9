"""Desktop notifications over D-Bus that can be withdrawn, replaced and clicked
(docs/design.md#delivery, #follow-ups).

The notifications' side of ``dbus_worker.py``: one long-lived worker per session, shared with
the do-not-disturb watch (``helper.py``), asked for at the first notification, fed JSON lines,
read on the loop. What it keeps:

- the server's id of each notification of ours still shown (``cue -> id``);
- the session's latest shown notification: the next one is sent with ``replaces_id`` = its id,
  so one session's cues replace each other instead of stacking (the server keeps the id);
- a cue that was withdrawn before its Notify reply came: closed as soon as the id is known.

``withdraw(cue)`` sends ``CloseNotification`` only for a notification of ours that is still
shown (not failed, not replaced, not closed by the user); ``escalate(cue)`` sends it again with
critical urgency, in place. A click (``ActionInvoked`` on one of our ids) is logged as
``activated`` with what the worker did to lead back (tmux pane, terminal window): the
notification itself (the "default" action) leads back; one of its buttons (``send``'s
``actions``) does not, it goes to ``on_action(cue, key)`` with the cue it was shown for.

Eligibility is asked right before a Notify is written to the worker (at once when it is
ready, else when it says it is). Records go to ``record(kind, **fields)``: ``delivery`` (the
same states as the other channels), ``withdrawal``, ``activated``, ``desktop_closed``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cuewrap.deliver import DeliveryState
from cuewrap.engine.effects import Action
from cuewrap.loop import Loop, Timer

if TYPE_CHECKING:
    from cuewrap.deliver.batch import Batch
    from cuewrap.deliver.helper import DesktopHelper

START_TIMEOUT = 5.0  # the worker connects and reads capabilities within this, or fails
MAX_TEXT = 1000
MAX_ACTIONS = 8  # buttons on one notification (servers show few)
MAX_LABEL = 64  # characters of a button's key and label
# NotificationClosed reasons (Desktop Notifications Specification 1.2)
_CLOSED = {1: "expired", 2: "dismissed by the user", 3: "closed by CloseNotification"}


class RecordLog(Protocol):
    def __call__(self, kind: str, **fields: Any) -> None: ...


class DBusNotifier:
    def __init__(
        self,
        loop: Loop,
        record: RecordLog,
        *,
        env: Mapping[str, str] | None = None,
        python: str | None = None,
        app: str = "Pi",
    ) -> None:
        self.loop = loop
        self.app = app  # the notification's application name: Pi, or the generic-mode program
        self.record = record
        self.env = dict(os.environ if env is None else env)
        self.python = python or sys.executable
        self._helper: DesktopHelper | None = None  # while attached to the session's worker
        self._shared: DesktopHelper | None = None  # the session's, once asked for
        self._ready = False
        self._start_timer: Timer | None = None
        self._queue: list[tuple[dict[str, Any], Callable[[], bool]]] = []  # before ready
        self._in_flight: dict[int, dict[str, Any]] = {}  # cue -> notify request, no reply yet
        self._texts: dict[int, tuple[str, str]] = {}  # cue -> (title, body) while shown
        self._actions: dict[int, list[str]] = {}  # cue -> its buttons: key, label, key, …
        self._shown: dict[int, int] = {}  # cue -> server id, still shown
        self._sent: dict[int, int] = {}  # server id -> the latest cue shown with it
        self._latest: int | None = None  # cue of the session's latest shown notification
        self._withdraw_on_reply: dict[int, str] = {}  # cue -> reason
        # a click on one of a notification's buttons: (cue, key); "default" never comes here
        self.on_action: Callable[[int, str], None] | None = None
        # one popup for many sessions (deliver/batch.py; docs/attention.md), where the
        # registry has a directory: set by the channel
        self.batch: Batch | None = None
        self._eligible: dict[int, Callable[[], bool]] = {}  # cue -> its check, while shown

    @property
    def pending(self) -> int:
        """Requests not answered yet (the worker itself lives on)."""
        return len(self._queue) + len(self._in_flight)

    # -- public ---------------------------------------------------------------------------
    def send(
        self,
        cue_id: int,
        title: str,
        body: str,
        still_eligible: Callable[[], bool],
        actions: tuple[Action, ...] = (),
        about: tuple[str, bool] | None = None,
    ) -> None:
        """``actions``: buttons, shown where the server has the "actions" capability; the
        key of the one chosen comes back in the ``activated`` record. ``about``: the session's
        label and whether it needs input, for a popup shared with other sessions (``batch``)."""
        if not _eligible(still_eligible):
            self._delivery(cue_id, "dropped-ineligible", "no longer eligible before the call")
            return
        self._texts[cue_id] = (title[:MAX_TEXT], body[:MAX_TEXT])
        self._eligible[cue_id] = still_eligible
        if actions:
            self._actions[cue_id] = _flat(actions)
        if self.batch is not None and about is not None:
            self._shared_send(cue_id, about, still_eligible, 0)
            return
        self._request({"op": "notify", "cue": cue_id, "urgency": 1}, still_eligible)

    def _shared_send(
        self, cue: int, about: tuple[str, bool], still_eligible: Callable[[], bool], tries: int
    ) -> None:
        """Alone: its own popup; with other sessions' reminders a few seconds apart: the one
        popup naming them all, shown by the lead (deliver/batch.py)."""
        from cuewrap.deliver.batch import PENDING_JOIN

        assert self.batch is not None
        if not _eligible(still_eligible):
            self._delivery(cue, "dropped-ineligible", "no longer eligible before the call")
            return
        body = self._texts.get(cue, ("", ""))[1].split("\n", 1)[0]
        try:
            shared = self.batch.join(cue, about[0], body, about[1], time.time())
        except OSError as exc:  # fail open: its own popup
            self.record("popup_batch", state="failed", why=str(exc)[:200])
            shared = None
        if shared is PENDING_JOIN and tries < 8:
            self.loop.call_later(0.25, lambda: self._shared_send(cue, about, still_eligible,
                                                                 tries + 1))  # fmt: skip
            return
        if shared is None or shared is PENDING_JOIN:
            self._request({"op": "notify", "cue": cue, "urgency": 1}, still_eligible)
            return
        self.record(
            "popup_batch", cue=cue, state="joined", lead=shared.lead, shared=shared.replaces
        )
        if shared.lead == os.getpid() or not self.batch.poke(shared.lead):
            self._render(cue, shared.replaces, shared.title, shared.body, still_eligible)
        else:  # the lead shows it: a click there leads to the one that needs you first
            self._shown[cue] = shared.replaces
            self._latest = cue
            self._delivery(cue, "unconfirmable", f"in the popup session {shared.lead} shows "
                           f"for several sessions (id {shared.replaces})")  # fmt: skip

    def _render(
        self, cue: int, replaces: int, title: str, body: str, still_eligible: Callable[[], bool]
    ) -> None:
        self._request({"op": "notify", "cue": cue, "urgency": 1, "shared_title": title,
                       "shared_body": body, "shared_id": replaces}, still_eligible)  # fmt: skip

    def render_shared(self) -> None:
        """Another session asked: show the shared popup this session leads, as it is now."""
        if self.batch is None:
            return
        try:
            got = self.batch.render()
        except OSError:
            return
        if got is None:
            return
        cue, shared = got
        check = self._eligible.get(cue)
        if check is not None:
            self._render(cue, shared.replaces, shared.title, shared.body, check)

    def escalate(self, cue_id: int, still_eligible: Callable[[], bool]) -> None:
        """Show cue ``cue_id`` again, critical, in place of itself (when it is still shown)."""
        if cue_id not in self._shown:
            self._withdrawal(cue_id, "not escalated", "not shown on the desktop")
            return
        self._request({"op": "notify", "cue": cue_id, "urgency": 2}, still_eligible)

    def withdraw(self, cue_id: int, reason: str) -> None:
        if cue_id in self._in_flight or any(r.get("cue") == cue_id for r, _ in self._queue):
            self._withdraw_on_reply[cue_id] = reason
            return
        server_id = self._shown.pop(cue_id, None)
        self._texts.pop(cue_id, None)
        self._actions.pop(cue_id, None)
        self._eligible.pop(cue_id, None)
        if self._latest == cue_id:
            self._latest = None
        if self.batch is not None:
            try:
                _, others = self.batch.leave(cue_id)
            except OSError:
                others = False
            if others:  # the popup goes on for the other sessions, without this one
                self._withdrawal(cue_id, "left", f"{reason}; the shared popup shows the others")
                return
        if server_id is None:
            return  # never shown, failed, replaced or closed already: nothing to withdraw
        successor = [c for c, r in self._in_flight.items() if r.get("replaces") == server_id]
        if successor:  # a newer cue takes its place right now: closing would close that one
            self._withdrawal(cue_id, "replaced", f"by cue {successor[0]}")
            return
        self._write({"op": "close", "cue": cue_id, "id": server_id})
        self._withdrawal(cue_id, "requested", reason)

    def close(self, timeout: float = 0.5) -> None:
        """cuewrap exits: the worker goes (notifications still shown stay: the exited one)."""
        for request, _ in self._queue:
            self._delivery(int(request["cue"]), "dropped-ineligible", "cuewrap exited")
        for cue in list(self._in_flight):
            self._delivery(cue, "unconfirmable", "cuewrap exited before the result")
        self._queue.clear()
        self._in_flight.clear()
        self._stop()
        if self._shared is not None and not self._shared.running:
            self._shared.close(timeout)  # reaped now, at exit, bounded

    # -- the worker ------------------------------------------------------------------------
    def _request(self, request: dict[str, Any], still_eligible: Callable[[], bool]) -> None:
        if self._helper is None and not self._start():
            return
        if not self._ready:
            self._queue.append((request, still_eligible))
            return
        self._dispatch(request, still_eligible)

    def _dispatch(self, request: dict[str, Any], still_eligible: Callable[[], bool]) -> None:
        cue = int(request["cue"])
        if not _eligible(still_eligible):
            self._withdraw_on_reply.pop(cue, None)
            self._delivery(cue, "dropped-ineligible", "no longer eligible before the call")
            return
        title, body = self._texts.get(cue, ("", ""))
        replaces = self._shown.get(cue)  # escalation: in place of itself
        if replaces is None and self._latest is not None:
            replaces = self._shown.get(self._latest)  # the session's previous one
        if "shared_id" in request:  # the popup shared by several sessions (deliver/batch.py)
            request = dict(request)
            title, body = request.pop("shared_title"), request.pop("shared_body")
            replaces = request.pop("shared_id") or replaces
        full = {**request, "app": self.app, "title": title, "body": body, "replaces": replaces or 0}
        if cue in self._actions:
            full["actions"] = self._actions[cue]
        if self._write(full):
            self._in_flight[cue] = full
            self._delivery(cue, "requested", "critical" if request.get("urgency") == 2 else "")

    def _start(self) -> bool:
        from cuewrap.deliver.helper import for_loop

        helper = self._shared = for_loop(self.loop, self.env, self.python)
        why = helper.attach("notify", self._on_message, self._ended)
        if why:
            self.record("desktop_worker", state="failed", reason=why)
            return False
        self._helper = helper
        if not self._write({"op": "hello"}):
            return False
        self._start_timer = self.loop.call_later(START_TIMEOUT, self._on_start_timeout)
        return True

    def _on_start_timeout(self) -> None:
        self._start_timer = None
        if not self._ready:
            self._fail_all(f"the desktop worker did not start within {START_TIMEOUT:g} s")

    def _write(self, msg: dict[str, Any]) -> bool:
        helper = self._helper
        if helper is not None and helper.write(msg):
            return True
        if self._helper is not None:  # (a failed write ends the worker: told already)
            self._fail_all("cannot talk to the desktop worker")
        return False

    def _ended(self, reason: str) -> None:
        """The worker ended (or was ended): what waits on it failed."""
        self._helper = None
        self._fail_all(reason)

    def _on_message(self, msg: dict[str, Any]) -> None:
        if msg.get("ready") is True:
            self._ready = True
            if self._start_timer is not None:
                self._start_timer.cancel()
                self._start_timer = None
            self.record("desktop_worker", state="ready", actions=bool(msg.get("actions")))
            queue, self._queue = self._queue, []
            for request, still_eligible in queue:
                self._dispatch(request, still_eligible)
        elif "fatal" in msg:
            self._fail_all(str(msg["fatal"])[:300])
        elif msg.get("op") == "notify":
            self._on_notified(msg)
        elif msg.get("op") == "close":
            state = "withdrawn" if msg.get("state") == "withdrawn" else "failed"
            self._withdrawal(int(msg.get("cue", 0)), state, str(msg.get("reason", ""))[:300])
        elif msg.get("event") == "activated":
            # a click may come after the notification was closed (the focus it gave back
            # already withdrew it): still one of ours
            cue = self._cue_of(msg.get("id"))
            if cue is None and isinstance(msg.get("id"), int):
                cue = self._sent.get(msg["id"])
            if cue is not None:
                action = msg.get("action")
                self.record("activated", cue=cue, channel="desktop", action=action,
                            lead_back=msg.get("lead_back"))  # fmt: skip
                if isinstance(action, str) and action != "default" and self.on_action is not None:
                    self.on_action(cue, action[:MAX_LABEL])
        elif msg.get("event") == "closed":
            cue = self._cue_of(msg.get("id"))
            if cue is not None:
                self._shown.pop(cue, None)
                if self.batch is not None:
                    with contextlib.suppress(OSError):
                        self.batch.closed(int(msg.get("id", 0)))
                reason = _CLOSED.get(int(msg.get("reason", 0)), "closed")
                self.record("desktop_closed", cue=cue, reason=reason)

    def _on_notified(self, msg: dict[str, Any]) -> None:
        cue = int(msg.get("cue", 0))
        request = self._in_flight.pop(cue, None)
        if request is None:
            return
        if msg.get("state") != "delivered":
            self._withdraw_on_reply.pop(cue, None)
            self._delivery(cue, "failed", str(msg.get("reason", ""))[:300])
            return
        server_id = int(msg.get("id", 0))
        for other, sid in list(self._shown.items()):
            if sid == server_id and other != cue:  # replaced in place by this one
                del self._shown[other]
                self._texts.pop(other, None)
                self._actions.pop(other, None)
                self._withdrawal(other, "replaced", f"by cue {cue}")
        self._shown[cue] = server_id
        self._sent[server_id] = cue
        while len(self._sent) > 64:  # ids are reused in place (replaces_id): few stay
            del self._sent[next(iter(self._sent))]
        self._latest = cue
        if self.batch is not None:
            with contextlib.suppress(OSError):
                self.batch.shown(cue, server_id)
        self._delivery(cue, "delivered", f"notification id {server_id}")
        reason = self._withdraw_on_reply.pop(cue, None)
        if reason is not None:
            self.withdraw(cue, reason)

    def _cue_of(self, server_id: object) -> int | None:
        for cue, sid in self._shown.items():
            if sid == server_id:
                return cue
        return None

    def _fail_all(self, reason: str) -> None:
        """The worker is unusable: what waits on it failed; the next notification starts a
        new one."""
        for request, _ in self._queue:
            self._delivery(int(request["cue"]), "failed", reason)
        for cue in self._in_flight:
            self._delivery(cue, "failed", reason)
        self._queue.clear()
        self._in_flight.clear()
        self._shown.clear()
        self._latest = None
        self.record("desktop_worker", state="failed", reason=reason)
        self._stop()

    def _stop(self) -> None:
        helper, self._helper = self._helper, None
        self._ready = False
        if self._start_timer is not None:
            self._start_timer.cancel()
            self._start_timer = None
        if helper is not None:
            helper.detach("notify")  # the last user out stops the worker

    def _delivery(self, cue: int, state: DeliveryState, reason: str) -> None:
        self.record("delivery", cue=cue, channel="desktop", state=state, reason=reason)

    def _withdrawal(self, cue: int, state: str, reason: str) -> None:
        self.record("withdrawal", cue=cue, channel="desktop", state=state, reason=reason)


def _flat(actions: tuple[Action, ...]) -> list[str]:
    """D-Bus's action list (key, label, key, label, …): bounded, one printable line each,
    never the "default" action's key (a click on the notification itself)."""
    out: list[str] = []
    for a in actions[:MAX_ACTIONS]:
        key, label = (" ".join("".join(c if c.isprintable() else " " for c in t).split())
                      for t in (a.key, a.label))  # fmt: skip
        if key and key != "default":
            out += [key[:MAX_LABEL], label[:MAX_LABEL] or key[:MAX_LABEL]]
    return out


def _eligible(check: Callable[[], bool]) -> bool:
    try:
        return bool(check())
    except Exception:  # a broken check must not send a cue that may be stale
        return False
