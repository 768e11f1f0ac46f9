"""One cuewrap session: spawn the child in a PTY, relay, and tear everything down.

This is where the parts are wired: settings, the decision log and the loop; the bridge channel
and the child's environment before the spawn; then, while the child boots, the cue side
(``build_controller``: delivery, the bridge server, the screen gate or output watch, the tmux
side, the key window, the publisher, handed to the ``Controller``), the host terminal's modes
and the ``Relay``, given to each other.

``Session.run`` is the exit-path owner: whatever happens (child exit, child killed, a signal to
cuewrap, an exception inside cuewrap), the host terminal is restored in its ``finally``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cuewrap.decisionlog import DecisionLog, LogFileError, open_append
from cuewrap.host import HostTerminal, get_size, guard_holds
from cuewrap.loop import Loop
from cuewrap.term import sequences as seq

if TYPE_CHECKING:
    from cuewrap.args import Args
    from cuewrap.bridge.channel import Channel
    from cuewrap.bridge.server import BridgeServer
    from cuewrap.config import Settings
    from cuewrap.controller import Controller
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine import EngineConfig, Event
    from cuewrap.engine.effects import Eligibility
    from cuewrap.presets import Preset
    from cuewrap.relay.inject import Injector
    from cuewrap.relay.leader import LedChild
    from cuewrap.relay.relay import Relay, Sink
    from cuewrap.term.focus import FocusFilter
    from cuewrap.term.tracker import OutputTracker
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.tmux.view import Merged
    from cuewrap.workers import Reaper


FINISH_GRACE = 3.0  # seconds to let a last desktop notification (the exited cue) complete
QUERY_WINDOW = 5.0  # seconds the host terminal has to answer cuewrap's start-up query


class SessionError(Exception):
    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class Session:
    def __init__(self, args: Args, path: str) -> None:
        from cuewrap.config import ConfigError, check_commands, load_settings

        self.args = args
        self.env = dict(os.environ)
        try:
            self.settings = load_settings(
                args.config,
                self.env,
                {
                    "no_cues": args.no_cues,
                    "keep_awake": args.keep_awake,
                    "log": args.log,
                    "events": args.events,
                },
            )
            check_commands(self.settings, self.env)
        except ConfigError as exc:
            raise SessionError(str(exc), 2) from None
        self.host = HostTerminal(0, 1)
        self.guard = guard_holds(self.host, self.env)
        try:
            self.log = DecisionLog(self.settings.log)
            # the state changes for scripts (docs/scripting.md); O_CLOEXEC: the child has none
            events = self.settings.events
            self.events_fd = open_append(events, "events file") if events else None
        except LogFileError as exc:
            raise SessionError(str(exc), 2) from None
        self.loop = Loop(on_error=self.log.error)
        self.argv = [path, *args.command[1:]]
        self.controller: Controller | None = None  # the cue side: bridge, engine, effectors
        self.relay: Relay | None = None

    def run(self) -> int:
        host = self.host
        child: LedChild | None = None
        relay: Relay | None = None
        try:
            channel = self._prepare_child()
            child = self._spawn()
            # everything else is imported and set up while the child boots
            if channel is not None:
                self._remove_stale_channels()
            from cuewrap.relay.inject import Injector
            from cuewrap.relay.relay import Relay, exit_status

            injector = Injector(self.loop, host.write, self._injection_waited)
            controller = self._start_controller(channel, child.pid, injector)
            host.enter_raw()
            if self.guard:
                host.enable(seq.TITLE_PUSH, seq.TITLE_POP)
                host.enable(seq.FOCUS_REPORTING_ON, seq.FOCUS_REPORTING_OFF)
            focus, tracker, sink = self._relay_parts(controller)
            if controller is not None and focus is not None and self._ask_terminal:
                self._query_terminal(focus, controller)
            relay = self.relay = Relay(
                self.loop,
                child,
                host,
                focus=focus,
                tracker=tracker,
                injector=injector,
                sink=sink,
                screen=controller.output_tap if controller is not None else None,
                on_error=self.log.error,
            )
            relay.resize()
            exit = relay.run()
            self.log.write("child_exit", code=exit.code, signal=exit.signal)
            # docs/design.md#real-environments: a signal to cuewrap ends it 128+N
            if relay.fatal_signal is not None:
                self.log.write("fatal_signal", signal=relay.fatal_signal)
                return 128 + relay.fatal_signal
            return exit_status(exit)
        except SessionError:
            raise
        except BaseException as exc:
            self.log.error("session", exc)
            if child is not None:
                self._kill_child(child)
            return 1 if not isinstance(exc, KeyboardInterrupt) else 130
        finally:
            leftover = relay.restore_sequence() if relay is not None else b""
            host.restore(leftover if host.stdout_tty else b"")
            if child is not None:
                child.close()
            if self.controller is not None:
                self.controller.finish(FINISH_GRACE)
            if self.events_fd is not None:  # no controller took it (no cues: no states)
                os.close(self.events_fd)
            self.log.close()

    # -- the cue side -----------------------------------------------------------------------
    def _prepare_child(self) -> Channel | None:
        """What the child's command line and environment need: cheap, before the spawn."""
        if not self.guard:
            why = "stdin/stdout not a terminal, or TERM unset or dumb"
            self.log.write("guard", cues=False, why=why)
            return None
        if not self.args.pi_mode:
            return None
        # Pi's own status reports; a user who set PI_PROGRAM_STATUS (e.g. =0) keeps their choice
        self.env.setdefault("PI_PROGRAM_STATUS", "1")
        if self.args.no_bridge:
            return None
        from cuewrap.bridge.channel import open_channel

        try:
            channel = open_channel()
        except OSError as exc:  # fail open: OSC 7501 still works
            self.log.write("bridge_unavailable", error=str(exc))
            return None
        self.env.update(channel.env(summary=self.settings.privacy.body == "summary"))
        from cuewrap.bridge import extension_path

        self.argv[1:1] = ["-e", extension_path()]
        return channel

    def _injection_waited(self, seconds: float) -> None:
        """cuewrap's bytes waited for the child's output to reach a safe point
        (docs/design.md#delivery)."""
        self.log.write("inject_waited", seconds=round(seconds, 3))

    def _remove_stale_channels(self) -> None:
        """Socket directories of cuewraps that were killed (their owner pid is gone)."""
        from cuewrap.bridge.channel import remove_stale

        try:
            removed = remove_stale()
        except OSError as exc:
            self.log.error("remove_stale", exc)
            return
        if removed:
            self.log.write("stale_channels_removed", count=removed)

    def _start_controller(
        self, channel: Channel | None, child_pid: int, injector: Injector
    ) -> Controller | None:
        if not self.guard:
            return None
        try:
            self.controller = build_controller(
                self.loop,
                self.settings,
                self.log,
                self.env,
                pi_mode=self.args.pi_mode,
                inject=injector.inject,
                undo_at_restore=self.host.undo_at_restore,
                size=get_size(1, 0) or (24, 80),
                channel=channel,
                child_pid=child_pid,
                command=self.args.command[0],
                events_fd=self.events_fd,
            )
            self.events_fd = None  # the controller's now
        except Exception as exc:  # fail open: Pi runs as a plain passthrough
            self.log.error("controller", exc)
            self.controller = None
            if channel is not None:
                channel.close()
        return self.controller

    def _relay_parts(
        self, controller: Controller | None
    ) -> tuple[FocusFilter | None, OutputTracker, Sink | None]:
        """The relay's byte filters and event sink: the focus filter only when cues run, OSC
        7501 reports consumed only for Pi, events to the controller (none without one).
        ``CUEWRAP_DEBUG_FAULT`` makes the named parts raise (tests of failing open)."""
        from cuewrap.term.focus import FocusFilter
        from cuewrap.term.tracker import OutputTracker

        focus_cls, tracker_cls = FocusFilter, OutputTracker
        sink = controller.relay_event if controller is not None else None
        faults = set(filter(None, self.env.get("CUEWRAP_DEBUG_FAULT", "").split(",")))
        if faults:
            from cuewrap import _faults as fault

            if "focus" in faults:
                focus_cls = fault.RaisingFocus
            if "tracker" in faults:
                tracker_cls = fault.RaisingTracker
            if "sink" in faults:
                sink = fault.raising_sink
        focus: FocusFilter | None = None
        if self.guard and focus_cls is FocusFilter and self._ask_terminal:
            from cuewrap.term.answers import AnswerFilter

            focus = AnswerFilter(self._osc99_query_id())
        elif self.guard:
            focus = focus_cls()
        # generic mode: the controller decides which of the child's notifications to take out
        notices = controller if controller is not None and not self.args.pi_mode else None
        tracker = tracker_cls(
            consume_status=self.guard and self.args.pi_mode,
            notices=notices,
            own_focus=self.guard,  # the host's focus reporting is cuewrap's: design.md#presence
            # docs/terminal-guard.md: the child's OSC 52 pass only when the controller says
            clipboard=(
                controller
                if controller is not None and self.settings.guard.clipboard != "allow"
                else None
            ),
        )
        return focus, tracker, sink

    # -- asking the host terminal -------------------------------------------------------------
    @property
    def _ask_terminal(self) -> bool:
        """Ask the host terminal what it is (XTVERSION, kitty's OSC 99 query), not inside tmux
        (tmux answers for itself; the attached client's type comes from tmux) and not when
        ``CUEWRAP_DEBUG_NO_QUERY`` is set (a benchmark's comparison)."""
        return (
            self.guard
            and not self.env.get("TMUX")
            and not self.env.get("CUEWRAP_DEBUG_NO_QUERY")
            and not self.env.get("CUEWRAP_DEBUG_FAULT")
        )

    def _osc99_query_id(self) -> str | None:
        """kitty's OSC 99 query only where the environment says kitty (other terminals ignore
        an unknown OSC, but there is no point)."""
        kitty = self.env.get("KITTY_WINDOW_ID") or self.env.get("TERM") == "xterm-kitty"
        return f"cuewrap-q{os.getpid()}" if kitty else None

    def _query_terminal(self, focus: FocusFilter, controller: Controller) -> None:
        """Write the query in raw mode (no echo of the answers) and before any output of the
        child is relayed, so its answers come before those to the child's own queries; the
        answers are taken out of the input by the filter (``term.answers``). Nothing waits
        for them: the first frame is not delayed."""
        from cuewrap.term.answers import AnswerFilter

        if not isinstance(focus, AnswerFilter):
            return
        ident = self._osc99_query_id()
        query = seq.XTVERSION_QUERY
        if ident is not None:
            query += seq.osc99_query(ident)
        self.host.write(query + seq.DA1_QUERY)
        self.log.write("terminal_query", xtversion=True, osc99=ident is not None, da1=True)

        def too_late() -> None:
            if focus.active:
                focus.stop()
                controller.terminal_answer(None)

        self.loop.call_later(QUERY_WINDOW, too_late)

    # -- spawning ---------------------------------------------------------------------------
    def _spawn(self) -> LedChild:
        """The child in a new PTY under a session leader of ours (``leader.py``: job control)."""
        from cuewrap.relay.leader import spawn

        size = get_size(1, 0) or (24, 80)
        try:
            return spawn(self.argv[0], self.argv, self.env, size)
        except FileNotFoundError as exc:
            raise SessionError(f"{self.argv[0]}: command not found", 127) from exc
        except PermissionError as exc:
            raise SessionError(f"{self.argv[0]}: permission denied", 126) from exc
        except OSError as exc:
            raise SessionError(f"{self.argv[0]}: cannot start: {exc.strerror}", 126) from exc

    def _kill_child(self, child: LedChild) -> None:
        try:
            if child.isalive():
                child.terminate(force=True)
        except Exception:
            pass


