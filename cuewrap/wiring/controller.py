"""The cue side of a session: facts in, engine step, effects handed to the edge.

Sources (relay events through ``relay_event``, the bridge, the screen gate, the output watch,
tmux) call ``fact()``; the pure engine decides; each effect goes to its effector (``_EFFECTORS``,
a table by effect type, like the engine's own dispatch): ``deliver.delivery.Delivery`` (title
marks, terminal and desktop notifications and their withdrawal, ``notify.command``, progress,
keep-awake), the decision log, a wake-up timer, or a notice in Pi. After each step the screen
gate is told, so pyte stops once a stronger source is live, and the session's state goes to
the publisher. Every call in here is on the one loop and fails open: an exception is logged
and the Pi session goes on.

The controller builds nothing: its constructor calls the factory it is given
(``cueside.build_controller``'s, which asks tmux, or the unit tests', which hand in fakes:
``tests/test_controller.py``) with itself, so each part gets the controller's methods it calls
in its own constructor and the controller gets the parts back — nothing is assigned
afterwards, no forwarder stands in for a controller not built yet. Downward it calls only what
it is given: ``on_unseen`` (the relay's gathering time) and ``on_rules`` (the byte path's
decisions: ``relay/decisions.py``, handed a new :class:`OutputRules` after each step that
changes them — the byte path never calls up for a decision).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cuewrap import facts as F
from cuewrap.advice import Where, fixes
from cuewrap.decisionlog import DecisionLog
from cuewrap.deliver.plan import Answers
from cuewrap.deliver.title import MARKED
from cuewrap.engine import (
    EngineConfig,
    EngineState,
    Event,
    Tick,
    glance,
    initial_state,
    is_eligible,
    status,
    step,
    wording,
)
from cuewrap.engine.effects import (
    Diagnostic,
    Eligibility,
    Escalate,
    KeepAwake,
    Notify,
    Progress,
    Record,
    SetMark,
    Wake,
    Withdraw,
)
from cuewrap.engine.lookahead import waits_on_presence
from cuewrap.engine.output import OutputRules, output_rules, unseen
from cuewrap.engine.page import BridgeCounts, GuardCounts, cue_page, toggle_reply
from cuewrap.engine.state import Removed
from cuewrap.engine.status import driving_source
from cuewrap.loop import Timer
from cuewrap.relay import events as relay_events
from cuewrap.relay.events import RelayEvent
from cuewrap.term.answers import TerminalAnswer
from cuewrap.term.clipboard import ClipboardSequence, GuardedSequence
from cuewrap.term.focus import FocusReport
from cuewrap.term.notices import ChildNotification
from cuewrap.term.sequences import MODE_FOCUS
from cuewrap.term.tracker import ModeChange, TitleChange

if TYPE_CHECKING:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.control import ControlServer
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.context import Context
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.generic.activity import OutputWatch
    from cuewrap.relay.relay import OutputTap
    from cuewrap.screen.gate import ScreenGate
    from cuewrap.sessions.publish import Publisher
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.wiring.attention import Attention
    from cuewrap.wiring.blocked import BlockedCheck
    from cuewrap.wiring.freshview import FreshView
    from cuewrap.wiring.keystrokes import KeyWindow
    from cuewrap.workers import Reaper


@dataclasses.dataclass(frozen=True)
class Parts:
    """What the controller is handed (``cueside.build_controller`` builds them) and the
    engine's config for the session (it depends on what delivery found: ``engine_config``)."""

    config: EngineConfig
    delivery: Delivery  # every channel of a cue
    publisher: Publisher  # the session's state for `cuewrap ls`, tmux's window option, --events
    keys: KeyWindow  # keystrokes for the engine, at most one a second
    bridge: BridgeServer | None = None  # Pi's extension, when its channel is listening
    screen: ScreenGate | None = None  # the screen source (Pi mode)
    activity: OutputWatch | None = None  # output activity and quiet (generic mode)
    tmux: TmuxSide | None = None  # inside tmux, once started: presence and delivery through it
    fresh: FreshView | None = None  # inside tmux: a fact whose cue depends on presence waits
    reaper: Reaper | None = None  # ends tmux's commands in flight (and the publisher's)
    answerer: Answerer | None = None  # answers to Pi's dialogs from elsewhere (Pi mode)
    control: ControlServer | None = None  # the control socket `cuewrap answer` talks to
    blocked: BlockedCheck | None = None  # Pi mode without the bridge: `blocked` needs a dialog
    attention: Attention | None = None  # quiet hours, do-not-disturb, mute (docs/attention.md)


