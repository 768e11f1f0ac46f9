"""The cue side of a session, built: every part the controller uses, made and handed to it.

``build_controller`` runs once per session, after the child is spawned (while it boots): the
generic mode's preset for the command; tmux asked about the pane (the one blocking question,
and only when a terminal notification could go through tmux); the delivery channels and the
engine's config from the terminal choice; the publisher; the bridge server on the channel
opened before the spawn (Pi mode); the screen gate (Pi mode) or the output watch (generic
mode); answering Pi's dialogs from elsewhere (Pi mode with the bridge: the answerer and its
control socket); the tmux side with its reaper (inside tmux); the key window. Then the
``Controller``, handed all of them. The parts' calls back into it go through
``_ToController``, set once it exists (the parts call only from the loop, which does not run
meanwhile). An exception goes to the caller: the session then runs without cues, and every
part built before it is closed again (one ``contextlib.ExitStack``: no socket, worker,
control client or registry entry left).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cuewrap.decisionlog import DecisionLog
from cuewrap.loop import Loop

if TYPE_CHECKING:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.control import ControlServer
    from cuewrap.bridge.channel import Channel
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.config import Settings
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine import EngineConfig, Event
    from cuewrap.engine.effects import Eligibility
    from cuewrap.generic.activity import OutputWatch
    from cuewrap.generic.presets import Preset
    from cuewrap.screen.gate import ScreenGate
    from cuewrap.sessions.publish import Publisher
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.tmux.view import Merged
    from cuewrap.wiring.controller import Controller, Parts
    from cuewrap.workers import Reaper


class _ToController:
    """The parts' calls into the controller, which is built after them (they are handed to
    it). Nothing calls before it is set: the parts only call from the loop."""

    def __init__(self) -> None:
        self.controller: Controller | None = None

    def fact(self, fact: Event) -> None:
        if self.controller is not None:
            self.controller.fact(fact)

    def child_fact(self, fact: Event) -> None:
        if self.controller is not None:
            self.controller.child_fact(fact)

    def keystroke(self) -> None:
        from cuewrap.facts import Keystroke

        self.fact(Keystroke())

    def presence(self, state: Merged, via: str) -> None:
        from cuewrap.facts import Presence

        self.fact(Presence(state, source="tmux" if via == "tmux" else "focus"))

    def request(self, action: str) -> str:
        return self.controller.request(action) if self.controller is not None else ""

    def stronger_live(self) -> bool:
        return self.controller is not None and self.controller.stronger_source_live()

    def eligible(self, eligibility: Eligibility) -> bool:
        return self.controller is not None and self.controller.eligible(eligibility)


def build_controller(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    *,
    pi_mode: bool,
    inject: Callable[[bytes], None],
    size: tuple[int, int],
    undo_at_restore: Callable[[bytes], None] = lambda off: None,
    channel: Channel | None = None,
    child_pid: int | None = None,
    command: str = "",
    events_fd: int | None = None,
    own_output: Callable[[bytes], None] | None = None,
) -> Controller:
    """The cue side: every part the controller uses, built here (tmux asked here, blocking,
    while the child boots) and handed to it. Pi mode: the bridge server on ``channel`` and the
    screen gate; generic mode: the preset for ``command`` and the output watch; inside tmux:
    the tmux side and its reaper."""
    from cuewrap.deliver.delivery import build_delivery
    from cuewrap.sessions.publish import Publisher
    from cuewrap.wiring.controller import Controller, Parts
    from cuewrap.wiring.keystrokes import KeyWindow

    env = dict(env)
    to = _ToController()
    fault = _fault_hook(env)
    preset: Preset | None = None  # generic mode: what the program's signals mean
    preset_why = ""
    if not pi_mode:
        from cuewrap.generic.presets import choose

        preset, preset_why = choose(command, settings.generic.preset)
    # every part built is closed again if a later one fails (the session then runs without
    # cues, as if none had been built); once the controller exists, it closes them
    with contextlib.ExitStack() as built:
        fault("keys")
        keys = KeyWindow(loop, to.keystroke)
        built.callback(keys.close)
        in_tmux = bool(env.get("TMUX"))
        # the one blocking question: tmux about this pane (not asked when nothing goes
        # through it)
        app = preset.app if preset is not None else "Pi"
        fault("delivery")
        delivery = build_delivery(loop, settings, log, env, inject, undo_at_restore, app)
        built.callback(delivery.close)
        fault("bridge")
        bridge = (
            _bridge(loop, log, channel, child_pid, to, own_output) if channel is not None else None
        )
        if bridge is not None:
            built.callback(bridge.close)
        native, reemit = _child_notices(delivery, in_tmux)
        config = engine_config(settings, preset, reemit, frozenset({native}) - {"off"})
        fault("publisher")
        publisher = Publisher(
            loop,
            env,
            log.write,
            log.error,
            program="pi" if pi_mode else os.path.basename(command),
            events_fd=events_fd,
        )
        built.callback(publisher.withdraw)
        where = publisher.where
        delivery.where = {"pid": where.pid, "tmux_pane": where.tmux_pane, "tty": where.tty}
        parts = Parts(delivery, publisher, keys, bridge)
        if preset is not None:
            fault("activity")
            parts.activity = _output_watch(loop, settings, log, to, built)
            fault("answer")  # a program's own dialogs (docs/answering.md)
            from cuewrap.answer.build import generic_answering

            parts.answerer, parts.control = generic_answering(
                loop, log, env, size, summary=settings.privacy.body == "summary",
                publisher=publisher, delivery=delivery, watch=parts.activity, built=built,
            )  # fmt: skip
            log.write(
                "generic",
                preset=preset.name,
                app=preset.app,
                why=preset_why,
                quiet_after=settings.generic.quiet_after,
                host_native=native,
                reemit=reemit,
            )
        if pi_mode:
            key = channel.token if channel is not None and bridge is not None else ""
            _pi_parts(loop, settings, log, env, size, key, parts, to, built, fault)
        if in_tmux:
            fault("tmux")
            _tmux_parts(loop, settings, log, env, delivery, inject, publisher, parts, to, built)
        fault("controller")
        controller = to.controller = Controller(
            loop, settings, log, env, config=config, parts=parts, pi_mode=pi_mode
        )
        built.pop_all()  # the controller's now
    return controller


def _pi_parts(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    size: tuple[int, int],
    bridge_key: str,
    parts: Parts,
    to: _ToController,
    built: contextlib.ExitStack,
    fault: Callable[[str], None],
) -> None:
    """Pi mode: the screen gate in ``parts``; with the bridge listening (``bridge_key``, its
    token; "" without), answering Pi's dialogs too, the screen gate feeding its output ring.
    Without it, the check of a ``blocked`` report against the screen, on its own ring
    (docs/terminal-guard.md, "Whose sequence is it")."""
    fault("screen")
    parts.screen = screen = _screen_gate(loop, log, size, to, built)
    if bridge_key:
        fault("answer")
        parts.answerer, parts.control = _answering(
            loop, settings, log, env, size, parts.publisher, bridge_key, parts.delivery, built
        )
        screen.ring = parts.answerer.ring
    else:
        from cuewrap.answer.screen import OutputRing
        from cuewrap.wiring.blocked import BlockedCheck

        parts.blocked = BlockedCheck(loop, log, OutputRing(*size), to.fact)
        built.callback(parts.blocked.close)
        screen.ring = parts.blocked.ring


def _child_notices(delivery: Delivery, in_tmux: bool) -> tuple[str, bool]:
    """The child's own notifications: the protocol the host terminal shows as they are (not
    through tmux; "off" where none), and whether cuewrap has a channel to re-emit them
    (inside tmux there always is, a status-line message, and a raw notification from a pane
    never gets through tmux anyway)."""
    choice = delivery.terminal_choice
    native = choice.protocol if not choice.tmux_passthrough else "off"
    return native, choice.protocol != "off" or delivery.desktop_on or in_tmux


def _output_watch(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    to: _ToController,
    built: contextlib.ExitStack,
) -> OutputWatch:
    """Generic mode: the child's output activity and quiet, as facts."""
    from cuewrap.generic.activity import OutputWatch

    watch = OutputWatch(loop, settings.generic.quiet_after, to.child_fact)
    built.callback(watch.close)
    return watch