# -- the cue side, built ----------------------------------------------------------------------
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
) -> Controller:
    """The cue side: every part the controller uses, built here (tmux asked here, blocking,
    while the child boots) and handed to it. Pi mode: the bridge server on ``channel`` and the
    screen gate; generic mode: the preset for ``command`` and the output watch; inside tmux:
    the tmux side and its reaper."""
    from cuewrap.controller import Controller, Parts
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.deliver.terminal import query_tmux
    from cuewrap.keystrokes import KeyWindow
    from cuewrap.publish import Publisher

    env = dict(env)
    to = _ToController()
    preset: Preset | None = None  # generic mode: what the program's signals mean
    preset_why = ""
    if not pi_mode:
        from cuewrap.presets import choose

        preset, preset_why = choose(command, settings.generic.preset)
    keys = KeyWindow(loop, to.keystroke)
    in_tmux = bool(env.get("TMUX"))
    # the one blocking question: tmux about this pane (not asked when nothing goes through it)
    info = query_tmux(env) if in_tmux and settings.notify.terminal != "off" else None
    app = preset.app if preset is not None else "Pi"
    delivery = Delivery(loop, settings, log, env, inject, undo_at_restore, app, info)
    bridge = _bridge(loop, log, channel, child_pid, to) if channel is not None else None
    choice = delivery.terminal_choice
    # the child's notifications the host terminal shows as they are (not through tmux)
    native = choice.protocol if not choice.tmux_passthrough else "off"
    # a channel to re-emit it: inside tmux there always is (a status-line message), and a
    # raw notification from a pane never gets through tmux anyway
    reemit = choice.protocol != "off" or delivery.desktop_on or in_tmux
    config = engine_config(settings, preset, reemit, frozenset({native}) - {"off"})
    publisher = Publisher(
        loop,
        env,
        log.write,
        log.error,
        program="pi" if pi_mode else os.path.basename(command),
        events_fd=events_fd,
    )
    where = publisher.where
    delivery.where = {"pid": where.pid, "tmux_pane": where.tmux_pane, "tty": where.tty}
    parts = Parts(delivery, publisher, keys, bridge)
    if preset is not None:
        from cuewrap.activity import OutputWatch

        parts.activity = OutputWatch(loop, settings.generic.quiet_after, to.child_fact)
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
        from cuewrap.screen.gate import ScreenGate

        parts.screen = ScreenGate(
            loop, *size, stronger_live=to.stronger_live, on_fact=to.fact, log=log
        )
    if in_tmux:
        side, parts.reaper = _tmux_side(loop, settings, log, env, delivery, to, inject)
        if side is not None:
            parts.tmux = side
            publisher.start_tmux(parts.reaper, lambda: side.view.window_id if side.view else None)
            side.refresh(lambda view: publisher.refresh())  # its window, once tmux says
    controller = to.controller = Controller(
        loop, settings, log, env, config=config, parts=parts, pi_mode=pi_mode
    )
    return controller


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
        signal=preset.signal if preset is not None else EngineConfig.signal,
        host_native=native,
        reemit=reemit,
    )


