"""One cuewrap session: spawn the child in a PTY, relay, and tear everything down.

This is the composition root: everything a session has is composed here, once, in order, and
each part gets what it calls in its constructor. Settings, the decision log and the loop (one
``Context``); the session's ``Mode`` (``wiring/mode.py``) and the test hook's ``Faults``
(``wiring/_faults.py``), each decided once here; the bridge channel and the child's
environment before the spawn; then, while the child boots, the host terminal's modes and its
start-up query (``wiring/hostterm.py``), the byte path's decisions (``relay/decisions.py``),
the byte filters (``wiring/bytepath.py``) and the ``Relay``, which
makes its cue side (``wiring/pending.py``) with its own controls; that builds the
``Controller`` and its parts (``cueside.build_controller``) once the child has drawn its first
frame (not competing with the child's boot for the CPU). Nothing is assigned to a part after
it is built.

``Session.run`` is the exit-path owner: what the session takes (the log, the events file, the
child, the terminal's raw mode and modes, the controller) is held in one ``Held``
(``wiring/startup.py``) and given back whatever happens (child exit, child killed, a signal to
cuewrap, an exception inside cuewrap): the host terminal first.
"""

from __future__ import annotations

import os
import time

from cuewrap.context import Context
from cuewrap.decisionlog import DecisionLog, LogFileError, open_append
from cuewrap.host import HostTerminal, get_size, guard_holds
from cuewrap.loop import Loop
from cuewrap.records import TYPE_CHECKING
from cuewrap.term import sequences as seq
from cuewrap.wiring.mode import mode_of
from cuewrap.wiring.startup import Held

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuewrap.args import Args
    from cuewrap.bridge.channel import Channel
    from cuewrap.relay.decisions import OutputDecisions
    from cuewrap.relay.inject import Injector
    from cuewrap.relay.leader import LedChild
    from cuewrap.relay.relay import CueSide, Relay, RelayControls
    from cuewrap.wiring._faults import Faults
    from cuewrap.wiring.controller import Controller
    from cuewrap.wiring.cueside import Edge, Plan
    from cuewrap.wiring.pending import PendingCueSide


FINISH_GRACE = 3.0  # seconds to let a last desktop notification (the exited cue) complete


