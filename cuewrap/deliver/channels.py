"""Every channel of a session, as the channel protocol (``deliver.channel``) wants it.

Each class here adapts one notifier: ``TerminalChannel`` (``terminal.TerminalNotifier``: the
OSC and the bell, bytes for ``inject``; inside tmux DCS-wrapped, as the plan made from tmux's
view at that notification says), ``DBusChannel``
(``dbus.DBusNotifier``: one long-lived worker; withdraw, replace, buttons, a receipt),
``NotifyPyChannel`` (macOS: ``desktop.DesktopNotifier``, one worker per cue) and
``CommandChannel`` (``command.CommandNotifier``: the user's ``notify.command``). A notifier
is built on its channel's first notification, so a session that never cues never imports it.

A new channel is one class here (and its notifier's module), and one line in
``Delivery.__init__`` (or ``desktop_channel``) that builds it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cuewrap.deliver.channel import Capabilities, Message, Record, WithdrawalRecord
from cuewrap.loop import Loop
from cuewrap.term.sequences import BEL

if TYPE_CHECKING:
    from cuewrap.deliver.batch import Batch
    from cuewrap.deliver.command import CommandNotifier
    from cuewrap.deliver.dbus import DBusNotifier, RecordLog
    from cuewrap.deliver.desktop import DesktopNotifier
    from cuewrap.deliver.plan import Plan
    from cuewrap.deliver.terminal import TerminalNotifier


# -- the terminal -----------------------------------------------------------------------------
class TerminalChannel:
    """The terminal's notification OSC (777 / 9 / 99, wrapped for tmux where it passes it) and
    the bell. It writes the OSC only where the plan says so; the bell rings either way (inside
    tmux, from a pane the plan cannot reach, the bell is tmux's window flag: the tmux side's)."""

    name = "terminal"

    def __init__(
        self,
        notifier: TerminalNotifier,
        plan: Plan,
        *,
        bell: bool,
        inject: Callable[[bytes], None],
        record: Record,
        withdrawal: WithdrawalRecord,
    ) -> None:
        self.bell = bell
        self.inject = inject
        self.record = record
        self.withdrawal = withdrawal
        # cues whose OSC was written and not withdrawn: the notifier that wrote it, whether
        # the terminal it went to closes it, and why not
        self._sent: dict[int, tuple[TerminalNotifier, bool, str]] = {}
        self.use(notifier, plan)

    def use(self, notifier: TerminalNotifier, plan: Plan, *, through_tmux: bool = False) -> None:
        """The choice and the plan for what follows: made again when the terminal answered
        cuewrap's query, and inside tmux for each notification from what tmux says then
        (``through_tmux``: from a fresh view of Pi's pane)."""
        self.notifier = notifier
        self.plan = plan
        self.through_tmux = through_tmux

    @property
    def capabilities(self) -> Capabilities:
        """As the plan says; inside tmux each cue's plan may differ: it can withdraw while a
        cue it holds went to a terminal that closes it (``withdraw`` decides per cue)."""
        plan = self.plan
        closes = plan.can_close or any(sent[1] for sent in self._sent.values())
        return Capabilities(withdraw=closes, cannot_withdraw=plan.close_why)

    def send(self, m: Message) -> None:
        cue, plan = m.cue_id, self.plan
        protocol = self.notifier.choice.protocol
        if self.through_tmux:
            self._through_tmux(m)
            return
        if plan.terminal and protocol != "off":
            data = self.notifier.build(m.notify, m.ident)
            self.record(cue, "terminal", "requested", protocol)
            self.inject(data)
            self._sent[cue] = (self.notifier, plan.can_close, plan.close_why)
            self.record(cue, "terminal", "unconfirmable", "terminal OSC has no receipt")
        else:
            why = self.notifier.choice.reason if protocol == "off" else f"not sent: {plan.why}"
            self.record(cue, "terminal", "off", why)
            if self.rings:
                self.inject(BEL)
        if self.rings:
            self.record(cue, "bell", "unconfirmable", "")
        elif self.bell:
            self.record(cue, "bell", "off", plan.bell_why)

    def _through_tmux(self, m: Message) -> None:
        """Inside tmux: the OSC DCS-wrapped from a pane a client shows with passthrough on
        (else the reason, e.g. the option to set); the bell only where the plan sends the
        desktop's popup instead (a BEL from a hidden pane is tmux's window flag, which the
        tmux side decides)."""
        cue, plan, choice = m.cue_id, self.plan, self.notifier.choice
        if choice.protocol == "off":
            self.record(cue, "terminal", "off", choice.reason)
            return
        if plan.terminal:
            self.inject(self.notifier.build(m.notify, m.ident))
            self._sent[cue] = (self.notifier, plan.can_close, plan.close_why)
            self.record(cue, "terminal", "unconfirmable", "tmux passthrough (pane shown)")
            return
        self.record(cue, "terminal", "off", f"not sent: {plan.why}")
        if self.rings:
            self.inject(BEL)

    @property
    def rings(self) -> bool:
        """notify.bell, unless the plan holds it back (a bell that is a popup of its own)."""
        return self.bell and self.plan.bell

    def holds(self, cue_id: int) -> bool:
        return cue_id in self._sent

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        sent = self._sent.pop(cue_id, None)
        notifier, closes, close_why = sent if sent is not None else (self.notifier, True, "")
        data = notifier.withdraw(ident) if closes else b""
        if data:
            self.inject(data)
            self.withdrawal(cue_id, "terminal", "withdrawn", reason)
        else:
            self.withdrawal(cue_id, "terminal", "unsupported", close_why or self.plan.close_why)

    def forget(self, cue_id: int) -> None:
        self._sent.pop(cue_id, None)

    def escalate(self, m: Message) -> None:
        pass  # written once: a second OSC would be a second popup, not a louder one

    def pending(self) -> int:
        return 0

    def close(self) -> None:
        pass


# -- the desktop ------------------------------------------------------------------------------
class DBusChannel:
    """Linux (D-Bus desktops): one long-lived worker per session; notifications withdrawn,
    replaced in place, clicked, with buttons where the server shows actions."""

    name = "desktop"
    capabilities = Capabilities(withdraw=True, replace=True, buttons=True, receipt=True)

    def __init__(
        self,
        loop: Loop,
        log: RecordLog,
        env: Mapping[str, str],
        app: str,
        on_action: Callable[[int, str], None] | None = None,
    ) -> None:
        self.loop = loop
        self.log = log
        self.env = env
        self.app = app
        self.on_action = on_action  # a click on one of a notification's buttons: (cue, key)
        self._notifier: DBusNotifier | None = None  # the worker's parent side, on first use

    def send(self, m: Message) -> None:
        if self._notifier is None:
            from cuewrap.deliver.dbus import DBusNotifier

            self._notifier = DBusNotifier(self.loop, self.log, env=self.env, app=self.app)
            self._notifier.on_action = self.on_action
            self._notifier.batch = self._batch()
        n = m.notify
        about = (m.session, n.kind == "needs-input")
        self._notifier.send(n.cue_id, n.title, n.body, m.still_eligible, n.actions, about)

    def _batch(self) -> Batch | None:
        """One popup for many sessions (deliver/batch.py), beside the registry."""
        try:
            from cuewrap.deliver.batch import for_env

            return for_env(self.env, self.app)
        except OSError as exc:
            self.log("popup_batch", state="off", why=str(exc)[:200])
            return None

    def render_shared(self) -> None:
        """Another session asks this one to show the popup they share (it leads)."""
        if self._notifier is not None:
            self._notifier.render_shared()

    def holds(self, cue_id: int) -> bool:
        return self._notifier is not None  # the notifier knows which of its cues are shown

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        if self._notifier is not None:
            self._notifier.withdraw(cue_id, reason)

    def forget(self, cue_id: int) -> None:
        pass

    def escalate(self, m: Message) -> None:
        if self._notifier is not None:
            self._notifier.escalate(m.cue_id, m.still_eligible)

    def pending(self) -> int:
        return self._notifier.pending if self._notifier is not None else 0

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()


class NotifyPyChannel:
    """macOS: notify-py in a short-lived worker per cue; nothing to withdraw it by."""

    name = "desktop"
    capabilities = Capabilities(cannot_withdraw="the macOS notifier keeps no notification id")

    def __init__(self, loop: Loop, record: Record, env: Mapping[str, str]) -> None:
        self.loop = loop
        self.record = record
        self.env = env
        self._notifier: DesktopNotifier | None = None

    def send(self, m: Message) -> None:
        if self._notifier is None:
            from cuewrap.deliver.desktop import DesktopNotifier

            self._notifier = DesktopNotifier(
                self.loop, lambda cue, st, why: self.record(cue, "desktop", st, why), env=self.env
            )
        n = m.notify
        self._notifier.send(n.cue_id, n.title, n.body, m.still_eligible)

    def holds(self, cue_id: int) -> bool:
        return self._notifier is not None

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        pass

    def forget(self, cue_id: int) -> None:
        pass

    def escalate(self, m: Message) -> None:
        pass

    def pending(self) -> int:
        return self._notifier.pending if self._notifier is not None else 0

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()


def desktop_channel(
    loop: Loop,
    log: RecordLog,
    record: Record,
    env: Mapping[str, str],
    app: str,
    on_action: Callable[[int, str], None] | None = None,
) -> DBusChannel | NotifyPyChannel:
    """D-Bus desktops: one long-lived worker (withdraw, replace, click, buttons whose click
    goes to ``on_action``); macOS: notify-py."""
    if sys.platform != "darwin":
        return DBusChannel(loop, log, env, app, on_action)
    return NotifyPyChannel(loop, record, env)


# -- notify.command ---------------------------------------------------------------------------
class CommandChannel:
    """The user's own notifier, once per notification and again when escalated; its exit
    status is the delivery state."""

    name = "command"
    capabilities = Capabilities(
        receipt=True, cannot_withdraw="what notify.command sent is out of cuewrap's reach"
    )

    def __init__(
        self,
        loop: Loop,
        argv: Sequence[str],
        timeout: float,
        record: Record,
        env: Mapping[str, str],
        *,
        cwd: str,
        origin: Callable[[], Mapping[str, Any]],
    ) -> None:
        self.loop = loop
        self.argv = list(argv)
        self.timeout = timeout
        self.record = record
        self.env = env
        self.cwd = cwd
        self.origin = origin  # which session: pid, tmux_pane, tty (set once it is known)
        self._notifier: CommandNotifier | None = None

    def send(self, m: Message) -> None:
        from cuewrap.deliver.command import CommandNotifier, cue_fields

        if self._notifier is None:
            self._notifier = CommandNotifier(
                self.loop,
                self.argv,
                self.timeout,
                lambda cue, st, why: self.record(cue, "command", st, why),
                env=self.env,
            )
        fields = cue_fields(
            m.notify,
            ident=m.ident,
            session=m.session,
            cwd=self.cwd,
            time=_utc_now(),
            escalated=m.escalated,
            **self.origin(),
        )
        if m.answer is not None:  # docs/answering.md: also CUEWRAP_CUE_ANSWER_TOKEN
            fields["answer"] = dict(m.answer)
        self._notifier.run(m.cue_id, fields)

    def holds(self, cue_id: int) -> bool:
        return True  # it ran for every cue: what it did is out of reach

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        pass

    def forget(self, cue_id: int) -> None:
        pass

    def escalate(self, m: Message) -> None:
        self.send(m)  # once more, with "escalated": true

    def pending(self) -> int:
        return self._notifier.pending if self._notifier is not None else 0

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()


def _utc_now() -> str:
    """Wall-clock time of a notification, ISO 8601 UTC to the second (for notify.command)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