def _screen_gate(
    loop: Loop,
    log: DecisionLog,
    size: tuple[int, int],
    to: _ToController,
    built: contextlib.ExitStack,
) -> ScreenGate:
    """Pi mode: the screen source, started only while no stronger source is live."""
    from cuewrap.screen.gate import ScreenGate

    gate = ScreenGate(loop, *size, stronger_live=to.stronger_live, on_fact=to.fact, log=log)
    built.callback(gate.close)
    return gate


def _tmux_parts(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    delivery: Delivery,
    inject: Callable[[bytes], None],
    publisher: Publisher,
    parts: Parts,
    to: _ToController,
    built: contextlib.ExitStack,
) -> None:
    """Inside tmux: the tmux side and its reaper in ``parts``; the publisher told the window
    (the window option), once tmux says which it is."""
    side, parts.reaper = tmux_side(
        loop, settings, log, env, delivery, inject,
        on_presence=to.presence, is_eligible=to.eligible, built=built,
    )  # fmt: skip
    if side is None:
        return
    parts.tmux = side
    publisher.start_tmux(parts.reaper, lambda: side.view.window_id if side.view else None)
    side.refresh(lambda view: publisher.refresh())


def _fault_hook(env: Mapping[str, str]) -> Callable[[str], None]:
    """``CUEWRAP_DEBUG_FAULT=build:<part>``: the build fails right before that part (tests
    of closing what was built; cuewrap.wiring._faults)."""
    if "build:" not in env.get("CUEWRAP_DEBUG_FAULT", ""):
        return lambda part: None
    from cuewrap.wiring._faults import fail_before

    return lambda part: fail_before(part, env)


