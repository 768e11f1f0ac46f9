"""The delivery channels of one session: what the controller hands the engine's effects to.

Title marks and the terminal notification become bytes for ``inject`` (the ``Injector``);
the desktop notification, ``notify.command`` and keep-awake run in worker processes off the
loop and report back. Every delivery state goes to the decision log as a ``delivery`` record
(``cue``, ``channel``, ``state``, ``reason``). The effectors are built on first use, so a
session that never cues never imports them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cuewrap.decisionlog import DecisionLog
from cuewrap.deliver import DeliveryState
from cuewrap.deliver.desktop import desktop_available
from cuewrap.deliver.title import TitleMarks
from cuewrap.engine.effects import Eligibility, Notify, Withdraw
from cuewrap.engine.page import Channels
from cuewrap.loop import Loop
from cuewrap.term.sequences import BEL

if TYPE_CHECKING:
    from cuewrap.config import Settings
    from cuewrap.deliver.command import CommandNotifier
    from cuewrap.deliver.dbus import DBusNotifier
    from cuewrap.deliver.desktop import DesktopNotifier
    from cuewrap.deliver.keepawake import Inhibitor
    from cuewrap.deliver.plan import Answers, Plan
    from cuewrap.deliver.terminal import Choice, Live, TerminalNotifier, TmuxInfo


class TerminalRoute(Protocol):
    """Another way to the user's terminal (tmux): it reads what holds now and calls
    ``deliver`` with it (None: it could not be read; what was decided at start holds)."""

    def notify(self, n: Notify, deliver: Callable[[Notify, Live | None], None]) -> None: ...


class Delivery:
    def __init__(
        self,
        loop: Loop,
        settings: Settings,
        log: DecisionLog,
        env: Mapping[str, str],
        inject: Callable[[bytes], None],
        undo_at_restore: Callable[[bytes], None] = lambda off: None,
        app: str = "Pi",
        tmux_info: TmuxInfo | None = None,
    ) -> None:
        """``tmux_info``: what tmux said about this pane at start (``terminal.query_tmux``,
        blocking, asked by whoever builds this; None outside tmux or when it could not be
        asked)."""
        self.loop = loop
        self.app = app  # names the program in desktop notifications (generic mode: its own)
        self.settings = settings
        self.log = log
        self.env = dict(env)
        self.inject = inject
        self.undo_at_restore = undo_at_restore  # bytes the host writes on every exit path
        self._progress_on = False  # the indicator as cuewrap last set it
        self.titles = TitleMarks()
        self._terminal: TerminalNotifier | None = None  # detected on first use
        self.tmux_info = tmux_info
        self._plan: Plan | None = None  # the channel plan (made with the terminal choice)
        # inside tmux: what tmux said last (its view, set by the builder), and the choice and
        # plan made from it for the last delivery (made again when what tmux says changes)
        self.live: Callable[[], Live | None] = lambda: None
        self._live: tuple[Live, TerminalNotifier, Plan] | None = None
        self._answers: Answers | None = None  # what the terminal said about itself
        self.desktop_on, self.desktop_why = desktop_available(self.env, settings.notify.desktop)
        self._desktop: DesktopNotifier | DBusNotifier | None = None
        self._command: CommandNotifier | None = None
        self._keepawake: Inhibitor | None = None
        self.cwd = os.getcwd()
        # which session a notification came from (pid, tmux_pane, tty), set by its builder
        self.where: dict[str, Any] = {}
        # notification ids: unique across cuewrap processes (kitty wants them global)
        self.id_prefix = f"cuewrap-{os.getpid()}-"
        # cues whose terminal OSC was written: the notifier that wrote it, whether it closes
        self._terminal_sent: dict[int, tuple[TerminalNotifier, bool, str]] = {}

    # -- the terminal -----------------------------------------------------------------------
    @property
    def terminal(self) -> TerminalNotifier:
        if self._terminal is None:
            from cuewrap.deliver.terminal import TerminalNotifier, detect_terminal_protocol

            version = self._answers.version if self._answers is not None else ""
            setting = self.settings.notify.terminal
            info = self.tmux_info
            choice = detect_terminal_protocol(self.env, setting, lambda: info, version)
            self._terminal = TerminalNotifier(choice, bell=self.settings.notify.bell)
            self._plan = self._make_plan(choice)
            self.log.write(
                "terminal_protocol",
                protocol=choice.protocol,
                tmux_passthrough=choice.tmux_passthrough,
                terminal=choice.terminal,
                reason=choice.reason,
            )
        return self._terminal

    def _make_plan(self, choice: Choice, termtype: str | None = None) -> Plan:
        from cuewrap.deliver.plan import make_plan

        notify = self.settings.notify
        info = self.tmux_info
        if termtype is None:
            termtype = info.client_termtype if info is not None else ""
        return make_plan(
            choice,
            notify.terminal,
            notify.desktop,
            self.desktop_on,
            self.desktop_why,
            in_tmux=bool(self.env.get("TMUX")),
            answers=self._answers,
            tmux_termtype=termtype,
        )

    def decide(self, live: Live | None) -> tuple[TerminalNotifier, Plan]:
        """The terminal notifier and the channel plan for a delivery. Inside tmux from
        ``live``, what tmux says now (``allow-passthrough``, the pane shown, the client's
        terminal): a setting the user changes while Pi runs counts at the next cue. Without
        it, as made at start (and again with the terminal's answers)."""
        start = self.terminal
        if live is None:
            assert self._plan is not None
            return start, self._plan
        made = self._live
        if made is None or made[0] != live:
            from cuewrap.deliver.terminal import TerminalNotifier, live_choice

            choice = live_choice(self.env, self.settings.notify.terminal, live)
            plan = self._make_plan(choice, live.info.client_termtype)
            if made is None or made[1].choice != choice or made[2] != plan:
                self.log.write(
                    "channels_now",
                    protocol=choice.protocol,
                    reason=choice.reason,
                    popup=plan.path,
                    why=plan.why,
                    terminal_osc=plan.terminal,
                    desktop_notification=plan.desktop,
                )
            made = self._live = (
                live,
                TerminalNotifier(choice, bell=self.settings.notify.bell),
                plan,
            )
        return made[1], made[2]

    @property
    def plan(self) -> Plan:
        """Which way a cue reaches the desktop, once (``deliver.plan``): as it stands now
        (inside tmux from tmux's last view)."""
        return self.decide(self.live())[1]

    def answered(self, answers: Answers) -> None:
        """The host terminal said what it is and supports: the choice and plan again."""
        self._answers = answers
        self._live = None  # made again with these answers
        if self._terminal is None:
            return  # made on first use, with these answers
        self._terminal = None
        self.terminal  # noqa: B018

    @property
    def terminal_choice(self) -> Choice:
        """The terminal choice as it stands now (inside tmux from tmux's last view)."""
        return self.decide(self.live())[0].choice

    def channels(self) -> Channels:
        """The channels as set up, for the /cue page."""
        choice = self.terminal_choice
        notify = self.settings.notify
        plan = self.plan
        return Channels(
            terminal=choice.protocol if plan.terminal else "off",
            terminal_reason=(
                choice.reason
                if plan.terminal or choice.protocol == "off"
                else "not sent: one popup per cue"
            ),
            desktop=plan.desktop,
            desktop_why=self.desktop_why if not self.desktop_on else "not sent: one popup per cue",
            path=plan.path,
            path_why=plan.why,
            bell=notify.bell,
            title_marks=notify.title_marks,
            keep_awake=self.settings.keep_awake.enabled,
        )

    # -- title marks ----------------------------------------------------------------------
    def child_title(self, title: str, controls: bool = False) -> None:
        """The child set its title: the mark, if one is shown, is composed onto it (not onto
        one that carried control characters)."""
        if self.settings.notify.title_marks:
            self.inject(self.titles.on_child_title(title, controls))

    def reapply_mark(self) -> None:
        """After a stop and ``fg``: the shell had the title meanwhile; the mark again."""
        if self.settings.notify.title_marks:
            self.inject(self.titles.reapply())

    def set_mark(self, mark: str | None) -> None:
        if self.settings.notify.title_marks:
            self.inject(self.titles.set_mark(mark))

    # -- notifications --------------------------------------------------------------------
    def record(self, cue_id: int, channel: str, state: DeliveryState, reason: str = "") -> None:
        self.log.write("delivery", cue=cue_id, channel=channel, state=state, reason=reason)

    def notify(
        self,
        n: Notify,
        *,
        eligible: Callable[[Eligibility], bool],
        session: str,
        route: TerminalRoute | None = None,
    ) -> None:
        """One notification on every enabled channel. ``eligible`` is asked again right before
        each asynchronous delivery; ``route`` (tmux) is asked first for the terminal's."""
        try:
            self._run_command(n, session)
        except Exception as exc:  # fail open: the other channels still go
            self.log.error("notify.command", exc)
        if route is not None:
            route.notify(n, lambda n, live: self._notify_now(n, eligible, live))
        else:
            self._notify_now(n, eligible, None)

    def _notify_now(
        self, n: Notify, eligible: Callable[[Eligibility], bool], live: Live | None
    ) -> None:
        """The terminal's and the desktop's part, decided from what holds now (``decide``)."""
        notifier, plan = self.decide(live)
        if live is None:
            self._notify_terminal(n, notifier, plan)
        else:
            self._through_tmux(n, notifier, plan)
        self._notify_desktop(n, eligible, plan)

    def _notify_terminal(self, n: Notify, notifier: TerminalNotifier, plan: Plan) -> None:
        protocol = notifier.choice.protocol
        if plan.terminal and protocol != "off":
            data = notifier.build(n, self._ident(n.cue_id))
            self.record(n.cue_id, "terminal", "requested", protocol)
            self.inject(data)
            self._terminal_sent[n.cue_id] = (notifier, plan.can_close, plan.close_why)
            self.record(n.cue_id, "terminal", "unconfirmable", "terminal OSC has no receipt")
        else:
            why = notifier.choice.reason if protocol == "off" else f"not sent: {plan.why}"
            self.record(n.cue_id, "terminal", "off", why)
            if self.settings.notify.bell:
                self.inject(BEL)
        if self.settings.notify.bell:
            self.record(n.cue_id, "bell", "unconfirmable")

    def _through_tmux(self, n: Notify, notifier: TerminalNotifier, plan: Plan) -> None:
        """Inside tmux: the OSC DCS-wrapped from a pane a client shows with passthrough on
        (else the reason, e.g. the option to set); the bell only with it (a BEL from a hidden
        pane is tmux's window flag, which cuewrap.tmux decides)."""
        cue, choice = n.cue_id, notifier.choice
        if choice.protocol == "off":
            self.record(cue, "terminal", "off", choice.reason)
            return
        if plan.terminal:
            self.inject(notifier.build(n, self._ident(cue)))
            self._terminal_sent[cue] = (notifier, plan.can_close, plan.close_why)
            self.record(cue, "terminal", "unconfirmable", "tmux passthrough (pane shown)")
            return
        self.record(cue, "terminal", "off", f"not sent: {plan.why}")
        if self.settings.notify.bell:
            self.inject(BEL)

    def _notify_desktop(
        self, n: Notify, eligible: Callable[[Eligibility], bool], plan: Plan
    ) -> None:
        if not self.desktop_on:
            self.record(n.cue_id, "desktop", "off", self.desktop_why)
            return
        if not plan.desktop:
            self.record(n.cue_id, "desktop", "off", f"not sent: {plan.why}")
            return
        if self._desktop is None:
            self._desktop = self._desktop_notifier()
        eligibility = n.eligibility
        self._desktop.send(n.cue_id, n.title, n.body, lambda: eligible(eligibility))

    def _desktop_notifier(self) -> DesktopNotifier | DBusNotifier:
        """D-Bus desktops: one long-lived worker (withdraw, replace, click); macOS: notify-py."""
        if sys.platform != "darwin":
            from cuewrap.deliver.dbus import DBusNotifier

            return DBusNotifier(self.loop, self.log.write, env=self.env, app=self.app)
        from cuewrap.deliver.desktop import DesktopNotifier

        return DesktopNotifier(
            self.loop,
            lambda cue, st, why: self.record(cue, "desktop", st, why),
            env=self.env,
        )

    def _dbus(self) -> DBusNotifier | None:
        from cuewrap.deliver.dbus import DBusNotifier

        return self._desktop if isinstance(self._desktop, DBusNotifier) else None

    def _ident(self, cue_id: int) -> str:
        return f"{self.id_prefix}{cue_id}"

    def _withdrawal(self, cue_id: int, channel: str, state: str, reason: str) -> None:
        self.log.write("withdrawal", cue=cue_id, channel=channel, state=state, reason=reason)

    def withdraw(self, w: Withdraw) -> None:
        """A stale cue (docs/design.md#follow-ups): withdrawn where its notification went and can be
        withdrawn."""
        sent = self._terminal_sent.pop(w.cue_id, None)
        if sent is not None:
            notifier, closes, close_why = sent
            data = notifier.withdraw(self._ident(w.cue_id)) if closes else b""
            if data:
                self.inject(data)
                self._withdrawal(w.cue_id, "terminal", "withdrawn", w.reason)
            else:
                self._withdrawal(w.cue_id, "terminal", "unsupported", close_why)
        dbus = self._dbus()
        if dbus is not None:
            dbus.withdraw(w.cue_id, w.reason)
        elif self._desktop is not None:
            why = "the macOS notifier keeps no notification id"
            self._withdrawal(w.cue_id, "desktop", "unsupported", why)
        if self.settings.notify.command:
            why = "what notify.command sent is out of cuewrap's reach"
            self._withdrawal(w.cue_id, "command", "unsupported", why)

    def escalate(
        self, n: Notify, session: str, eligible: Callable[[Eligibility], bool] | None = None
    ) -> None:
        """Still unanswered and away after notify.escalate_after (docs/design.md#follow-ups): once
        more, and the desktop notification raised to critical in place."""
        try:
            self._run_command(n, session, escalated=True)
        except Exception as exc:
            self.log.error("notify.command", exc)
        dbus = self._dbus()
        if dbus is not None and eligible is not None:
            eligibility = n.eligibility
            dbus.escalate(n.cue_id, lambda: eligible(eligibility))

    def progress(self, on: bool) -> None:
        """The terminal's progress indicator; its clearing is also kept for every exit path."""
        notifier = self.decide(self.live())[0]  # wrapped as tmux's last view allows
        if on:
            self.undo_at_restore(notifier.progress(False))
        self._progress_on = on
        self.inject(notifier.progress(on))

    def reapply_progress(self) -> None:
        """After a stop and ``fg``: the stop cleared the indicator (with every mode); on again
        exactly when it was on before (the engine turns it off when Pi shows its own)."""
        if self._progress_on:
            self.inject(self.decide(self.live())[0].progress(True))

    def _run_command(self, n: Notify, session: str, *, escalated: bool = False) -> None:
        """notify.command for one notification (docs/design.md#follow-ups): started now, reaped on
        the loop."""
        argv = self.settings.notify.command
        if not argv:
            return
        from cuewrap.deliver.command import CommandNotifier, cue_fields

        if self._command is None:
            self._command = CommandNotifier(
                self.loop,
                argv,
                self.settings.notify.command_timeout,
                lambda cue, st, why: self.record(cue, "command", st, why),
                env=self.env,
            )
        fields = cue_fields(
            n,
            ident=self._ident(n.cue_id),
            session=session,
            cwd=self.cwd,
            time=_utc_now(),
            escalated=escalated,
            **self.where,
        )
        self._command.run(n.cue_id, fields)

    # -- keep-awake -----------------------------------------------------------------------
    def keep_awake(self, hold: bool) -> None:
        if not self.settings.keep_awake.enabled:
            return
        if self._keepawake is None:
            if not hold:
                return
            from cuewrap.deliver.keepawake import Inhibitor

            self._keepawake = Inhibitor(
                self.loop,
                self.settings.keep_awake.command,
                lambda st, why: self.log.write("keep_awake", state=st, reason=why),
            )
        if hold:
            self._keepawake.hold()
        else:
            self._keepawake.release()

    # -- the end --------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """A desktop notification or a notify.command run has not finished yet."""
        desktop = self._desktop is not None and self._desktop.pending > 0
        return desktop or (self._command is not None and self._command.pending > 0)

    def close(self) -> None:
        """Release keep-awake, end what still runs and reap it (bounded). Fails open."""
        for name, part in (
            ("keep_awake", self._keepawake),
            ("desktop", self._desktop),
            ("command", self._command),
        ):
            if part is not None:
                try:
                    part.close()
                except Exception as exc:
                    self.log.error(f"{name}.close", exc)


def _utc_now() -> str:
    """Wall-clock time of a notification, ISO 8601 UTC to the second (for notify.command)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
