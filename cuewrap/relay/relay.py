"""The relay: one select loop between the host terminal and the child's PTY.

Bytes pass unchanged in both directions, except the two things cuewrap owns:
- focus reports (``CSI I`` / ``CSI O``) are taken out of the input and handed to the child only
  while the child itself enabled mode 1004, each report in ONE write
  (docs/pi-facts.md#focus-reports: a split ``ESC [O`` reads as the Escape key and aborts Pi's run);
- OSC 7501 status reports are consumed unless the host terminal itself answered a Program
  Status query (cuewrap's own at start, in both modes); where they passed, a ``clear`` ends
  them when cuewrap gives the terminal back;
- in generic mode the child's Program Status query (``ESC ] 7501 ; ? ST``) is taken out of the
  output and answered on the child's input, before the host terminal can answer what follows it
  (docs/generic-mode.md).

The relay does the I/O: it reads, writes, runs the loop and handles the signals. What happens
to the output between the read and the write is the output path's (``relay/outputpath.py``,
sans I/O: the tracker, provenance, Pi's own writes, the fallback once the tracker failed): the
relay hands it each chunk and writes what it gives back. Every output chunk and every new size
also go to the cue side's output tap (``cues.tap``: the screen source's gate, the output watch),
read afresh at each chunk, after the chunk was written. What a chunk or a read of the input sets
off beyond that (the events for the cue side, the answers for the child, the bytes for the
injector, the fallback swapped in) is the ``Reactions``' (``relay/reactions.py``), which are
also the relay's controls (``RelayControls``), handed to the factory that makes the cue side.
The cue side never calls into the scan: what the tracker decides in the middle of one it decides
from the rules the cue side handed down (``relay/decisions.py``). cuewrap's own bytes (title
marks, notifications) wait in the ``Injector``; the relay tells it after each chunk whether the
output stream is between escape sequences and UTF-8 characters, the point where they may be
written. The child's input is written by ``ChildInput`` (``relay/childinput.py``); the output's
pace while the child streams (about one read per screen frame) is ``Gathering``'s
(``relay/gathering.py``).

Collaborators (the focus filter, the output path, the injector) are given at construction; the
parts above are made by the relay, so nothing is assigned to it afterwards (``wiring/session.py``
composes them).

Signals arrive through ``signal.set_wakeup_fd``; there is no periodic timer (the gathering
timer runs only while output streams), so an idle relay blocks in ``select`` and uses no CPU.
Any failure outside the byte path is reported and the relay carries on; a failure of the
filters themselves turns them off (plain passthrough).
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable
from math import inf
from typing import TYPE_CHECKING, Protocol

from cuewrap.host import HostTerminal, get_size
from cuewrap.loop import Loop, Timer
from cuewrap.relay.childinput import ChildInput
from cuewrap.relay.events import ChildExited
from cuewrap.relay.gathering import GATHER_FULL, GATHER_GAP, GATHER_TARGET, Gathering
from cuewrap.relay.inject import Injector
from cuewrap.relay.inputpath import InputPath
from cuewrap.relay.jobs import JobControl
from cuewrap.relay.leader import ChildEvent
from cuewrap.relay.reactions import CueSide as CueSide  # named here too, as before
from cuewrap.relay.reactions import OutputTap as OutputTap
from cuewrap.relay.reactions import Reactions
from cuewrap.relay.reactions import RelayControls as RelayControls
from cuewrap.relay.signals import TERM_SIGNALS, SignalPipe
from cuewrap.term.focus import FocusFilter

if TYPE_CHECKING:
    from cuewrap.relay.outputpath import Path
READ_SIZE = 65536
BATCH_AFTER = 4000  # a read this large (Linux's PTY hands out 4095 at most) may have more behind
BATCH_SIZE = READ_SIZE  # relay up to this much per wake-up while output streams
FOCUS_PREFIX_HOLD = 0.005  # seconds a partial ESC / ESC [ is held (Pi's ESC timeout is 10 ms)
ANSWER_HOLD = 0.5  # seconds more a partial answer to cuewrap's start-up query is held
OUTPUT_HOLD = 0.02  # seconds a partial OSC 7501 prefix at a chunk end may be held
FATAL_GRACE = 3.0  # after a terminating signal, kill the child if it lingers this long


class ChildProcess(Protocol):
    """The child in its PTY (``leader.LedChild``): the only reaper of the child is its leader,
    whose reports arrive on ``reports``."""

    @property
    def fd(self) -> int: ...
    @property
    def pid(self) -> int: ...
    @property
    def reports(self) -> int: ...
    @property
    def exitstatus(self) -> int | None: ...
    @property
    def signalstatus(self) -> int | None: ...
    def isalive(self) -> bool: ...
    def events(self) -> list[ChildEvent]: ...
    def setwinsize(self, rows: int, cols: int) -> None: ...
    def signal_group(self, sig: int) -> None: ...
    def terminate(self, force: bool = False) -> bool: ...


class Relay:
    def __init__(
        self,
        loop: Loop,
        child: ChildProcess,
        host: HostTerminal,
        *,
        focus: FocusFilter | None,
        path: Path,
        injector: Injector,
        cues: Callable[[RelayControls], CueSide] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        """``path``: what happens to the output between the read and the write
        (``relay/outputpath.py``: the tracker, provenance, the fallback once it failed).
        ``cues``: makes the cue side, given the relay's controls (``Reactions``; None: no cue
        side)."""
        self.loop = loop
        self.child = child
        self.host = host
        self.master_fd: int = child.fd
        self.injector = injector
        # the host's input on its way to the child, and the child's PTY input it is written to
        self.input = InputPath(focus)
        self.child_input = ChildInput(loop, child.fd, self.input, (host.stdin_fd, self._on_stdin))
        self.gathering = Gathering(loop)  # the output's pace while the child streams
        self.reactions = Reactions(
            loop, host, path, injector, self.child_input, self.gathering, cues=cues, report=on_error
        )
        self.cues = self.reactions.cues  # read at each chunk for its output tap
        self._tap_ok = True  # the cue side's output tap has not failed
        self._focus_timer: Timer | None = None
        self._output_timer: Timer | None = None
        self._clock = loop.clock
        self._stdin_open = True
        self._master_open = True
        self._exit: ChildExited | None = None
        self._term_count = 0
        self.fatal_signal: int | None = None  # the first terminating signal cuewrap received
        self._signals = SignalPipe(
            (signal.SIGWINCH, signal.SIGCHLD, signal.SIGTSTP, signal.SIGCONT, *TERM_SIGNALS)
        )
        self.jobs = JobControl(
            loop, host, child, self, sequences=self.reactions, on_change=self.reactions.job_change
        )

    def run(self) -> ChildExited:
        """Relay until the child is gone and its output drained; returns its exit."""
        with self._signals as sig_fd:  # the handlers and the wake-up fd put back on exit
            try:
                os.set_blocking(self.master_fd, False)
                self.loop.on_deadline = self._gathered  # the loop's one deadline is the relay's
                self.loop.add_reader(self.master_fd, self._on_master, guarded=False)
                if self._stdin_open:
                    self.loop.add_reader(self.host.stdin_fd, self._on_stdin, guarded=False)
                self.loop.add_reader(sig_fd, self._on_signal, guarded=False)
                self.loop.add_reader(self.child.reports, self._on_reports, guarded=False)
                self._reap()  # the child may already be gone
                while self._exit is None or self._master_open:
                    self.loop.run_once()
                return self._exit
            finally:
                self.loop.remove_reader(self.host.stdin_fd)  # what is typed now is the shell's
                for timer in (self._focus_timer, self._output_timer):
                    if timer is not None:
                        timer.cancel()
                self.loop.deadline = inf
                self.loop.on_deadline = None
                self.injector.close()
                self.jobs.close()
                self.loop.remove_reader(self.child.reports)
                self.loop.remove_reader(sig_fd)

    # -- input: host -> child --------------------------------------------------------------
    def _on_stdin(self) -> None:
        try:
            data = os.read(self.host.stdin_fd, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._stdin_eof()
            return
        plain = self.child_input.typed(data)  # the usual keystroke: written first
        if self.gathering.typed(self._clock()) and self._master_open:  # its echo goes at once
            self.loop.add_reader(self.master_fd, self._on_master, guarded=False)
        if self._focus_timer is not None:
            self._focus_timer.cancel()
            self._focus_timer = None
        if plain:
            self.reactions.typed()
            return
        self.reactions.keys(data)
        if self.input.pending:
            self._focus_timer = self.loop.call_later(FOCUS_PREFIX_HOLD, self._flush_focus)

    def _flush_focus(self) -> None:
        self._focus_timer = None
        self.reactions.perform(self.input.flush(self.reactions.path))
        if self.input.pending:  # the terminal's answer to cuewrap's query, split: wait
            self._focus_timer = self.loop.call_later(ANSWER_HOLD, self._flush_answer)

    def _flush_answer(self) -> None:
        """A partial answer of the terminal that did not complete in time: it was data."""
        self._focus_timer = None
        self.reactions.perform(self.input.flush_answer(self.reactions.path))

    def _stdin_eof(self) -> None:
        self.loop.remove_reader(self.host.stdin_fd)
        self._stdin_open = False
        self.child_input.stdin_ended()
        if self.input.pending:
            self._flush_focus()
        if not self.host.stdin_tty:  # a pipe or /dev/null ended
            self.child_input.eof()

    # -- output: child -> host -------------------------------------------------------------
    def _read_master(self) -> bytes | None:
        """One read of the child's output: the bytes; ``b""`` at its end (EOF, or EIO: the
        child's side is closed; another error is reported); None when nothing is there now."""
        try:
            return os.read(self.master_fd, READ_SIZE)
        except OSError as exc:
            return self._read_failed(exc)

    def _read_failed(self, exc: OSError) -> bytes | None:
        """What a failed read of the child's output means (see ``_read_master``)."""
        if isinstance(exc, (BlockingIOError, InterruptedError)):
            return None
        if exc.errno != errno.EIO:
            self.reactions.report("read_master", exc)
        return b""

    def _on_master(self) -> None:
        data = self._read_master()
        if data is None:
            return
        if not data:
            self._master_eof()
            return
        pace = self.gathering
        elapsed = self._clock() - pace.last_out  # the time the child had to write this
        size, eof = self._relay_stream(data)
        pace.last_out = now = self._clock()  # after the write: it may have waited for the host
        if eof:
            self._master_eof()
        elif GATHER_GAP <= elapsed < pace.time and now >= pace.echo_until and self._master_open:
            # the child streams: let its output gather in the PTY for up to a screen frame's
            # time instead of waking per write (a screen shows one frame per refresh anyway)
            wait = pace.wait(size, elapsed)
            if wait:
                self.loop.remove_reader(self.master_fd)
                pace.start(now, wait)

    def _gathered(self) -> None:
        """The gathering time is over (the loop's deadline): relay what came meanwhile; gather
        again while the stream goes on, else watch the master again (the next output after a
        pause, and a flood, are relayed as they come).

        While Pi streams this runs once per frame, on cold caches
        (docs/architecture.md#an-output-chunk): the usual case (a frame that fits one read, the
        stream going on) takes one read, ``_output`` and two attribute stores for the next
        deadline, and nothing else."""
        pace = self.gathering
        pace.on = False
        if not self._master_open:
            return
        try:
            data = os.read(self.master_fd, READ_SIZE)
        except OSError as exc:
            read = self._read_failed(exc)
            if read is None:  # the stream paused: the next output is relayed as it comes
                self.loop.add_reader(self.master_fd, self._on_master, guarded=False)
            else:
                self._master_eof()
            return
        eof = not data
        if len(data) >= BATCH_AFTER:
            data, eof = self._read_rest(data)
        now = self._clock()
        elapsed = now - pace.last_out
        if data:
            self._output(data)
            pace.last_out = now = self._clock()
        if eof:
            self._master_eof()
            return
        if not self._master_open:
            return
        if now >= pace.echo_until:
            size = len(data)
            gather = pace.time
            if size < GATHER_FULL and size * gather <= GATHER_TARGET * elapsed:
                wait = gather  # the usual case, without the call (see Gathering.wait)
            else:
                wait = pace.wait(size, elapsed)
            if wait:
                pace.on = True  # Gathering.start, inline
                self.loop.deadline = now + wait
                return
        self.loop.add_reader(self.master_fd, self._on_master, guarded=False)

    def _relay_stream(self, first: bytes) -> tuple[int, bool]:
        """Relay ``first`` and, when it filled a read (output is streaming), what else is
        already there, up to ``BATCH_SIZE`` in this wake-up: the select is paid once per 64 KiB
        instead of once per PTY buffer. Each read is written before the next is taken, so the
        child refills its PTY while the host's side drains (a 64 KiB batch written at once
        stopped both in turn: cat through cuewrap ran at ~0.7x a minimal relay's speed).
        Returns the bytes relayed and whether the child's output ended. (A gathering's output
        is read whole and written at once, ``_read_rest``: it is no more than the PTY held.)"""
        self._output(first)
        total = len(first)
        if total < BATCH_AFTER:
            return total, False
        while total < BATCH_SIZE:
            more = self._read_master()
            if more is None:
                break
            if not more:
                return total, True
            self._output(more)
            total += len(more)
        return total, False

    def _read_rest(self, first: bytes) -> tuple[bytes, bool]:
        """After a gathering: ``first`` and what else the PTY holds, as one chunk (one scan
        and one write for all of it, up to ``BATCH_SIZE``), and whether the child's output
        ended. A read that did not fill (less than ``BATCH_AFTER``) found the PTY empty: the
        next read would only say so (a system call per gathering saved; what comes meanwhile
        is there at the next one)."""
        parts = [first]
        total = len(first)
        while total < BATCH_SIZE:
            more = self._read_master()
            if more is None:
                break
            if not more:
                return b"".join(parts), True
            parts.append(more)
            total += len(more)
            if len(more) < BATCH_AFTER:
                break
        return b"".join(parts), False

    def _output(self, data: bytes) -> None:
        """Relay one chunk: the output path's scan, the host write, the output tap, then what
        the chunk set off (``Reactions.after``) and what the injector holds. Once per wake-up
        while the child streams, on cold caches: the usual chunk (no events, nothing held,
        nothing injected) touches only what it must."""
        if self._output_timer is not None:
            self._output_timer.cancel()
            self._output_timer = None
        reactions = self.reactions
        path = reactions.path
        try:
            out, events, safe = path.feed(data)
        except Exception as exc:
            path = reactions.failed(exc)
            out, events, safe = path.feed(data)
        host = self.host
        if out and not host.out_dead:
            # host.write's usual case, inline: the whole chunk in one write; anything else
            # (a short write, EAGAIN, an error) goes through host.write for the rest
            try:
                n = os.write(host.stdout_fd, out)
            except OSError:
                n = 0
            if n != len(out):
                host.write(out[n:] if n else out)
        injector = self.injector
        injector.safe = safe
        cues = self.cues
        if cues is not None and self._tap_ok:
            tap = cues.tap
            if tap is not None:
                seen = path.seen
                try:
                    tap.feed(data if seen is None else seen)
                except Exception as exc:
                    self._tap_ok = False
                    reactions.report("screen", exc)
        if events:
            reactions.after(events)
        if safe and injector.queue:
            injector.flush()
        if path.held:
            self._output_timer = self.loop.call_later(OUTPUT_HOLD, self._flush_output)

    def _flush_output(self) -> None:
        self._output_timer = None
        path = self.reactions.path
        self.host.write(path.flush())
        self.injector.set_safe(path.safe)

    def _master_eof(self) -> None:
        self.gathering.end()
        if self._output_timer is not None:
            self._output_timer.cancel()
            self._output_timer = None
        out, events, safe = self.reactions.path.end()
        self.host.write(out)
        self.injector.set_safe(safe)
        if events:
            self.reactions.after(events)
        self.injector.flush()
        self._close_master()
        self._reap()

    def _close_master(self) -> None:
        """The child's output ended: the master is neither read nor written any more."""
        self.gathering.end()
        self.loop.remove_reader(self.master_fd)
        self.child_input.close()
        self._master_open = False

    def drain_output(self, closing: bool = False) -> None:
        """Relay what the child wrote so far, without waiting: before it stopped (then what
        the output path holds goes too), or, ``closing``, after it exited (nothing is waited
        for from its grandchildren: once the PTY is empty the master is closed)."""
        while self._master_open:
            data = self._read_master()
            if data is None:
                if closing:
                    self._close_master()
                    return
                break
            if not data:
                self._master_eof()
                return
            self._output(data)
        if not closing and self.reactions.path.held:
            self._flush_output()

    # -- signals and exit -------------------------------------------------------------------
    def _on_signal(self) -> None:
        for signum in self._signals.read():
            if signum == signal.SIGWINCH:
                self.resize()
            elif signum == signal.SIGCHLD:
                self._reap()
            elif signum == signal.SIGTSTP:
                self.jobs.tstp()
            elif signum == signal.SIGCONT:
                self.jobs.cont()
            elif signum in TERM_SIGNALS:
                self._forward(signum)

    def resize(self) -> None:
        size = get_size(self.host.stdout_fd, self.host.stdin_fd)
        if size is not None:
            try:
                self.child.setwinsize(*size)
            except OSError:
                pass
            tap = self.cues.tap if self.cues is not None and self._tap_ok else None
            if tap is not None:
                try:
                    tap.resize(rows=size[0], cols=size[1])
                except Exception as exc:
                    self._tap_ok = False
                    self.reactions.report("screen", exc)

    def _forward(self, signum: int) -> None:
        """A terminating signal: tell the child (the same signal; SIGKILL at the third), keep
        relaying while it exits, SIGKILL it after FATAL_GRACE. cuewrap then ends 128+N."""
        self._term_count += 1
        if self.fatal_signal is None:
            self.fatal_signal = signum
            self.loop.call_later(FATAL_GRACE, lambda: self._kill(signal.SIGKILL))
        if signum == signal.SIGHUP:
            self.host.out_dead = True  # the host terminal is gone
        self._kill(signal.SIGKILL if self._term_count >= 3 else signum)

    def _on_reports(self) -> None:
        """The child's leader reported a stop, a continue or the exit (jobs.py decides)."""
        self._reap()

    def _kill(self, signum: int) -> None:
        if self._exit is None:
            try:
                os.kill(self.child.pid, signum)
            except ProcessLookupError:
                pass

    def _reap(self) -> None:
        if self._exit is not None:
            return
        try:
            for event in self.child.events():  # stops and continues first, in order
                self.jobs.child_event(event)
            alive = self.child.isalive()
        except Exception:
            alive = False
        if alive:
            return
        self._exit = ChildExited(self.child.exitstatus, self.child.signalstatus)
        self.reactions.child_exited()
        self.drain_output(closing=True)
        self.reactions.emit(self._exit)


def exit_status(exit: ChildExited) -> int:
    if exit.signal:
        return 128 + exit.signal
    return exit.code if exit.code is not None else 1
