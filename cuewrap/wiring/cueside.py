"""The cue side of a session, composed: every part the controller uses, made and handed to it.

``build_controller`` runs once per session, after the child's first frame (the relay's cue
side, ``wiring/pending.py``, calls it), from the session's ``Mode`` (``wiring/mode.py``: Pi or
generic mode, the preset, whose dialogs are answered, the engine's settings): the
publisher; answering the child's dialogs from elsewhere (Pi mode with the bridge: the answerer
and its control socket); the delivery channels, tmux asked about the pane (the one blocking
question, and only when a terminal notification could go through tmux); the engine's config
from the terminal choice. Then the ``Controller``, whose constructor calls ``_Sources`` with
itself: the parts that report to it — the key window, the bridge server on the channel opened
before the spawn (Pi mode), the screen gate (Pi mode) or the output watch (generic mode), the
``blocked`` check (Pi mode without the bridge), the tmux side with its reaper (inside tmux) —
each get the controller's methods in their constructors. Nothing is assigned afterwards,
but inside tmux, once its side has started, delivery's route (``Delivery.route_through``) and
the publisher's window (``Publisher.start_tmux``): docs/architecture.md, "The composition
root".

An exception goes to the caller: the session then runs without cues, and every part built
before it is closed again (one ``contextlib.ExitStack``: no socket, worker, tmux command or
registry entry left).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from cuewrap.wiring._faults import NO_FAULTS, Faults

if TYPE_CHECKING:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.control import ControlServer
    from cuewrap.bridge.channel import Channel
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.config import Settings
    from cuewrap.context import Context
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine import EngineConfig
    from cuewrap.facts import Fact, Presence
    from cuewrap.generic.activity import OutputWatch
    from cuewrap.relay.decisions import OutputDecisions
    from cuewrap.relay.relay import RelayControls
    from cuewrap.sessions.publish import Publisher
    from cuewrap.tmux.view import Merged
    from cuewrap.wiring.attention import Attention
    from cuewrap.wiring.controller import Controller
    from cuewrap.wiring.keystrokes import KeyWindow
    from cuewrap.wiring.mode import Mode
    from cuewrap.wiring.parts import Parts
    from cuewrap.wiring.pending import PendingCueSide


@dataclasses.dataclass(frozen=True)
class Plan:
    """What the session knows of its cue side before building it: the mode, the faults the
    test hook asks for (``wiring/_faults.py``), the bridge channel opened before the spawn (Pi
    mode; None without), the child's pid, the events file (the publisher's once built), the
    terminal's size at start."""

    mode: Mode
    faults: Faults = NO_FAULTS
    channel: Channel | None = None
    child_pid: int | None = None
    events_fd: int | None = None
    size: tuple[int, int] = (24, 80)


@dataclasses.dataclass(frozen=True)
class Edge:
    """The session's byte path as the cue side reaches it (downward calls only): the
    injector's ``inject``, the host's ``undo_at_restore``, the relay's controls and its cue
    side (``cues``: the screen gate tells it when it needs no more output), the byte path's
    decisions (handed the rules)."""

    inject: Callable[[bytes], None]
    undo_at_restore: Callable[[bytes], None] = lambda off: None
    relay: RelayControls | None = None
    cues: PendingCueSide | None = None
    decisions: OutputDecisions | None = None