def _bridge(
    loop: Loop, log: DecisionLog, channel: Channel, child_pid: int | None, to: _ToController
) -> BridgeServer | None:
    """Pi's extension connects to this server, listening on the channel opened before the
    spawn; None (logged) when it cannot listen."""
    from cuewrap.bridge.server import BridgeServer

    server = BridgeServer(
        loop,
        child_pid=lambda: child_pid,
        on_fact=to.fact,
        on_reject=lambda reason: log.write("rejected", source="bridge", reason=reason),
        on_request=to.request,
    )
    try:
        server.start(channel)
    except OSError as exc:
        log.write("bridge_unavailable", error=str(exc))
        return None
    return server


def _tmux_side(
    loop: Loop,
    settings: Settings,
    log: DecisionLog,
    env: Mapping[str, str],
    delivery: Delivery,
    to: _ToController,
    inject: Callable[[bytes], None],
) -> tuple[TmuxSide | None, Reaper]:
    """Inside tmux: cuewrap.tmux watches who looks at Pi's pane and delivers through tmux;
    without it (None), presence and delivery work as outside tmux (focus reports, keys, the
    start-up passthrough check). The reaper ends its control client."""
    from cuewrap.deliver.terminal import TerminalNotifier, passthrough_choice
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.workers import Reaper

    reaper = Reaper(loop)
    choice = passthrough_choice(env, settings.notify.terminal, delivery.tmux_info)
    wrapped = TerminalNotifier(choice, bell=settings.notify.bell)
    bell = seq.BEL if settings.notify.bell else b""
    # the channel plan may send the desktop notification instead (one popup per cue)
    build = wrapped.build if delivery.plan.terminal else (lambda n: bell)
    side = TmuxSide(
        loop,
        env,
        on_presence=to.presence,
        inject=inject,
        is_eligible=to.eligible,
        build_osc=build,
        record=delivery.record,
        log=log.write,
        reaper=reaper,
    )
    started = side.start()
    log.write("tmux", state="started" if started else "not started", why=side.why)
    return (side if started else None), reaper