def engine_config(
    settings: Settings, preset: Preset | None, reemit: bool, native: frozenset[str]
) -> EngineConfig:
    """The engine's settings for this session (``preset``: generic mode's)."""
    from cuewrap.engine import EngineConfig

    return EngineConfig(
        enabled=settings.cues.enabled,
        idle_after=settings.presence.idle_after,
        label=os.path.basename(os.getcwd()),
        privacy_summary=settings.privacy.body == "summary",
        keep_awake=settings.keep_awake.enabled,
        escalate_after=settings.notify.escalate_after,
        progress=settings.notify.progress and preset is None,
        title_marks=settings.notify.title_marks,
        generic=preset is not None,
        app=preset.app if preset is not None else "Pi",
        app_known=preset is not None and preset.name != "none",
        signal=preset.signal if preset is not None else EngineConfig.signal,
        host_native=native,
        reemit=reemit,
    )


def _answering(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    size: tuple[int, int],
    publisher: Publisher,
    bridge_key: str,
    delivery: Delivery,
    built: contextlib.ExitStack,
) -> tuple[Answerer, ControlServer | None]:
    """Answering Pi's dialogs from elsewhere (docs/answering.md): the answerer, and the
    control socket ``cuewrap answer`` talks to, beside the registry entry (each closed by
    ``built`` if a later part fails)."""
    from cuewrap.answer.answerer import Answerer, pi_keys
    from cuewrap.answer.control import ControlServer
    from cuewrap.answer.screen import OutputRing
    from cuewrap.sessions.registry import own_directory

    answerer = Answerer(
        loop,
        log,
        OutputRing(*size),
        keys=lambda: pi_keys(env),
        summary=settings.privacy.body == "summary",
        bridge_key=bridge_key,
        on_change=lambda: publisher.set_wait(answerer.wait_info()),
    )
    built.callback(answerer.close)
    delivery.answering = answerer  # a needs-input cue's answer and buttons, their clicks
    directory = own_directory(env)
    if directory is None:
        log.write("answer", state="no control socket", why="no registry directory")
        return answerer, None
    control = ControlServer(
        loop, log, os.path.join(directory, f"{os.getpid()}.sock"), answerer.request
    )
    built.callback(control.close)
    return answerer, (control if control.start() else None)


def _bridge(
    loop: Loop,
    log: DecisionLog,
    channel: Channel,
    child_pid: int | None,
    to: _ToController,
    own_output: Callable[[bytes], None] | None,
) -> BridgeServer | None:
    """Pi's extension connects to this server, listening on the channel opened before the
    spawn; None (logged) when it cannot listen. Pi's own writes to its terminal that come
    through it go to ``own_output`` (the relay: docs/terminal-guard.md, "Whose sequence is
    it")."""
    from cuewrap.bridge.server import BridgeServer

    server = BridgeServer(
        loop,
        child_pid=lambda: child_pid,
        on_fact=to.fact,
        on_reject=lambda reason: log.write("rejected", source="bridge", reason=reason),
        on_request=to.request,
        on_own=own_output,
    )
    try:
        server.start(channel)
    except OSError as exc:
        log.write("bridge_unavailable", error=str(exc))
        return None
    return server


def tmux_side(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    delivery: Delivery,
    inject: Callable[[bytes], None],
    *,
    on_presence: Callable[[Merged, str], None],
    is_eligible: Callable[[Eligibility], bool],
    built: contextlib.ExitStack | None = None,
) -> tuple[TmuxSide | None, Reaper]:
    """Inside tmux: cuewrap.tmux watches who looks at Pi's pane, and each notification asks
    it first (``delivery.route_through``): delivery decides the terminal's and the desktop's
    part from the view tmux gives then (``Delivery.decide``), the tmux side adds tmux's own
    (a status-line message, the window's bell flag). Without it (None), presence and delivery
    work as outside tmux (focus reports, keys, the start-up passthrough check). The reaper
    ends its control client; ``built`` closes both if a later part fails. Also used by
    ``cuewrap config``'s test notification, so that it takes a reminder's route."""
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.workers import Reaper

    reaper = Reaper(loop)
    if built is not None:
        built.callback(reaper.close)  # after the side's close (last in, first out)
    side = TmuxSide(
        loop,
        env,
        on_presence=on_presence,
        inject=inject,
        is_eligible=is_eligible,
        record=delivery.record,
        log=log.write,
        reaper=reaper,
    )
    if built is not None:
        built.callback(side.close)
    started = side.start()
    log.write("tmux", state="started" if started else "not started", why=side.why)
    if not started:
        return None, reaper
    delivery.route_through(side)
    delivery.live = side.live_now  # /cue, the advice and the progress indicator
    return side, reaper