class Controller:
    def __init__(
        self,
        ctx: Context,
        *,
        parts: Callable[[Controller], Parts],
        on_unseen: Callable[[bool], None] | None = None,
        on_rules: Callable[[OutputRules], None] | None = None,
        on_focus: Callable[[bool], None] | None = None,
    ) -> None:
        """``parts`` makes the parts, given this controller (a part calls it only from the
        loop, which does not run meanwhile: a fact before the end of this constructor is
        dropped as after ``close``). ``on_unseen``: told now and at each change whether
        nobody looks at the output (docs/design.md#unseen-output); ``on_rules``: the byte
        path's rules, now and after each step that changes them; ``on_focus``: the child
        (generic mode, its preset asks: opencode) told whether the user looks, when it turns
        focus reporting on and at each change (``Relay.tell_focus``)."""
        self.loop = ctx.loop
        self.settings = ctx.settings
        self.log: DecisionLog = ctx.log
        self.env: Mapping[str, str] = dict(ctx.env)
        self._closed = True  # until the parts are made
        made = parts(self)
        self._closed = False
        self.delivery = made.delivery
        self.publisher = made.publisher
        self.keys = made.keys
        self.bridge = made.bridge
        self.screen = made.screen
        self.activity = made.activity
        self.tmux = made.tmux
        self.fresh = made.fresh
        self._reaper = made.reaper  # tmux's commands in flight (closed in ``_closers``)
        self.answerer = made.answerer
        self.control = made.control
        self.blocked = made.blocked
        self.attention = made.attention
        self.state = initial_state(made.config)
        self._on_key, self._closers = _fan_out(made, self._cancel_wake)
        # Pi mode (the engine's config says: built from the session's mode, cueside.py)
        self._pi = not made.config.generic
        self._wake: Timer | None = None
        self._on_unseen = on_unseen
        self._unseen = not self._now_unseen()  # the last value told (told below)
        self._on_rules = on_rules
        self._on_focus = on_focus
        self._looking: bool | None = None  # what the child was last told (None: nothing yet)
        self._rules: OutputRules | None = None  # the last rules handed down
        self._answers = Answers()  # the host terminal's answers to cuewrap's query so far
        self._fallback: str | None = None  # the output tracker failed: what guards instead
        self._log_channels()
        self._tell_unseen()
        self._hand_down_rules()

    def _log_channels(self) -> None:
        """The ``channels`` record: what is on, and the channel plan with its reason."""
        settings = self.settings
        d = self.delivery
        plan = d.plan
        self.log.write(
            "channels",
            terminal=d.terminal_choice.terminal,
            protocol=d.terminal_choice.protocol,
            desktop=d.desktop_on,
            desktop_why=d.desktop_why,
            popup=plan.path,
            why=plan.why,
            terminal_osc=plan.terminal,
            desktop_notification=plan.desktop,
            duplicates=plan.duplicates,
            can_close=plan.can_close,
            close_why=plan.close_why,
            bell=settings.notify.bell,
            title_marks=settings.notify.title_marks,
            keep_awake=settings.keep_awake.enabled,
            bridge=self.bridge is not None,
            command=settings.notify.command is not None,
        )

    def terminal_answer(self, answer: TerminalAnswer | None) -> None:
        """An answer of the host terminal to cuewrap's start-up query; None: no more will come
        (it did not answer in time). The plan is made again once the query is closed."""
        a = self._answers
        if a.complete:
            return
        if answer is None or answer.kind == "da1":
            self._answers = a = dataclasses.replace(a, complete=True)
            self.log.write(
                "terminal_answers",
                version=a.version,
                osc99=a.osc99,
                program_status=a.program_status,
                state="answered" if answer is not None else "no answer in time",
            )
            self.delivery.answered(a)
            self._log_channels()
        elif answer.kind == "xtversion":
            self._answers = dataclasses.replace(a, version=answer.text[:100])
        elif answer.kind == "osc99":
            self._answers = dataclasses.replace(a, osc99=answer.text[:500])
        elif answer.kind == "osc7501":  # the relay now passes the child's reports on
            self._answers = dataclasses.replace(a, program_status=True)

    @property
    def output_tap(self) -> OutputTap | None:
        """What sees every output chunk: the screen gate (Pi mode) or the output watch."""
        if self.screen is not None:
            return self.screen
        return self.activity

    def _clipboard_seen(self, event: ClipboardSequence) -> None:
        """A clipboard sequence the byte path decided: a fact for the engine, which logs,
        counts and says it (``engine/guard.py``), stamped with the wall-clock time."""
        self.fact(F.GuardDecided("clipboard", event.what, event.passed, event.size,
                                 event.read, event.why, _wall_time()))  # fmt: skip

    def _guarded_seen(self, event: GuardedSequence) -> None:
        """A title, notification or status report removed from inside a frame
        (docs/terminal-guard.md): a fact, as a clipboard sequence is."""
        self.fact(F.GuardDecided("sequences", event.what, False, event.size, at=_wall_time()))

    # -- sources ----------------------------------------------------------------------------
    def relay_event(self, event: RelayEvent) -> None:
        """What the relay saw: handled by its type (``_ON_RELAY_EVENT``, below the class);
        the others logged and translated into a fact (``relay.events``: one translator for
        both)."""
        _ON_RELAY_EVENT.get(event.__class__, Controller._relayed)(self, event)

    def _relayed(self, event: RelayEvent) -> None:
        """The default: the event's log record, then its fact for the engine."""
        rec = relay_events.record(event)
        if rec is not None:
            self.log.write(rec[0], **rec[1])
        fact = relay_events.to_fact(event)
        if fact is not None:
            self.fact(fact)

    def _program_status(self, event: F.ProgramStatus) -> None:
        """An OSC 7501 report: without the bridge, a ``blocked`` one waits for the screen to
        show Pi's dialog (``wiring.blocked``); the others go on at once."""
        if self.blocked is not None:
            try:
                if self.blocked.offer(event):
                    return
            except Exception as exc:  # fail closed for blocked, open for the others
                self.log.error("blocked_check", exc)
                if event.state == "blocked":
                    return
        self._relayed(event)

    def _keys_read(self, event: relay_events.KeysRead) -> None:
        self._typed()  # the frequent one: straight through (no record, the key window)

    def _focus_report(self, event: FocusReport) -> None:
        fact = relay_events.to_fact(event)
        if isinstance(fact, F.Presence) and fact.state != "unknown" and self.tmux is not None:
            self.tmux.focus(fact.state)  # merged with tmux's view of the pane
        elif fact is not None:
            self.fact(fact)

    def _guard_fell_back(self, event: relay_events.GuardFellBack) -> None:
        self._relayed(event)
        self._fallback = event.says()  # /cue says it too

    def _title_change(self, event: TitleChange) -> None:
        self._relayed(event)
        # Pi's own title is "π - …": one that begins with a mark is never an inner cuewrap's
        # (only generic mode can wrap one) but content posing as cuewrap's mark
        # (docs/terminal-guard.md): never marked, never put back
        posing = self._pi and event.title.startswith(MARKED)
        self.delivery.child_title(event.title, event.controls or posing)

    def _child_notification(self, event: ChildNotification) -> None:
        if event.consumed:
            self.log.write(
                "translation",
                source=event.protocol,
                terminal=self.delivery.terminal_choice.protocol,
                desktop=self.delivery.desktop_on,
                note="the child's notification was taken out and is re-emitted",
            )
        self._relayed(event)

    def _job_change(self, event: relay_events.JobChange) -> None:
        if event.state == "continued":  # the shell had the terminal meanwhile
            self.delivery.reapply_mark()
            self.delivery.reapply_progress()
        self._relayed(event)

    def _child_exited(self, event: relay_events.ChildExited) -> None:
        if self.bridge is not None:  # what Pi said before it died comes first
            self.bridge.drain_all()
        self._relayed(event)

    def _typed(self) -> None:
        """The user typed (one ``KeysRead`` event per read of their input): each part that
        cares is told, in the order fixed at construction (``_on_key``)."""
        for tell in self._on_key:
            tell()

    def fact(self, fact: Event) -> None:
        """Any fact (or Tick) from any source: one engine step, effects performed. Inside
        tmux a fact whose cue depends on presence first waits for tmux's answer of now, and
        the facts after it with it (``wiring/freshview.py``)."""
        if self._closed:
            return
        if self.fresh is not None:
            try:
                if self.fresh.offer(self.state, fact, self.loop.clock()):
                    return
            except Exception as exc:  # fail open: stepped as it is
                self.log.error("freshview", exc)
        before = self.state
        self.state, effects = step(before, fact, self.loop.clock())
        if self.answerer is not None and isinstance(fact, F.Fact):
            try:  # before the effects: a wait's notification may wait for its token
                self.answerer.fact(fact, self.state.wait_keys)
            except Exception as exc:
                self.log.error("answerer", exc)
        for effect in effects:
            try:
                _EFFECTORS[type(effect)](self, effect)
            except Exception as exc:  # fail open, per effect
                self.log.error(f"effect:{type(effect).__name__}", exc)
        if self.screen is not None:
            self.screen.check()
        self._tell_unseen()
        self._hand_down_rules()
        if self._on_focus is not None and self.state.looking != self._looking:
            self._tell_focus()
        if self.tmux is not None:  # tmux is asked while a change of presence would count
            self.tmux.watch(waits_on_presence(self.state))
        try:
            self._publish(before)
        except Exception as exc:
            self.log.error("publish", exc)

    def _now_unseen(self) -> bool:
        return unseen(self.state)

    def _tell_unseen(self) -> None:
        unseen = self._now_unseen()
        if unseen != self._unseen and self._on_unseen is not None:
            self._unseen = unseen
            try:
                self._on_unseen(unseen)
            except Exception as exc:
                self.log.error("unseen", exc)

    def _tell_focus(self) -> None:
        """The child is told whether the user looks (``on_focus``): the truth of presence,
        so that a program that notifies only while unfocused does so exactly while away."""
        if self._on_focus is None:
            return
        self._looking = self.state.looking
        try:
            self._on_focus(self._looking)
        except Exception as exc:
            self.log.error("focus", exc)

    def _mode_change(self, event: ModeChange) -> None:
        self._relayed(event)
        if event.mode == MODE_FOCUS and event.on:  # the child wants to be told: now
            self._tell_focus()

    def _hand_down_rules(self) -> None:
        """The byte path's rules as this state makes them, when they changed
        (``engine.output``)."""
        if self._on_rules is None:
            return
        try:
            rules = output_rules(self.state, self.settings.guard.clipboard, self._pi)
            if rules != self._rules:
                self._rules = rules
                self._on_rules(rules)
        except Exception as exc:  # the byte path keeps the last rules
            self.log.error("rules", exc)

    def child_fact(self, fact: Event) -> None:
        """A fact from the output watch (called from the relay's hot path): never raises."""
        try:
            self.fact(fact)
        except Exception as exc:
            self.log.error("child_fact", exc)

    def eligible(self, eligibility: Eligibility) -> bool:
        """May a cue still be delivered (asked right before each asynchronous delivery)?"""
        return is_eligible(self.state, eligibility)

    def stronger_source_live(self) -> bool:
        """The bridge or OSC 7501 is live: the screen source is not needed."""
        return self.state.bridge_live or "osc7501" in self.state.trusted

    def _publish(self, before: EngineState) -> None:
        """The session's state for the overview: only what changed goes out (sessions.publish)."""
        s = self.state
        mark = s.mark_shown if self.settings.notify.title_marks else None
        changes = glance.changes(before, s)
        self.publisher.publish(
            changes, self._session_label(), glance.presence(s), mark, driving_source(s)
        )

    def _tick(self) -> None:
        self._wake = None
        self.fact(Tick())

    # -- effects (the table is _EFFECTORS, below the class) ------------------------------
    def _record(self, effect: Record) -> None:
        self.log.write(effect.kind, **effect.fields)

    def _set_mark(self, effect: SetMark) -> None:
        self.delivery.set_mark(effect.mark)

    def _notify(self, effect: Notify) -> None:
        answerer = self.answerer
        if effect.kind == "needs-input" and answerer is not None and answerer.reading:
            # its token is a moment away: the notification carries it (docs/answering.md)
            def later() -> None:
                if self._closed:
                    return
                if not self.eligible(effect.eligibility):
                    self.delivery.record(effect.cue_id, "all", "dropped-ineligible",
                                         "stale while the dialog was read")  # fmt: skip
                    return
                self._deliver(effect)

            answerer.when_ready(later)
            return
        self._deliver(effect)

    def _deliver(self, effect: Notify) -> None:
        self.delivery.notify(effect, eligible=self.eligible, session=self._session_label())

    def _withdraw(self, effect: Withdraw) -> None:
        self.delivery.withdraw(effect)

    def _escalate(self, effect: Escalate) -> None:
        self.delivery.escalate(effect.note, eligible=self.eligible, session=self._session_label())

    def _progress(self, effect: Progress) -> None:
        self.delivery.progress(effect.on)

    def _set_wake(self, effect: Wake) -> None:
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        if effect.at is not None:
            self._wake = self.loop.call_at(effect.at, self._tick)

    def _keep_awake(self, effect: KeepAwake) -> None:
        self.delivery.keep_awake(effect.hold)

    def _diagnostic(self, effect: Diagnostic) -> None:
        self.log.write("diagnostic", text=effect.text)
        if self.bridge is not None:
            self.bridge.push_notice(wording.in_pi(effect.text))

    def _session_label(self) -> str:
        return self.state.session_name or self.state.config.label

    # -- /cue --------------------------------------------------------------------------------
    def request(self, action: str) -> str:
        if action in ("on", "off"):
            return toggle_reply(action == "on")
        if self.attention is not None:  # /cue mute [DURATION], /cue unmute
            said = self.attention.request(action)
            if said is not None:
                return said
        return self.status_page()

    def status_page(self) -> str:
        """The /cue page (docs/design.md#what-the-user-sees): ``engine.page.cue_page`` from the
        engine's status and what this session's parts report."""
        bridge = BridgeCounts.from_stats(self.bridge.stats()) if self.bridge is not None else None
        s, guard = self.state, self.settings.guard
        page = cue_page(
            status(s),
            self.delivery.channels(),
            bridge,
            _counts(guard.clipboard, s.clip_removed),
            sequences=_counts(guard.sequences, s.seq_removed),
            tmux=self.tmux.status_line() if self.tmux is not None else None,
            fixes=fixes(self._where()),
            fallback=self._fallback,
        )
        if self.answerer is not None and self.answerer.last is not None:
            page += f"\nLast answer from elsewhere: {self.answerer.last}"
        return page

    def _where(self) -> Where:
        """What /cue's advice needs (cuewrap.advice): this session's evidence."""
        view = self.tmux.view if self.tmux is not None else None
        choice = self.delivery.terminal_choice
        return Where(
            ssh=any(self.env.get(v) for v in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT")),
            tmux=bool(self.env.get("TMUX")),
            tmux_version=view.version if view is not None else "",
            focus_events=view.focus_events if view is not None else None,
            passthrough=view.passthrough if view is not None else None,
            terminal=choice.terminal,
            focus_reported="focus" in self.state.seen,
            idle_after=self.settings.presence.idle_after,
            terminal_notifications=choice.protocol != "off",
            desktop=self.delivery.desktop_on,
            command=self.settings.notify.command is not None,
        )

    # -- teardown ----------------------------------------------------------------------------
    def finish(self, grace: float) -> None:
        """After the child is gone: let pending desktop notifications complete, then close."""
        try:
            deadline = self.loop.clock() + grace
            while (
                self.delivery.pending()
                or (self.tmux is not None and self.tmux.busy)
                or self.publisher.busy
            ):
                left = deadline - self.loop.clock()
                if left <= 0:
                    break
                self.loop.run_once(max_timeout=left)
        except Exception as exc:
            self.log.error("finish", exc)
        self.close()

    def close(self) -> None:
        """Every part ended, in the order fixed at construction (``_closers``), each on its
        own: one that fails is logged and the others are still ended."""
        if self.fresh is not None:  # what waits for tmux is decided by its last answer
            self._end("freshview.close", self.fresh.close)
        self._closed = True
        for where, end in self._closers:
            self._end(where, end)

    def _end(self, where: str, end: Callable[[], None]) -> None:
        try:
            end()
        except Exception as exc:
            self.log.error(where, exc)

    def _cancel_wake(self) -> None:
        if self._wake is not None:
            self._wake.cancel()


def _fan_out(
    made: Parts, cancel_wake: Callable[[], None]
) -> tuple[tuple[Callable[[], None], ...], tuple[tuple[str, Callable[[], None]], ...]]:
    """What the controller tells each part, fixed once: who hears a key, in order (the
    activity watch: output right after it is its echo; the answerer: its token dies at the
    first key; the engine's key window; tmux: its view may be stale), and what ``close`` ends,
    in order (tmux first: a window option set still in flight is ended before the publisher
    unsets it; the publisher: the registry entry goes; the bridge last)."""
    on_key: list[Callable[[], None]] = []
    if made.activity is not None:
        on_key.append(made.activity.input)
    if made.answerer is not None:
        on_key.append(made.answerer.typed)
    on_key.append(made.keys.key)
    if made.tmux is not None:
        on_key.append(made.tmux.keystroke)
    closers: list[tuple[str, Callable[[], None]]] = []
    if made.tmux is not None:
        closers.append(("tmux.close", made.tmux.close))
        if made.reaper is not None:  # its commands in flight (the window option's)
            closers.append(("reaper.close", made.reaper.close))
    closers.append(("publisher.close", made.publisher.close))
    for where, part in (
        ("activity.close", made.activity),
        ("keys.close", made.keys),
        ("control.close", made.control),
        ("answerer.close", made.answerer),
        ("blocked.close", made.blocked),
        ("attention.close", made.attention),
        ("screen.close", made.screen),
    ):
        if part is not None:
            closers.append((where, part.close))
    closers.append(("wake.cancel", cancel_wake))
    closers.append(("delivery.close", made.delivery.close))
    if made.bridge is not None:
        closers.append(("bridge.close", made.bridge.close))
    return tuple(on_key), tuple(closers)


def _counts(setting: str, removed: Removed) -> GuardCounts:
    return GuardCounts(setting, removed.count, removed.last_at, removed.last_size)


def _wall_time() -> str:
    """The wall-clock time for /cue's "last removed at" (the engine reads no clock)."""
    import time

    return time.strftime("%H:%M:%S", time.localtime())


# what the controller does with a relay event of each type beyond ``_relayed`` (its record and
# its fact), by the event's exact type: the union's members are final classes
_ON_RELAY_EVENT: dict[type, Callable[[Controller, Any], None]] = {
    relay_events.KeysRead: Controller._keys_read,
    F.ProgramStatus: Controller._program_status,
    TerminalAnswer: Controller.terminal_answer,
    FocusReport: Controller._focus_report,
    ClipboardSequence: Controller._clipboard_seen,
    GuardedSequence: Controller._guarded_seen,
    relay_events.GuardFellBack: Controller._guard_fell_back,
    TitleChange: Controller._title_change,
    ModeChange: Controller._mode_change,
    ChildNotification: Controller._child_notification,
    relay_events.JobChange: Controller._job_change,
    relay_events.ChildExited: Controller._child_exited,
}

# one effector per effect type (the engine's own dispatch is ``reducer._HANDLERS``)
_EFFECTORS: dict[type, Callable[[Controller, Any], None]] = {
    Record: Controller._record,
    SetMark: Controller._set_mark,
    Notify: Controller._notify,
    Withdraw: Controller._withdraw,
    Escalate: Controller._escalate,
    Progress: Controller._progress,
    Wake: Controller._set_wake,
    KeepAwake: Controller._keep_awake,
    Diagnostic: Controller._diagnostic,
}
