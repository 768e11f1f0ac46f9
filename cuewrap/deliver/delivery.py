"""The delivery of one session: what the controller hands the engine's effects to.

Title marks and the progress indicator become bytes for ``inject`` (the ``Injector``);
keep-awake runs an inhibitor process. A notification goes through the channels
(``deliver.channel``: the terminal's OSC and the bell; the desktop; ``notify.command``) that
the channel plan (``deliver.plan``) chose: each is told in turn and fails open on its own.
Inside tmux the tmux side (the route) is asked first, and the terminal choice and the plan for
that notification are made from what tmux says then (``decide``, one ``channels_now`` record
per change); a withdrawal or an escalation goes to every channel that can do it.
Every delivery state goes to the decision log as a ``delivery`` record (``cue``,
``channel``, ``state``, ``reason``). The notifiers behind the channels are built on first
use, so a session that never cues never imports them.

In Pi mode a needs-input cue of a dialog that can be answered from elsewhere
(docs/answering.md) carries what the answerer (``answering``) gives it: its buttons as the
notification's ``actions`` (where a chosen channel shows buttons) and ``{token, options,
count}`` as the message's ``answer`` (notify.command). A click on a button comes back from
the channel as ``(cue, key)`` and goes to the answerer with that cue.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cuewrap.deliver import DeliveryState
from cuewrap.deliver.channel import Capabilities, Channel, Message, Off
from cuewrap.deliver.channels import CommandChannel, TerminalChannel, desktop_channel
from cuewrap.deliver.desktop import desktop_available
from cuewrap.deliver.plan import make_plan
from cuewrap.deliver.terminal import TerminalNotifier, detect_terminal_protocol, live_choice
from cuewrap.deliver.title import TitleMarks
from cuewrap.engine.effects import Action, Eligibility, Notify, Withdraw
from cuewrap.engine.page import Channels
from cuewrap.term.konsole import in_konsole

if TYPE_CHECKING:
    from cuewrap.context import Context
    from cuewrap.deliver.keepawake import Inhibitor
    from cuewrap.deliver.plan import Answers, Plan
    from cuewrap.deliver.terminal import Choice
    from cuewrap.loop import Timer
    from cuewrap.tmux.view import Live, TmuxInfo


class Answering(Protocol):
    """Answering Pi's dialogs from elsewhere, as a notification needs it
    (``answer.answerer.Answerer``; docs/answering.md)."""

    def notification_answer(self) -> dict[str, Any] | None:
        """``{token, options, count}`` of the answerable wait, or None."""

    def buttons(self, cue_id: int) -> tuple[Action, ...]:
        """Answer buttons for cue ``cue_id``'s notification (none: no buttons)."""

    def button(self, cue_id: int, key: str) -> None:
        """A click on the button ``key`` of cue ``cue_id``'s notification."""

    def answer_token(
        self, choice: str, token: str, reply: Callable[[bool, str], None], source: str
    ) -> None:
        """An answer as ``cuewrap answer --token`` makes it (the phone's, docs/phone.md)."""


# the channels the plan decides between (one popup per cue): inside tmux they wait for tmux's
# view of the moment; the others go at once
_PLANNED = frozenset({"terminal", "desktop"})


class TerminalRoute(Protocol):
    """Another way to the user's terminal (tmux: ``tmux.side.TmuxSide``): it reads what holds
    now and calls ``deliver`` with it (None: it could not be read; what was decided at start
    holds)."""

    def notify(self, n: Notify, deliver: Callable[[Notify, Live | None], None]) -> None: ...

    def live_now(self) -> Live | None: ...


def build_delivery(
    ctx: Context,
    inject: Callable[[bytes], None],
    *,
    undo_at_restore: Callable[[bytes], None] = lambda off: None,
    app: str = "Pi",
    where: Mapping[str, Any] | None = None,
    answering: Answering | None = None,
) -> Delivery:
    """A session's delivery, as a session builds it (``cueside``) and as ``cuewrap config``'s
    test notification does: inside tmux, tmux is asked about the pane first (blocking; not
    when nothing would go through it)."""
    from cuewrap.deliver import terminal

    in_tmux = bool(ctx.env.get("TMUX"))
    ask = in_tmux and ctx.settings.notify.terminal != "off"
    info = terminal.query_tmux(ctx.env) if ask else None
    return Delivery(
        ctx, inject, undo_at_restore=undo_at_restore, app=app, tmux_info=info,
        where=where, answering=answering,
    )  # fmt: skip


