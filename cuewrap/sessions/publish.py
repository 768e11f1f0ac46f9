"""Telling the world this session's state: the registry entry, the events file, the tmux window
option (docs/sessions.md). The controller hands over what one engine step changed
(``engine.glance.changes``); nothing here runs per output chunk.

- the registry entry (``registry.Entry``) is rewritten when the state, the presence, the mark
  or the session label changed, and removed at the end;
- the events file (``--events`` / ``CUEWRAP_EVENTS``) gets one JSON line per state change —
  ``state``, ``since``, ``pid``, and ``outcome`` at a run's end — and ``exited`` last;
- inside tmux, the window of the session's pane gets the user option ``@cuewrap_state``: the
  most urgent state of the cuewrap panes in it. One short tmux command per change, at most one
  in flight (a later change waits for it and is sent as the latest state), unset (or set to
  the other panes' state) at the end.

Every part fails open: a failure is logged, the session goes on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from cuewrap.engine.glance import Glance
from cuewrap.loop import Loop
from cuewrap.sessions.registry import Entry, own_directory, read_sessions
from cuewrap.states import EXITED, URGENCY
from cuewrap.tmux.command import socket_of
from cuewrap.tmux.control import run_tmux
from cuewrap.workers import Reaper

OPTION = "@cuewrap_state"
MUTED_OPTION = "@cuewrap_muted"  # "1" on the window of a muted session (docs/attention.md)
Log = Callable[..., None]


def ttyname(fd: int = 0) -> str | None:
    try:
        return os.ttyname(fd)
    except OSError:
        return None


def write_event(fd: int, state: str, since: float, **extra: Any) -> None:
    """One line of the events file (docs/scripting.md): ``state``, ``since``, ``pid``, then
    ``extra``. Raises OSError."""
    import json

    line: dict[str, Any] = {"state": state, "since": round(since, 3), "pid": os.getpid()}
    line.update(extra)
    os.write(fd, (json.dumps(line) + "\n").encode())


class Where:
    """Where this session runs: its pid, cuewrap's own terminal, its tmux pane."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.pid = os.getpid()
        self.tty = ttyname(0)
        inside = bool(env.get("TMUX")) and env.get("TMUX_PANE", "").startswith("%")
        self.tmux_pane: str | None = env["TMUX_PANE"] if inside else None
        self.tmux_socket: str | None = socket_of(env) if inside else None