def build_controller(ctx: Context, plan: Plan, edge: Edge) -> Controller:
    """The cue side: every part the controller uses, built here (tmux asked here, blocking)
    and handed to it."""
    from cuewrap.deliver.delivery import build_delivery
    from cuewrap.sessions.publish import Publisher
    from cuewrap.wiring.controller import Controller

    fault, mode = plan.faults.before, plan.mode
    # every part built is closed again if a later one fails (the session then runs without
    # cues, as if none had been built); once the controller exists, it closes them
    with contextlib.ExitStack() as built:
        fault("publisher")
        publisher = Publisher(
            ctx.loop, ctx.env, ctx.log.write, ctx.log.error,
            program=mode.program, events_fd=plan.events_fd,
        )  # fmt: skip
        built.callback(publisher.withdraw)
        answering = _answering(ctx, plan, edge, publisher, built)
        fault("delivery")
        w = publisher.where
        delivery = build_delivery(
            ctx, edge.inject, undo_at_restore=edge.undo_at_restore, app=mode.app,
            where={"pid": w.pid, "tmux_pane": w.tmux_pane, "tty": w.tty},
            answering=answering,
        )  # fmt: skip
        built.callback(delivery.close)
        native, reemit = _child_notices(delivery, bool(ctx.env.get("TMUX")))
        config = engine_config(ctx.settings, mode, reemit, frozenset({native}) - {"off"})
        if mode.preset is not None:
            ctx.log.write(
                "generic",
                preset=mode.preset.name,
                app=mode.preset.app,
                why=mode.preset_why,
                quiet_after=ctx.settings.generic.quiet_after,
                host_native=native,
                reemit=reemit,
            )
        fault("controller")
        sources = _Sources(ctx, plan, edge, built)
        parts = sources.handed(config, delivery, publisher, answering)
        decisions = edge.decisions
        controller = Controller(
            ctx,
            parts=parts,
            on_unseen=edge.relay.set_unseen if edge.relay is not None else None,
            on_rules=decisions.set_rules if decisions is not None else None,
            on_focus=(
                edge.relay.tell_focus if edge.relay is not None and mode.answers_child else None
            ),
        )
        built.pop_all()  # the controller's now
    return controller