class SessionError(Exception):
    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class Session:
    def __init__(
        self, args: Args, path: str, start_done: Callable[[], None] = lambda: None
    ) -> None:
        from cuewrap.config import ConfigError, check_commands, load_settings

        self.args = args
        # the start-up is over: the garbage collector may run again (cli.run paused it)
        self._start_done = start_done
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
        # which session this is (Pi with or without its bridge, generic with a preset):
        # decided once, here, and handed on
        self.mode = mode_of(
            args.command, no_bridge=args.no_bridge, preset=self.settings.generic.preset
        )
        # the test hook's faults, read once: after the spawn (nothing before it fails on purpose)
        self.faults: Faults
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
        self.ctx = Context(self.loop, self.settings, self.log, self.env)
        self.argv = [path, *args.command[1:]]
        self.controller: Controller | None = None  # the cue side: bridge, engine, effectors
        self.relay: Relay | None = None
        self.bridge_injected = False  # Pi's argv has the extension (its channel is open)
        self._degraded = False  # the cue side failed: the events file said "degraded"

    def run(self) -> int:
        # what the session holds, given back last taken first on every way out: the log, the
        # events file (while no controller has it), the controller, the child, the terminal
        with Held() as held:
            held.callback(self.log.close)
            held.callback(self._close_events)
            held.callback(self._finish_controller)
            status = self._run(held)
        return status

    def _run(self, held: Held) -> int:
        host = self.host
        child: LedChild | None = None
        try:
            channel = self._prepare_child()
            held.callback(self._supply())
            if self.guard and self.mode.answers_child:
                self._supply_settings(held)
            child = self._spawn()
            held.callback(child.close)
            from cuewrap.wiring._faults import faults_of

            self.faults = faults_of(self.env)
            # the relay is set up while the child boots; the cue side after its first frame
            if channel is not None:
                self._remove_stale_channels()
            from cuewrap.relay.inject import Injector
            from cuewrap.relay.relay import exit_status
            from cuewrap.wiring import hostterm

            injector = Injector(self.loop, host.write, self._injection_waited)
            held.callback(self._give_back_terminal)
            host.enter_raw()
            if self.guard:
                host.enable(seq.TITLE_PUSH, seq.TITLE_POP)
                hostterm.konsole_title(host, self.env, self.settings, self.log)
                host.enable(seq.FOCUS_REPORTING_ON, seq.FOCUS_REPORTING_OFF)
            relay = self._relay(child, injector, channel)
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

    def _relay(self, child: LedChild, injector: Injector, channel: Channel | None) -> Relay:
        """The relay between the terminal and the child, with its cue side (none without
        cues); the host terminal asked what it is before any output is relayed."""
        from cuewrap.relay.relay import Relay
        from cuewrap.wiring import hostterm
        from cuewrap.wiring.bytepath import BytePath

        parts = BytePath(self.settings, self.mode, self.faults, self.guard)
        decisions = parts.decisions(self.loop.clock)
        ask = hostterm.asks(self.env, self.guard, self.faults)
        query_id = hostterm.osc99_query_id(self.env)
        focus, tracker = parts.filters(decisions, ask=ask, query_id=query_id)
        cues = self._cue_side(channel, child.pid, injector, decisions) if self.guard else None
        path = parts.output_path(
            tracker,
            decisions,
            injected=self.bridge_injected,
            owns_focus=focus is not None,
            report=self.log.error,
        )
        relay = self.relay = Relay(
            self.loop,
            child,
            self.host,
            focus=focus,
            path=path,
            injector=injector,
            cues=cues,
            on_error=self.log.error,
        )
        if relay.cues is not None and focus is not None and ask:
            hostterm.query(self.host, self.loop, self.log, focus, relay.cues, query_id)
        if relay.cues is None:  # no cue side to build: the start-up is over
            self._start_done()
        return relay

    def _give_back_terminal(self) -> None:
        """The terminal as the user had it: the modes the child left on, cuewrap's, termios."""
        leftover = (
            self.relay.reactions.restore_sequence(leaving=True) if self.relay is not None else b""
        )
        self.host.restore(leftover if self.host.stdout_tty else b"")

    def _finish_controller(self) -> None:
        if self.controller is not None:
            self.controller.finish(FINISH_GRACE)

    def _close_events(self) -> None:
        if self.events_fd is not None:  # no controller took it (no cues: no states)
            if self._degraded:  # it said "degraded": the last word is still "exited"
                from cuewrap.states import EXITED

                self._event(EXITED)
            os.close(self.events_fd)
            self.events_fd = None

    # -- the cue side -----------------------------------------------------------------------
    def _prepare_child(self) -> Channel | None:
        """What the child's command line and environment need: cheap, before the spawn."""
        if not self.guard:
            why = "stdin/stdout not a terminal, or TERM unset or dumb"
            self.log.write("guard", cues=False, why=why)
            return None
        if not self.mode.pi:
            return None
        # Pi's own status reports; a user who set PI_PROGRAM_STATUS (e.g. =0) keeps their choice
        self.env.setdefault("PI_PROGRAM_STATUS", "1")
        if not self.mode.bridge:
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
        self.bridge_injected = True
        return channel

    def _supply(self) -> Callable[[], None]:
        """What the program is given for the session so that it says more (generic mode, cues
        on: ``generic/supply.py``), and what takes it back at exit."""
        preset = self.mode.preset
        if preset is None or not self.guard or not self.settings.cues.enabled:
            return lambda: None
        from cuewrap.generic.supply import supply

        try:
            return supply(preset.name, self.env, self.log.write)
        except Exception as exc:  # fail open: the program runs as it would without cuewrap
            self.log.error("supply", exc)
            return lambda: None

    def _supply_settings(self, held: Held) -> None:
        """opencode: its notifications on for this session through a settings file of
        cuewrap's own, where nothing of the user's says otherwise (``generic/opencode.py``);
        the file goes at the end. Fails open: opencode then runs as the user set it."""
        import shutil

        from cuewrap.generic import opencode

        try:
            folder, why = opencode.supply(self.env)
        except OSError as exc:
            self.log.write("supplied", setting="attention", state="failed", why=str(exc))
            return
        self.log.write("supplied", setting="attention", state="on" if folder else "none", why=why)
        if folder is not None:
            held.callback(lambda: shutil.rmtree(folder, ignore_errors=True))
            self.env[opencode.ENV] = os.path.join(folder, "tui.json")

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

    def _cue_side(
        self,
        channel: Channel | None,
        child_pid: int,
        injector: Injector,
        decisions: OutputDecisions | None,
    ) -> Callable[[RelayControls], CueSide]:
        """What makes the relay's cue side, given the relay's controls: the stand-in that
        builds the cue side once the child has drawn its first frame
        (``cuewrap/wiring/pending.py``)."""
        from cuewrap.wiring.cueside import Edge, Plan
        from cuewrap.wiring.pending import PendingCueSide

        plan = Plan(
            self.mode,
            faults=self.faults,
            channel=channel,
            child_pid=child_pid,
            events_fd=self.events_fd,
            size=get_size(1, 0) or (24, 80),
        )

        def make(relay: RelayControls) -> CueSide:
            def build(cues: PendingCueSide) -> Controller | None:
                edge = Edge(injector.inject, self.host.undo_at_restore, relay, cues, decisions)
                return self._start_controller(plan, edge)

            cls = PendingCueSide
            if self.faults.raises("sink"):
                from cuewrap.wiring._raising import RaisingCueSide as cls  # a test of failing open

            return cls(self.loop, build, self.log.error, frames=self.mode.pi)

        return make

    def _start_controller(self, plan: Plan, edge: Edge) -> Controller | None:
        from cuewrap.states import DEGRADED

        try:
            from cuewrap.wiring.cueside import build_controller

            self.controller = build_controller(self.ctx, plan, edge)
            self.faults.before("wired")
            self.events_fd = None  # the controller's now
        except Exception as exc:  # fail open: Pi runs as a plain passthrough
            self.log.error("controller", exc)
            if self.controller is not None:  # built, then its wiring failed: it closes all
                try:  # but the session goes on: no "exited", the events file stays its own
                    self.controller.publisher.detach()
                    self.controller.close()
                except Exception as close_exc:
                    self.log.error("controller.close", close_exc)
            self.controller = None
            if plan.channel is not None:
                plan.channel.close()
            self._event(DEGRADED)
        finally:  # the start-up is over
            self._start_done()
        return self.controller

    def _event(self, state: str) -> None:
        """A line of the events file while the session holds it (its cue side failed:
        ``degraded`` then, ``exited`` at the end; docs/scripting.md)."""
        if self.events_fd is None:
            return
        from cuewrap.sessions.publish import write_event
        from cuewrap.states import DEGRADED

        if state == DEGRADED:
            self._degraded = True
        try:
            write_event(self.events_fd, state, time.time())
        except OSError as exc:
            self.log.error("events.write", exc)

    # -- spawning ---------------------------------------------------------------------------
    def _spawn(self) -> LedChild:
        """The child in a new PTY under a session leader of ours (relay/leader.py: job control)."""
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