class Publisher:
    def __init__(
        self,
        loop: Loop,
        env: Mapping[str, str],
        log: Log,
        on_error: Callable[[str, BaseException], None],
        *,
        program: str,
        events_fd: int | None = None,
    ) -> None:
        self.loop = loop
        self.env = env
        self.log = log
        self.on_error = on_error
        self.where = Where(env)
        self.program = program
        self.cwd = os.getcwd()
        self.events_fd = events_fd
        self.state = "starting"
        self.since = time.time()
        self.outcome: str | None = None
        self._details: tuple[str, str, str | None] = ("", "unknown", None)
        self.source = ""  # the source whose facts drive the cues (engine/status.py)
        self._written: tuple[object, ...] | None = None
        self.entry: Entry | None = None
        try:
            directory = own_directory(env)
            if directory is not None:
                self.entry = Entry(directory)
        except OSError as exc:
            on_error("registry", exc)
        if self.entry is None:
            log("registry", state="off", why="no private directory for the registry")
        # tmux: set by start_tmux once cuewrap's tmux side runs
        self._reaper: Reaper | None = None
        self._window: Callable[[], str | None] = lambda: None
        self._tmux_sent: str | None = None  # the value last sent
        self._tmux_busy = False
        self._tmux_again = False
        self._closed = False
        self._wait: dict[str, Any] | None = None  # the answerable wait (docs/answering.md)
        self._muted: tuple[bool, float | None] = (False, None)  # docs/attention.md
        self.log("session_state", state=self.state, outcome=None)
        self._event(Glance(self.state))
        self._write()

    # -- tmux -----------------------------------------------------------------------------
    def start_tmux(self, reaper: Reaper, window: Callable[[], str | None]) -> None:
        """Inside tmux (its side started): the window option follows from now on."""
        if self.where.tmux_pane is None:
            return
        self._reaper = reaper
        self._window = window
        self._send_tmux()

    @property
    def busy(self) -> bool:
        """A tmux command is in flight (the end waits for it, so the last word is the unset)."""
        return self._tmux_busy

    def _window_state(self, own: str | None) -> str | None:
        """The most urgent state of the cuewrap panes in this session's window."""
        states = [own] if own is not None else []
        window = self._window()
        if window is not None:
            try:
                for rec in read_sessions(self.env):
                    if (
                        rec.get("pid") != self.where.pid
                        and rec.get("tmux_socket") == self.where.tmux_socket
                        and rec.get("tmux_window") == window
                        and rec.get("state") in URGENCY
                    ):
                        states.append(rec["state"])
            except OSError as exc:
                self.on_error("registry.read", exc)
        return min(states, key=URGENCY.__getitem__) if states else None

    def _send_tmux(self) -> None:
        if self._reaper is None or self._closed:
            return
        if self._tmux_busy:
            self._tmux_again = True
            return
        value = self._window_state(self.state if self.state in URGENCY else None)
        if value == self._tmux_sent:
            return
        pane = self.where.tmux_pane
        assert pane is not None
        if value is None:
            args = ["set-option", "-w", "-u", "-t", pane, OPTION]
        else:
            args = ["set-option", "-w", "-t", pane, OPTION, value]
        self._tmux_busy = True
        self._tmux_again = False
        if run_tmux(self.loop, self._reaper, self.env, args, lambda st, out: self._sent(value, st)):
            return
        self._tmux_busy = False
        self.log("tmux_option", state="failed", why="tmux could not be started")

    def _sent(self, value: str | None, status: int | None) -> None:
        self._tmux_busy = False
        if status == 0:
            self._tmux_sent = value
        else:
            self.log("tmux_option", state="failed", status=status)
        if self._tmux_again:
            self._send_tmux()

    # -- changes --------------------------------------------------------------------------
    def refresh(self) -> None:
        """tmux said where the pane is: the entry and the window option again."""
        self._write()
        self._send_tmux()

    def publish(
        self, glances: list[Glance], session: str, presence: str, mark: str | None, source: str
    ) -> None:
        changed = False
        self.source = source
        for g in glances:
            if g.state == self.state and g.outcome is None:
                continue
            self.state, self.outcome, self.since = g.state, g.outcome, time.time()
            self.log("session_state", state=g.state, outcome=g.outcome)
            self._event(g)
            changed = True
        self._details = (session, presence, mark)
        if self.state == EXITED:
            if self.entry is not None:
                self.entry.remove()  # gone as the session ends (close says the rest)
        else:
            self._write()
        if changed:
            self._send_tmux()

    def set_wait(self, wait: dict[str, Any] | None) -> None:
        """The answerable wait now (docs/answering.md), or None: into the entry."""
        self._wait = wait
        self._write()

    def set_muted(self, muted: bool, until: float | None) -> None:
        """Muted (until epoch seconds ``until``, or None: until unmuted) or not: into the entry
        and, when it changed, one line in the events file (docs/attention.md)."""
        if (muted, until) == self._muted:
            return
        self._muted = (muted, until)
        self.log("session_muted", muted=muted, muted_until=until)
        self._event(Glance(self.state), muting=True)
        self._write()
        self._tmux_muted(muted)

    def _tmux_muted(self, muted: bool) -> None:
        """Inside tmux: the window option ``@cuewrap_muted`` ("1") while muted, unset after."""
        pane = self.where.tmux_pane
        if self._reaper is None or pane is None or self._closed:
            return
        args = ["set-option", "-w", "-t", pane, MUTED_OPTION]
        args = [*args, "1"] if muted else [*args[:2], "-u", *args[2:]]
        if not run_tmux(self.loop, self._reaper, self.env, args, lambda st, out: None):
            self.log("tmux_option", state="failed", why="tmux could not be started")

    def _fields(self) -> dict[str, Any]:
        session, presence, mark = self._details
        return {
            "program": self.program,
            "cwd": self.cwd,
            "session": session or os.path.basename(self.cwd),
            "state": self.state,
            "since": round(self.since, 3),
            "outcome": self.outcome,
            "source": self.source,
            "presence": presence,
            "mark": mark,
            "tty": self.where.tty,
            "tmux_pane": self.where.tmux_pane,
            "tmux_socket": self.where.tmux_socket,
            "tmux_window": self._window(),
            "wait": self._wait,
            "muted": self._muted[0],
            "muted_until": self._muted[1],
        }

    def _write(self) -> None:
        if self.entry is None or self._closed:
            return
        fields = self._fields()
        key = tuple(fields.values())
        if key == self._written:
            return
        try:
            self.entry.write(fields)
            self._written = key
        except OSError as exc:
            self.on_error("registry.write", exc)

    def _event(self, g: Glance, muting: bool = False) -> None:
        if self.events_fd is None:
            return
        extra: dict[str, Any] = {}
        if self.source:
            extra["source"] = self.source
        if g.outcome is not None:
            extra["outcome"] = g.outcome
        if self._muted[0] or muting:  # while muted, and the unmute's own line
            extra["muted"], extra["muted_until"] = self._muted
        try:
            write_event(self.events_fd, g.state, self.since, **extra)
        except OSError as exc:
            self.on_error("events.write", exc)

    # -- the end --------------------------------------------------------------------------
    def close(self) -> None:
        """The session ends: ``exited`` said, the entry removed, the window option unset or
        left to the other panes of the window. Safe to call twice."""
        if self._closed:
            return
        if self.state != EXITED:
            self.state, self.outcome, self.since = EXITED, None, time.time()
            self.log("session_state", state=EXITED, outcome=None)
            self._event(Glance(EXITED))
        self._closed = True
        if self.entry is not None:
            self.entry.remove()
        if self._reaper is not None and (self._tmux_sent is not None or self._tmux_busy):
            self._unset_tmux()  # also after a set still in flight (it was sent first)
        elif self._reaper is not None and self._muted[0]:
            self._unset_tmux(muted_only=True)
        if self.events_fd is not None:
            try:
                os.close(self.events_fd)
            except OSError:
                pass
            self.events_fd = None

    def withdraw(self) -> None:
        """The cue side's build failed after this was made: the entry and the window option
        go, but the session runs on (no ``exited`` is said) and its events file stays the
        session's (it closes it)."""
        self.detach()
        self.close()

    def detach(self) -> None:
        """The session runs on without its cue side: its events file stays the session's
        (nothing more is written to it here) and no ``exited`` is said; :meth:`close` then
        removes the entry and the window option only."""
        self.events_fd = None
        self.state = EXITED  # said by nobody: close() says it only when not yet

    def _unset_tmux(self, muted_only: bool = False) -> None:
        """At the end, off the loop (it is ending): one short tmux command, waited for."""
        import subprocess

        pane = self.where.tmux_pane
        assert pane is not None and self.where.tmux_socket
        value = self._window_state(None)
        opt = ["-u", "-t", pane, OPTION] if value is None else ["-t", pane, OPTION, value]
        env = {k: v for k, v in self.env.items() if k not in ("TMUX", "TMUX_PANE")}
        argv = ["tmux", "-S", self.where.tmux_socket, "set-option", "-w", *opt]
        if self._muted[0]:  # and the muted mark (one tmux command line)
            muted = ["set-option", "-w", "-u", "-t", pane, MUTED_OPTION]
            argv = [*argv, ";", *muted] if not muted_only else [*argv[:3], *muted]
        try:
            subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=2.0, check=False)  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            self.on_error("tmux_option.unset", exc)