class _Sources:
    """The parts that report to the controller, made by its constructor (``handed``): each
    gets the controller's methods it calls. Built in this order; each closed by ``built`` if
    a later one fails."""

    def __init__(
        self,
        ctx: Context,
        plan: Plan,
        edge: Edge,
        built: contextlib.ExitStack,
    ) -> None:
        self.ctx, self.plan, self.edge, self.built = ctx, plan, edge, built
        self.fault = plan.faults.before

    def handed(
        self,
        config: EngineConfig,
        delivery: Delivery,
        publisher: Publisher,
        answerer: Answerer | None,
    ) -> Callable[[Controller], Parts]:
        mode = self.plan.mode

        def make(c: Controller) -> Parts:
            from cuewrap.wiring.parts import Parts

            attention = self._attention(c, publisher)
            parts = Parts(
                config,
                delivery,
                publisher,
                self._keys(c),
                bridge=self._bridge(c),
                activity=self._output_watch(c, answerer) if mode.generic else None,
                answerer=answerer,
                control=self._control(answerer, attention, delivery),
                attention=attention,
            )
            if mode.pi:
                parts = self._pi_parts(c, parts)
            if self.ctx.env.get("TMUX"):
                parts = self._tmux_parts(c, parts)
            return parts

        return make

    def _attention(self, c: Controller, publisher: Publisher) -> Attention:
        """Quiet hours, the desktop's do-not-disturb, mute from outside (docs/attention.md)."""
        from cuewrap.wiring.attention import Attention

        self.fault("attention")
        attention = Attention(self.ctx, c.fact, publisher)
        self.built.callback(attention.close)
        return attention

    def _control(
        self, answerer: Answerer | None, attention: Attention, delivery: Delivery
    ) -> ControlServer | None:
        """The control socket beside the registry entry: ``cuewrap answer`` (Pi mode with the
        bridge; generic mode), ``cuewrap mute`` / ``unmute``, the popup several sessions
        share."""
        from cuewrap.wiring.attention import control_socket

        answer = answerer.request if answerer is not None else None
        control = control_socket(self.ctx, answer, attention.on_mute, delivery.render_shared)
        if control is not None:
            self.built.callback(control.close)
        return control

    def _keys(self, c: Controller) -> KeyWindow:
        from cuewrap.facts import Keystroke
        from cuewrap.wiring.keystrokes import KeyWindow

        self.fault("keys")
        keys = KeyWindow(self.ctx.loop, lambda: c.fact(Keystroke()))
        self.built.callback(keys.close)
        return keys

    def _bridge(self, c: Controller) -> BridgeServer | None:
        """Pi's extension connects to this server, listening on the channel opened before the
        spawn; None (logged) when there is none or it cannot listen. Pi's own writes to its
        terminal that come through it go to the relay (``own_output``: docs/terminal-guard.md,
        "Whose sequence is it")."""
        channel = self.plan.channel
        if channel is None:
            return None
        from cuewrap.bridge.server import BridgeServer
        from cuewrap.wiring.bridgewatch import BridgeWatch

        self.fault("bridge")
        log, child_pid, relay = self.ctx.log, self.plan.child_pid, self.edge.relay
        # a lost bridge: noticed, said, survived (docs/bridge-protocol.md); it speaks inside Pi
        # through the server it watches
        watch = BridgeWatch(
            self.ctx.loop, log, relay, c.fact, lambda text: server.push_notice(text)
        )
        server = BridgeServer(
            self.ctx.loop,
            child_pid=lambda: child_pid,
            on_fact=watch.fact,
            on_reject=lambda reason: log.write("rejected", source="bridge", reason=reason),
            on_request=c.request,
            on_own=relay.own_output if relay is not None else None,
            note=lambda: watch.note,
        )
        self.built.callback(server.close)
        self.built.callback(watch.close)
        try:
            server.start(channel)
        except OSError as exc:
            log.write("bridge_unavailable", error=str(exc))
            return None
        return server

    def _output_watch(self, c: Controller, answerer: Answerer | None) -> OutputWatch:
        """Generic mode: the child's output activity and quiet, as facts; it feeds the
        answerer's output ring (docs/answering.md)."""
        from cuewrap.generic.activity import OutputWatch

        self.fault("activity")
        ring = answerer.ring if answerer is not None else None
        watch = OutputWatch(
            self.ctx.loop, self.ctx.settings.generic.quiet_after, c.child_fact, ring=ring
        )
        self.built.callback(watch.close)
        return watch

    def _pi_parts(self, c: Controller, parts: Parts) -> Parts:
        """Pi mode: the screen gate; with the answerer (and the bridge listening), the gate
        feeds its output ring, else one of its own. The check of a ``blocked`` report against
        the screen reads the same ring: without the bridge always; with it, while the frame
        rule decides (before the provenance mark, or once the bridge is lost: docs/terminal-
        guard.md, "Whose sequence is it")."""
        from cuewrap.answer.screen import OutputRing
        from cuewrap.screen.gate import ScreenGate
        from cuewrap.wiring.blocked import BlockedCheck

        ctx = self.ctx
        if parts.answerer is not None and parts.bridge is not None:
            ring = parts.answerer.ring
        else:
            ring = OutputRing(*self.plan.size)
        relay = self.edge.relay

        def confirmed(fact: Fact) -> None:  # the report reaches the terminal only now
            if relay is not None:
                relay.pass_held_status()
            c.fact(fact)

        def frame_rule() -> bool:
            return relay is None or relay.provenance != "marked"

        active = frame_rule if parts.bridge is not None else None
        blocked = BlockedCheck(ctx.loop, ctx.log, ring, confirmed, active=active)
        self.built.callback(blocked.close)
        self.fault("screen")
        cues = self.edge.cues

        def done() -> None:  # the relay feeds the ring itself from then on
            if cues is not None:
                cues.tap_done(gate, ring)

        gate = ScreenGate(
            ctx.loop, *self.plan.size, stronger_live=c.stronger_source_live, on_fact=c.fact,
            log=ctx.log, ring=ring, on_done=done,
        )  # fmt: skip
        self.built.callback(gate.close)
        return dataclasses.replace(parts, screen=gate, blocked=blocked)

    def _tmux_parts(self, c: Controller, parts: Parts) -> Parts:
        """Inside tmux: the tmux side and its reaper; the publisher told the window (the
        window option), once tmux says which it is."""
        from cuewrap.deliver.route import tmux_route

        def presence(state: Merged, via: str) -> None:
            c.fact(presence_fact(state, via))

        self.fault("tmux")
        side, reaper = tmux_route(
            self.ctx, parts.delivery, self.edge.inject, presence, c.eligible, self.built
        )
        if side is None:
            return dataclasses.replace(parts, reaper=reaper)
        from cuewrap.wiring.freshview import FreshView

        publisher = parts.publisher
        publisher.start_tmux(reaper, lambda: side.view.window_id if side.view else None)
        side.refresh(lambda view: publisher.refresh())
        fresh = FreshView(self.ctx.loop, side, c.fact, self.ctx.log.write)
        return dataclasses.replace(parts, tmux=side, reaper=reaper, fresh=fresh)