#: Konsole: seconds after cuewrap writes a title that it writes the title again (``_title``):
#: past Konsole's 20 ms wait before it takes a title in, and far enough apart that both
#: writes do not arrive in one read
KONSOLE_AGAIN = 0.25


class Delivery:
    """The session's channels: the title mark, progress and keep-awake here; every
    notification through the channels the plan chose (``deliver.channel``)."""

    def __init__(
        self,
        ctx: Context,
        inject: Callable[[bytes], None],
        *,
        undo_at_restore: Callable[[bytes], None] = lambda off: None,
        app: str = "Pi",
        tmux_info: TmuxInfo | None = None,
        where: Mapping[str, Any] | None = None,
        answering: Answering | None = None,
    ) -> None:
        """``tmux_info``: what tmux said about this pane at start (``terminal.query_tmux``,
        blocking, asked by whoever builds this; None outside tmux or when it could not be
        asked). The terminal choice and the channel plan are made here (logged as
        ``terminal_protocol``), and again when the terminal answers (``answered``). Inside
        tmux, once the tmux side is the route (``route_through``), each notification's are
        made from what tmux says then (``decide``). ``where``: which session a notification
        came from (pid, tmux_pane, tty: ``sessions.publish.Where``); ``answering``: answers to
        the child's dialogs from elsewhere (docs/answering.md), when the session has them."""
        loop, settings, log = ctx.loop, ctx.settings, ctx.log
        self.loop = loop
        self.app = app  # names the program in desktop notifications (generic mode: its own)
        self.settings = settings
        self.log = log
        self.env = dict(ctx.env)
        self.inject = inject
        self.undo_at_restore = undo_at_restore  # bytes the host writes on every exit path
        self._progress_on = False  # the indicator as cuewrap last set it
        self.titles = TitleMarks()
        # Konsole: the title written again a moment after each of cuewrap's (KONSOLE_AGAIN)
        self._konsole = in_konsole(self.env)
        self._again: Timer | None = None
        self.tmux_info = tmux_info
        self._answers: Answers | None = None  # what the terminal said about itself
        self.desktop_on, self.desktop_why = desktop_available(self.env, settings.notify.desktop)
        self.where: dict[str, Any] = dict(where or {})
        self.answering = answering
        # notification ids: unique across cuewrap processes (kitty wants them global)
        self.id_prefix = f"cuewrap-{os.getpid()}-"
        self._keepawake: Inhibitor | None = None
        # inside tmux: the route (the tmux side, ``route_through``); the choice and plan made
        # from what tmux said, and the last one logged (``channels_now``)
        self._route: TerminalRoute | None = None
        self._made: tuple[Live, TerminalNotifier, Plan] | None = None
        self._told: tuple[Choice, Plan] | None = None
        self._start = self._choose()  # the choice and plan as tmux said at start
        notify = settings.notify
        self._terminal = TerminalChannel(
            *self._start,
            bell=notify.bell,
            inject=inject,
            record=self.record,
            withdrawal=self._withdrawal,
        )
        # every channel this session has, in the order each is told (the terminal's bytes
        # first: they cost nothing); the plan chooses among them at each notification
        self._channels: dict[str, Channel] = {"terminal": self._terminal}
        if self.desktop_on:
            self._channels["desktop"] = desktop_channel(
                loop, log.write, self.record, self.env, app, self._on_action
            )
        if notify.command:
            cwd = os.getcwd()
            self._channels["command"] = CommandChannel(
                loop, notify.command, notify.command_timeout, self.record, self.env,
                cwd=cwd, origin=lambda: self.where,
            )  # fmt: skip
        if settings.phone.enabled:  # docs/phone.md
            from cuewrap.deliver.phone import phone_channel

            answer = answering.answer_token if answering is not None else None
            phone = phone_channel(
                loop, settings.phone, self.record, self._withdrawal, log.write, answer, self.env
            )
            self._channels["phone"] = (
                Off("phone", phone, self.record) if isinstance(phone, str) else phone
            )

    # -- the terminal choice and the channel plan -----------------------------------------
    def _choose(self) -> tuple[TerminalNotifier, Plan]:
        """The terminal's protocol (``terminal_protocol`` record) and the channel plan."""
        version = self._answers.version if self._answers is not None else ""
        notify = self.settings.notify
        info = self.tmux_info
        choice = detect_terminal_protocol(self.env, notify.terminal, lambda: info, version)
        self.log.write(
            "terminal_protocol",
            protocol=choice.protocol,
            tmux_passthrough=choice.tmux_passthrough,
            terminal=choice.terminal,
            reason=choice.reason,
        )
        termtype = info.client_termtype if info is not None else ""
        plan = self._make_plan(choice, termtype)
        return TerminalNotifier(choice, bell=plan.bell), plan

    def _make_plan(self, choice: Choice, termtype: str) -> Plan:
        notify = self.settings.notify
        return make_plan(
            choice,
            notify.terminal,
            notify.desktop,
            self.desktop_on,
            self.desktop_why,
            in_tmux=bool(self.env.get("TMUX")),
            answers=self._answers,
            tmux_termtype=termtype,
            bell=notify.bell,
        )

    def answered(self, answers: Answers) -> None:
        """The host terminal said what it is and supports: the choice and plan again."""
        self._answers = answers
        self._start = self._choose()
        self._made = None  # made again with these answers
        self._terminal.use(*self._start)

    def route_through(self, route: TerminalRoute) -> None:
        """Inside tmux: each notification first asks ``route`` (the tmux side) what tmux
        says now, and its terminal and desktop part are decided from that (``decide``)."""
        self._route = route

    def live(self) -> Live | None:
        """What tmux said last (its view), for /cue, the advice and the progress indicator;
        None outside tmux or before it answered (a delivery asks afresh)."""
        return self._route.live_now() if self._route is not None else None

    def _for(self, live: Live | None) -> tuple[TerminalNotifier, Plan]:
        """The notifier and plan for ``live`` (None: as made at start), made once while tmux
        says the same. Records nothing."""
        if live is None:
            return self._start
        made = self._made
        if made is None or made[0] != live:
            choice = live_choice(self.env, self.settings.notify.terminal, live)
            plan = self._make_plan(choice, live.info.client_termtype)
            made = self._made = (live, TerminalNotifier(choice, bell=plan.bell), plan)
        return made[1], made[2]

    def decide(self, live: Live | None) -> tuple[TerminalNotifier, Plan]:
        """The terminal notifier and the channel plan for a delivery. Inside tmux from
        ``live``, what tmux says now (``allow-passthrough``, the pane shown, the client's
        terminal): a setting the user changes while Pi runs counts at the next cue; a change
        is logged once (``channels_now``). Without it, as made at start (and again with the
        terminal's answers)."""
        notifier, plan = self._for(live)
        if live is not None and self._told != (notifier.choice, plan):
            self._told = (notifier.choice, plan)
            choice = notifier.choice
            self.log.write(
                "channels_now",
                protocol=choice.protocol,
                reason=choice.reason,
                popup=plan.path,
                why=plan.why,
                terminal_osc=plan.terminal,
                desktop_notification=plan.desktop,
            )
        return notifier, plan

    def _now(self) -> tuple[TerminalNotifier, Plan]:
        """As it stands now: inside tmux from tmux's last view (no record)."""
        return self._for(self.live())

    @property
    def terminal(self) -> TerminalNotifier:
        """The terminal notifier as it stands now (inside tmux from tmux's last view)."""
        return self._now()[0]

    @property
    def plan(self) -> Plan:
        """Which way a cue reaches the desktop, once (``deliver.plan``): as it stands now
        (inside tmux from tmux's last view)."""
        return self._now()[1]

    @property
    def terminal_choice(self) -> Choice:
        """The terminal choice as it stands now (inside tmux from tmux's last view)."""
        return self._now()[0].choice

    def chosen(self, plan: Plan | None = None) -> list[Channel]:
        """The channels a notification goes to under ``plan`` (None: as it stands now), in
        order: the terminal's (which also rings the bell), the desktop's or why not,
        ``notify.command`` where set, the phone where on."""
        if plan is None:
            plan = self.plan
        desktop = self._channels.get("desktop")
        if desktop is None:
            desktop = Off("desktop", self.desktop_why, self.record)
        elif not plan.desktop:
            desktop = Off("desktop", f"not sent: {plan.why}", self.record)
        others = [self._channels.get(name) for name in ("command", "phone")]
        return [self._channels["terminal"], desktop, *(ch for ch in others if ch is not None)]

    def capabilities(self) -> dict[str, Capabilities]:
        """What each chosen channel can do, by its name."""
        return {ch.name: ch.capabilities for ch in self.chosen()}

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
            self._title(self.titles.on_child_title(title, controls))

    def reapply_mark(self) -> None:
        """After a stop and ``fg``: the shell had the title meanwhile; the mark again."""
        if self.settings.notify.title_marks:
            self._title(self.titles.reapply())

    def set_mark(self, mark: str | None) -> None:
        if self.settings.notify.title_marks:
            self._title(self.titles.set_mark(mark))

    def _title(self, data: bytes) -> None:
        """cuewrap's title bytes, if any. Konsole shows a program's title only when it next
        looks at the session (2 s after output or a key), and a look in the few ms between a
        title's arrival and Konsole taking it in misses it until the next output, which may
        never come (Pi waits): so there the title as it stands is written again
        ``KONSOLE_AGAIN`` s later, its own output bringing another look (docs/terminals.md).
        Any title, the child's own too, replaces that second write."""
        if self._again is not None:
            self._again.cancel()
            self._again = None
        if not data:
            return
        self.inject(data)
        if self._konsole:
            self._again = self.loop.call_later(KONSOLE_AGAIN, self._title_again)

    def _title_again(self) -> None:
        self._again = None
        self.inject(self.titles.current())

    # -- notifications --------------------------------------------------------------------
    def record(self, cue_id: int, channel: str, state: DeliveryState, reason: str = "") -> None:
        self.log.write("delivery", cue=cue_id, channel=channel, state=state, reason=reason)

    def _withdrawal(self, cue_id: int, channel: str, state: str, reason: str) -> None:
        self.log.write("withdrawal", cue=cue_id, channel=channel, state=state, reason=reason)

    def _message(
        self, n: Notify, session: str, eligible: Callable[[Eligibility], bool], escalated: bool
    ) -> Message:
        eligibility = n.eligibility
        return Message(
            n, f"{self.id_prefix}{n.cue_id}", session, lambda: eligible(eligibility), escalated
        )

    def _answerable(self, m: Message, chosen: list[Channel] | None) -> Message:
        """A needs-input cue's message with what the answerer gives it: ``answer`` and, where
        ``chosen`` (None: an escalation, whose buttons are shown already) has a channel
        that shows buttons, the buttons as ``actions``. Fails open: the message as it was."""
        n, answering = m.notify, self.answering
        if answering is None or n.kind != "needs-input":
            return m
        try:
            answer = answering.notification_answer()
            buttons: tuple[Action, ...] = ()
            if chosen is not None and any(ch.capabilities.buttons for ch in chosen):
                buttons = answering.buttons(n.cue_id)
        except Exception as exc:
            self.log.error("answer.notify", exc)
            return m
        if buttons:
            m = m._replace(notify=dataclasses.replace(n, actions=n.actions + buttons))
        return m._replace(answer=answer)

    def _on_action(self, cue_id: int, key: str) -> None:
        """A click on one of cue ``cue_id``'s buttons (not the notification itself): the
        answerer's, which acts only on its own keys."""
        if self.answering is not None:
            try:
                self.answering.button(cue_id, key)
            except Exception as exc:
                self.log.error("answer.button", exc)

    def notify(self, n: Notify, *, eligible: Callable[[Eligibility], bool], session: str) -> None:
        """One notification on every channel the plan chose. ``eligible`` is asked again
        right before each asynchronous delivery. Each channel fails open on its own.

        Inside tmux (``route_through``) ``notify.command`` goes at once; the terminal's and
        the desktop's part once the route has read what tmux says now, from the plan made
        from that (``decide``): as made at start when tmux cannot be asked."""
        m = self._message(n, session, eligible, False)
        route = self._route
        if route is None:
            chosen = self.chosen()
            self._send(self._answerable(m, chosen), chosen)
            return
        m = self._answerable(m, list(self._channels.values()))  # buttons where one may show
        self._send(m, [ch for ch in self.chosen() if ch.name not in _PLANNED])

        def deliver(n: Notify, live: Live | None) -> None:
            notifier, plan = self.decide(live)
            self._terminal.use(notifier, plan, through_tmux=live is not None)
            self._send(m, [ch for ch in self.chosen(plan) if ch.name in _PLANNED])

        try:
            route.notify(n, deliver)
        except Exception as exc:  # fail open: as if tmux could not be asked
            self.log.error("notify.tmux", exc)
            deliver(n, None)

    def _send(self, m: Message, chosen: list[Channel]) -> None:
        for ch in chosen:
            try:
                ch.send(m)
            except Exception as exc:  # fail open: the other channels still go
                self.log.error(f"notify.{ch.name}", exc)

    def withdraw(self, w: Withdraw) -> None:
        """A stale cue (docs/design.md#follow-ups): withdrawn where its notification went and
        can be withdrawn; "unsupported" where it went and cannot."""
        ident = f"{self.id_prefix}{w.cue_id}"
        for ch in list(self._channels.values()):
            try:
                if not ch.holds(w.cue_id):
                    continue
                caps = ch.capabilities
                if caps.withdraw:
                    ch.withdraw(w.cue_id, ident, w.reason)
                else:
                    ch.forget(w.cue_id)
                    self._withdrawal(w.cue_id, ch.name, "unsupported", caps.cannot_withdraw)
            except Exception as exc:
                self.log.error(f"withdraw.{ch.name}", exc)

    def escalate(self, n: Notify, *, eligible: Callable[[Eligibility], bool], session: str) -> None:
        """Still unanswered and away after notify.escalate_after (docs/design.md#follow-ups):
        once more where a channel can (notify.command again, the desktop notification raised
        to critical in place). An urgent one (quiet hours, ``quiet.urgent_after``;
        docs/attention.md) goes to notify.command alone: nothing else may pop up or sound."""
        m = self._answerable(self._message(n, session, eligible, True), None)
        for ch in list(self._channels.values()):
            if n.urgent and ch.name != "command":
                continue
            try:
                ch.escalate(m)
            except Exception as exc:
                self.log.error(f"notify.{ch.name}", exc)

    def render_shared(self) -> None:
        """Another session asks this one to show the desktop popup they share (it needs the
        user first: deliver/batch.py). Fails open."""
        desktop = self._channels.get("desktop")
        render = getattr(desktop, "render_shared", None)
        if render is not None:
            try:
                render()
            except Exception as exc:
                self.log.error("popup.render", exc)

    def progress(self, on: bool) -> None:
        """The terminal's progress indicator; its clearing is also kept for every exit path."""
        if on:
            self.undo_at_restore(self.terminal.progress(False))
        self._progress_on = on
        self.inject(self.terminal.progress(on))

    def reapply_progress(self) -> None:
        """After a stop and ``fg``: the stop cleared the indicator (with every mode); on again
        exactly when it was on before (the engine turns it off when Pi shows its own)."""
        if self._progress_on:
            self.inject(self.terminal.progress(True))

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
    def pending(self) -> bool:
        """A channel has not finished yet (a desktop notification, a notify.command run)."""
        return any(ch.pending() > 0 for ch in self._channels.values())

    def close(self) -> None:
        """Release keep-awake, end what still runs and reap it (bounded). Fails open."""
        if self._again is not None:
            self._again.cancel()
            self._again = None
        parts: list[tuple[str, Inhibitor | Channel | None]] = [("keep_awake", self._keepawake)]
        parts += [(name, ch) for name, ch in self._channels.items()]
        for name, part in parts:
            if part is not None:
                try:
                    part.close()
                except Exception as exc:
                    self.log.error(f"{name}.close", exc)