def presence_fact(state: Merged, via: str) -> Presence:
    """What the tmux side says of the user (``via``: what told it) as the engine's fact."""
    from cuewrap.facts import Presence

    return Presence(state, source="tmux" if via == "tmux" else "focus")


def _answering(
    ctx: Context,
    plan: Plan,
    edge: Edge,
    publisher: Publisher,
    built: contextlib.ExitStack,
) -> Answerer | None:
    """Answering Pi's dialogs from elsewhere (docs/answering.md), Pi mode with the bridge's
    channel: the answerer (closed by ``built`` if a later part fails); the control socket
    ``cuewrap answer`` talks to is made with the others' parts (``_Sources._control``).
    Generic mode: a program's own dialogs (``answer/build.py``; its preset's name: whose own
    notifications may say it waits)."""
    fault, mode = plan.faults.before, plan.mode
    if mode.answering == "program" and mode.preset is not None:
        from cuewrap.answer.build import generic_answerer

        name = mode.preset.name
        fault("answer")
        type_keys = edge.relay.type_to_child if edge.relay is not None else None
        return generic_answerer(
            ctx, plan.size, publisher, built, type_keys=type_keys, notices=name, preset=name
        )
    if mode.answering != "pi" or plan.channel is None:
        return None
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.pi import PiDialogs, pi_keys
    from cuewrap.answer.screen import OutputRing

    fault("answer")
    env, log = ctx.env, ctx.log
    answerer = Answerer(
        ctx.loop,
        log,
        OutputRing(*plan.size),
        PiDialogs(plan.channel.token, lambda: pi_keys(env)),
        summary=ctx.settings.privacy.body == "summary",
        on_change=lambda: publisher.set_wait(answerer.wait_info()),
        type_keys=edge.relay.type_to_child if edge.relay is not None else None,
    )
    built.callback(answerer.close)
    return answerer


def _child_notices(delivery: Delivery, in_tmux: bool) -> tuple[str, bool]:
    """The child's own notifications: the protocol the host terminal shows as they are (not
    through tmux; "off" where none), and whether cuewrap has a channel to re-emit them
    (inside tmux there always is, a status-line message, and a raw notification from a pane
    never gets through tmux anyway)."""
    choice = delivery.terminal_choice
    native = choice.protocol if not choice.tmux_passthrough else "off"
    return native, choice.protocol != "off" or delivery.desktop_on or in_tmux


def engine_config(
    settings: Settings, mode: Mode, reemit: bool, native: frozenset[str]
) -> EngineConfig:
    """The engine's settings for this session: the user's settings, and what the mode implies
    (generic mode: its preset's app, signal and words)."""
    from cuewrap.engine import EngineConfig

    preset = mode.preset

    return EngineConfig(
        enabled=settings.cues.enabled,
        idle_after=settings.presence.idle_after,
        label=os.path.basename(os.getcwd()),
        privacy_summary=settings.privacy.body == "summary",
        keep_awake=settings.keep_awake.enabled,
        escalate_after=settings.notify.escalate_after,
        urgent_after=settings.quiet.urgent_after,
        progress=settings.notify.progress and preset is None,
        title_marks=settings.notify.title_marks,
        generic=preset is not None,
        app=mode.app,
        app_known=preset is not None and preset.name != "none",
        signal=preset.signal if preset is not None else EngineConfig.signal,
        host_native=native,
        reemit=reemit,
        notices=preset.name if preset is not None else "",
        words=preset.name if preset is not None and preset.answers_child else "",
        guard_clipboard=settings.guard.clipboard,
        guard_sequences=settings.guard.sequences,
    )
