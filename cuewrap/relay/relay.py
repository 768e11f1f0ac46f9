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

What happens to the output between the read and the write is the output path's
(``relay/outputpath.py``, sans I/O: the tracker, provenance, Pi's own writes, the fallback once
the tracker failed): the relay hands it each chunk and writes what it gives back. Everything
else cuewrap learns (modes, title, bell, status, keystrokes, the exit) is passed to the cue side
(``cues.relay_event``) as ``RelayEvent``s; every output chunk and every new size also go to its
output tap (``cues.tap``: the screen source's gate, the output watch), read afresh at each
chunk, after the chunk was written. The cue side never calls into the scan: what the tracker
decides in the middle of one (a child's notification, a clipboard sequence) it decides from the
rules the cue side handed down (``relay/decisions.py``). cuewrap's own bytes (title marks,
notifications) wait in the ``Injector``; the relay tells it after each chunk whether the output
stream is between escape sequences and UTF-8 characters, the point where they may be written.

Collaborators (the focus filter, the output path, the injector) are given at construction; the
cue side is made by the factory given (``cues``), handed the relay's controls
(``RelayControls``: typing into the child, Pi's own writes, unseen output) — the one place
where a part gets the relay, so nothing is assigned to it afterwards (``wiring/session.py``
composes them).

While the child streams (and nothing was typed in the last ``ECHO_WINDOW``), its output is left
to gather in the PTY for ``GATHER`` (19 ms) between relays: about one wake-up per screen frame
instead of one per write of the child; ``GATHER_UNSEEN`` while nobody looks at it
(``set_unseen``: the terminal reported its focus lost, or tmux shows another window). The
first output after a pause, the echo of input and a fast flood go out as they come; the bytes
are the same either way.

Signals arrive through ``signal.set_wakeup_fd``; there is no periodic timer (the gathering
timer runs only while output streams), so an idle relay blocks in ``select`` and uses no CPU.
Any failure outside the byte path is reported and the relay carries on; a failure of the
filters themselves turns them off (plain passthrough).
"""

from __future__ import annotations

import errno
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from math import inf
from typing import TYPE_CHECKING, Protocol

from cuewrap.host import HostTerminal, get_size
from cuewrap.loop import Loop, Timer
from cuewrap.relay.events import ChildExited, JobChange, RelayEvent
from cuewrap.relay.inject import Injector
from cuewrap.relay.inputpath import InputPath, StatusOn
from cuewrap.relay.jobs import JobControl
from cuewrap.relay.leader import ChildEvent
from cuewrap.relay.signals import TERM_SIGNALS, SignalPipe
from cuewrap.term import sequences as seq
from cuewrap.term.focus import FocusFilter

if TYPE_CHECKING:
    from cuewrap.relay.outputpath import Path

READ_SIZE = 65536
BATCH_AFTER = 4000  # a read this large (Linux's PTY hands out 4095 at most) may have more behind
BATCH_SIZE = READ_SIZE  # relay up to this much per wake-up while output streams
FOCUS_PREFIX_HOLD = 0.005  # seconds a partial ESC / ESC [ is held (Pi's ESC timeout is 10 ms)
ANSWER_HOLD = 0.5  # seconds more a partial answer to cuewrap's start-up query is held
OUTPUT_HOLD = 0.02  # seconds a partial OSC 7501 prefix at a chunk end may be held
# seconds a stream's output gathers in the PTY between relays: about a screen frame, a little
# longer than the time between Pi's frames (pi-tui draws at most every 16 ms, ~17.3 ms apart as
# it streams). At 1/60 s (17 ms after poll's rounding to milliseconds) the deadline raced Pi's
# next frame: each gathering found one frame or none (a wake-up more); at 19 ms none is empty
# and every ~10th brings two (docs/benchmarks.md#round-two-the-gathering-time)
GATHER = 0.019
GATHER_UNSEEN = 1 / 20  # the same while nobody looks (docs/design.md#unseen-output)
GATHER_TARGET = 8192  # bytes a gathering aims at: a Linux PTY holds ~14 KB before its writer waits
GATHER_MIN = 0.003  # seconds: a stream that would need shorter gatherings is relayed as it comes
GATHER_GAP = 0.001  # seconds: a chunk after a shorter pause is a flood's (relayed as it comes)
GATHER_FULL = 12288  # bytes: a read this large found the PTY (nearly) full: a flood's
ECHO_WINDOW = 0.05  # seconds after input in which output is relayed as it comes (its echo)
INPUT_BACKLOG = 1 << 20  # stop reading stdin while this much input waits for the child
FATAL_GRACE = 3.0  # after a terminating signal, kill the child if it lingers this long


Sink = Callable[[RelayEvent], None]


class OutputTap(Protocol):
    """Sees every output chunk and every new size: the screen source's gate (Pi mode) or
    the output watch (generic mode, ``generic/activity.py``)."""

    def feed(self, data: bytes) -> None: ...
    def resize(self, *, rows: int, cols: int) -> None: ...


class CueSide(Protocol):
    """The cue side as the relay knows it from the start (``wiring/pending.py``): what every
    event goes to, and what sees every output chunk now (None: nothing)."""

    @property
    def tap(self) -> OutputTap | None: ...
    def relay_event(self, event: RelayEvent) -> None: ...


class RelayControls(Protocol):
    """What the cue side may ask of the relay (downward calls only)."""

    def type_to_child(self, data: bytes) -> str | None: ...
    def own_output(self, data: bytes) -> None: ...
    def set_unseen(self, unseen: bool) -> None: ...
    @property
    def provenance(self) -> str: ...
    def provenance_lost(self, why: str) -> bool: ...
    def provenance_back(self) -> bool: ...
    def pass_held_status(self) -> None: ...
    def tell_focus(self, focused: bool) -> None: ...


REFOCUS_AFTER = 0.1  # seconds after cuewrap's keys before the child hears the focus again


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
        ``cues``: makes the cue side, given this relay's controls (None: no cue side)."""
        self.loop = loop
        self.child = child
        self.host = host
        self.master_fd: int = child.fd
        self.input = InputPath(focus)  # the host's input on its way to the child
        self.path = path
        self.injector = injector
        self._tap_ok = True  # the cue side's output tap has not failed
        self.on_error = on_error
        self._to_child: deque[bytes] = deque()  # write units; a focus report is one unit
        self._to_child_len = 0
        self._writer_on = False  # the loop watches the master for writability
        self._stdin_paused = False  # stdin not read: too much input waits for the child
        self._focus_timer: Timer | None = None
        self._output_timer: Timer | None = None
        # the loop's deadline is set for ``_gathered``: the master is not watched meanwhile
        self._gathering = False
        self._gather = GATHER  # the gathering time now (longer while nobody looks)
        self._clock = loop.clock
        self._last_out = float("-inf")  # when the last output relayed was written
        self._echo_until = float("-inf")  # output relayed as it comes until then (input)
        self._stdin_open = True
        self._master_open = True
        self._exit: ChildExited | None = None
        self._term_count = 0
        self.fatal_signal: int | None = None  # the first terminating signal cuewrap received
        self._signals = SignalPipe(
            (signal.SIGWINCH, signal.SIGCHLD, signal.SIGTSTP, signal.SIGCONT, *TERM_SIGNALS)
        )
        self.jobs = JobControl(loop, host, child, self, on_change=self._job_change)
        self.cues: CueSide | None = cues(self) if cues is not None else None

    # -- public ---------------------------------------------------------------------------
    def child_mode(self, mode: int) -> bool:
        return self.path.child_mode(mode)

    def set_unseen(self, unseen: bool) -> None:
        """Nobody looks at the child's output now (``True``: the terminal said its focus is
        elsewhere, or tmux shows another window), or someone does again: a stream's output
        gathers for ``GATHER_UNSEEN`` instead of ``GATHER`` meanwhile. On the way back what
        gathered goes out at once (docs/design.md#unseen-output)."""
        gather = GATHER_UNSEEN if unseen else GATHER
        if gather == self._gather:
            return
        self._gather = gather
        now = self._clock()
        if not unseen and self._gathering and self.loop.deadline > now:
            self.loop.deadline = now  # it was set for the longer time: at the next turn of the loop

    def restore_sequence(self, leaving: bool = False) -> bytes:
        """What undoes the modes the child left on (alt screen, mouse, paste, kitty…); when
        ``leaving`` (cuewrap gives the terminal back for good, not a stop), also the program
        status the child's last report left shown: the host's indicator is cleared, as the
        child would have at its exit (``state=clear``); so is the progress it left on (Pi's
        own clear at exit is written past ``process.stdout.write``: content after the
        provenance mark, docs/terminal-guard.md)."""
        try:
            return self.path.restore_sequence(leaving)
        except Exception as exc:
            self._report("restore_sequence", exc)
            return b""

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
        self._echo_until = self._clock() + ECHO_WINDOW
        if self._gathering:  # the answer to this input is not kept waiting
            self._stop_gathering()
        if self._focus_timer is not None:
            self._focus_timer.cancel()
            self._focus_timer = None
        try:
            steps = self.input.feed(data, self.path)
        except Exception as exc:
            self._focus_failed(exc)
            self._queue_child(data)
            return
        self._perform(steps)
        if self.input.pending:
            self._focus_timer = self.loop.call_later(FOCUS_PREFIX_HOLD, self._flush_focus)

    def _flush_focus(self) -> None:
        self._focus_timer = None
        self._perform(self.input.flush(self.path))
        if self.input.pending:  # the terminal's answer to cuewrap's query, split: wait
            self._focus_timer = self.loop.call_later(ANSWER_HOLD, self._flush_answer)

    def _flush_answer(self) -> None:
        """A partial answer of the terminal that did not complete in time: it was data."""
        self._focus_timer = None
        self._perform(self.input.flush_answer(self.path))

    def _perform(self, steps: Iterable[bytes | StatusOn | RelayEvent]) -> None:
        """The input path's steps, in order (``relay/inputpath.py``): bytes for the child,
        the host's Program Status answer, events for the cue side."""
        for step in steps:
            if isinstance(step, bytes):
                self._queue_child(step)
            elif isinstance(step, StatusOn):
                self._pass_status_on()
            else:
                self._emit(step)

    def tell_focus(self, focused: bool) -> None:
        """The user's presence as cuewrap knows it, for a child that turned focus reporting
        on (generic mode, a preset that asks: docs/generic-mode.md): one focus report when it
        differs from what the child was told last (``OutputPath.tell_focus``), in one write.
        From the first call on the host's own reports are no longer forwarded: the cue side's
        presence (focus reports, idle time, tmux's view) is the one truth the child gets."""
        report = self.path.tell_focus(focused)
        if report:
            self._queue_child(report)

    def _pass_status_on(self) -> None:
        """The host terminal speaks the Program Status Protocol: the child's reports pass on
        from now on; one taken out before the answer came is written now (at a safe point),
        so that the host shows the state it missed (a slow answer, over SSH)."""
        missed = self.path.pass_status_on()
        if missed:
            self.injector.inject(missed)

    def _stdin_eof(self) -> None:
        self.loop.remove_reader(self.host.stdin_fd)
        self._stdin_open = False
        if self.input.pending:
            self._flush_focus()
        if not self.host.stdin_tty:
            # a pipe or /dev/null ended: tell the child, as a terminal user would with ^D
            try:
                eof = termios_veof(self.master_fd)
                self._queue_child(eof)
            except OSError:
                pass

    def type_to_child(self, data: bytes) -> str | None:
        """cuewrap's own keys for the child (an answer to a dialog, docs/answering.md): one
        write, only at a safe point of the input. None once written whole; otherwise why
        not, and nothing was written."""
        busy = self.input.busy
        if busy:
            return busy
        if self._to_child or not self._master_open:
            return "the child is not reading its input"
        try:
            n = os.write(self.master_fd, data)
        except OSError:
            return "the child is not reading its input"
        if n != len(data):  # a PTY takes a few bytes whole; keep the rest in order anyway
            self._queue_child(data[n:])
        if self.input.still_out(self.path):
            self.loop.call_later(REFOCUS_AFTER, self._still_out)
        return None

    def _still_out(self) -> None:
        """After cuewrap's keys, the truth about focus again: a program that takes a key as a
        sign the user is back (Gemini CLI 0.61.0 does) would stay silent while they are away.
        The host's last report was a focus-out and no other came since: the child gets it
        once more (docs/answering.md). Where cuewrap tells the child its presence itself
        (``tell_focus``) that is the truth it gets instead."""
        if self.input.still_out(self.path):
            self._queue_child(seq.FOCUS_OUT)

    def _queue_child(self, data: bytes) -> None:
        if not self._master_open:
            return
        self._to_child.append(data)
        self._to_child_len += len(data)
        self._write_child()

    def _write_child(self) -> None:
        while self._to_child:
            unit = self._to_child[0]
            try:
                n = os.write(self.master_fd, unit)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._to_child.clear()
                self._to_child_len = 0
                break
            self._to_child_len -= n
            if n < len(unit):
                self._to_child[0] = unit[n:]
                break
            self._to_child.popleft()
        # flags, not selector look-ups: this runs for every keystroke
        waiting = bool(self._to_child)
        if waiting != self._writer_on:
            self._writer_on = waiting
            if waiting:
                self.loop.add_writer(self.master_fd, self._write_child, guarded=False)
            else:
                self.loop.remove_writer(self.master_fd)
        # backpressure: stop reading the host while the child is not reading
        if self._stdin_open:
            full = self._to_child_len > INPUT_BACKLOG
            if full != self._stdin_paused:
                self._stdin_paused = full
                if full:
                    self.loop.remove_reader(self.host.stdin_fd)
                else:
                    self.loop.add_reader(self.host.stdin_fd, self._on_stdin, guarded=False)

    # -- output: child -> host -------------------------------------------------------------
    def _read_master(self) -> bytes | None:
        """One read of the child's output (the one place that reads it): the bytes; ``b""`` at
        its end (EOF, or EIO: the child's side is closed; another error is reported); None
        when nothing is there now."""
        try:
            return os.read(self.master_fd, READ_SIZE)
        except OSError as exc:
            return self._read_failed(exc)

    def _read_failed(self, exc: OSError) -> bytes | None:
        """What a failed read of the child's output means (see ``_read_master``)."""
        if isinstance(exc, (BlockingIOError, InterruptedError)):
            return None
        if exc.errno != errno.EIO:
            self._report("read_master", exc)
        return b""

    def _on_master(self) -> None:
        data = self._read_master()
        if data is None:
            return
        if not data:
            self._master_eof()
            return
        elapsed = self._clock() - self._last_out  # the time the child had to write this
        size, eof = self._relay_stream(data)
        self._last_out = now = self._clock()  # after the write: it may have waited for the host
        if eof:
            self._master_eof()
        elif GATHER_GAP <= elapsed < self._gather and now >= self._echo_until and self._master_open:
            # the child streams: let its output gather in the PTY for up to a screen frame's
            # time instead of waking per write (a screen shows one frame per refresh anyway)
            wait = self._gather_wait(size, elapsed)
            if wait:
                self.loop.remove_reader(self.master_fd)
                self._gathering = True
                self.loop.deadline = now + wait

    def _gather_wait(self, size: int, elapsed: float) -> float:
        """How long to let a stream that brought ``size`` bytes in ``elapsed`` seconds gather:
        a frame's time (or ``GATHER_UNSEEN``), shorter when the PTY would fill meanwhile (its
        writer would wait), not at all (0) for a flood."""
        if size >= GATHER_FULL:  # the writer may have waited: its rate is not known
            return 0.0
        gather = self._gather
        if size * gather <= GATHER_TARGET * elapsed:
            return gather
        wait = GATHER_TARGET * elapsed / size
        return wait if wait >= GATHER_MIN else 0.0

    def _gathered(self) -> None:
        """The gathering time is over (the loop's deadline): relay what came meanwhile; gather
        again while the stream goes on, else watch the master again (the next output after a
        pause, and a flood, are relayed as they come).

        While Pi streams this runs once per frame, on cold caches
        (docs/architecture.md#an-output-chunk): the usual case (a frame that fits one read, the
        stream going on) takes one read, ``_output`` and an attribute store for the next
        deadline, and nothing else."""
        self._gathering = False
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
        elapsed = now - self._last_out
        if data:
            self._output(data)
            self._last_out = now = self._clock()
        if eof:
            self._master_eof()
            return
        if not self._master_open:
            return
        if now >= self._echo_until:
            size = len(data)
            gather = self._gather
            if size < GATHER_FULL and size * gather <= GATHER_TARGET * elapsed:
                wait = gather  # the usual case, without the call (see _gather_wait)
            else:
                wait = self._gather_wait(size, elapsed)
            if wait:
                self._gathering = True
                self.loop.deadline = now + wait
                return
        self.loop.add_reader(self.master_fd, self._on_master, guarded=False)

    def _stop_gathering(self) -> None:
        """End a gathering now and watch the master again (what gathered is read at once)."""
        if self._end_gathering() and self._master_open:
            self.loop.add_reader(self.master_fd, self._on_master, guarded=False)

    def _end_gathering(self) -> bool:
        """Clear the loop's deadline if a gathering is on; whether one was."""
        if not self._gathering:
            return False
        self._gathering = False
        self.loop.deadline = inf
        return True

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
        """Relay one chunk: the output path's scan, the host write, the output tap, the
        events, what the injector holds. Once per wake-up while the child streams, on cold
        caches: the usual chunk (no events, nothing held, nothing injected) touches only what
        it must."""
        if self._output_timer is not None:
            self._output_timer.cancel()
            self._output_timer = None
        path = self.path
        try:
            out, events, safe = path.feed(data)
        except Exception as exc:
            path = self._path_failed(exc)
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
                    self._report("screen", exc)
        if events:
            self._after(events)
        if safe and injector.queue:
            injector.flush()
        if path.held:
            self._output_timer = self.loop.call_later(OUTPUT_HOLD, self._flush_output)

    def _after(self, events: Sequence[RelayEvent]) -> None:
        """A chunk's events: what the path answers the child and injects, then the cue side."""
        path = self.path
        if path.to_child:
            self._queue_child(path.take_child())
        if path.to_inject:
            self.injector.inject(path.take_inject())
        for event in events:
            self._emit(event)

    def _path_failed(self, exc: BaseException) -> Path:
        """The output path raised (the tracker): the fallback from here on."""
        self._report("tracker", exc)
        self.path, events = self.path.failed(self.injector.safe)
        for event in events:
            self._emit(event)
        return self.path

    # -- what the cue side asks of the output (Pi mode with the bridge: outputpath.py) ------
    @property
    def provenance(self) -> str:
        return self.path.provenance

    def own_output(self, data: bytes) -> None:
        """Pi's own write, from the bridge (checked there: ``term.provenance``): written by
        the output path where the output is at rest."""
        try:
            out, events, safe = self.path.own(data)
        except Exception as exc:
            self._path_failed(exc)
            return
        self.host.write(out)
        self.injector.safe = safe
        if events:
            self._after(events)
        if safe and self.injector.queue:
            self.injector.flush()

    def provenance_lost(self, why: str) -> bool:
        """The bridge that carried Pi's own writes ended while Pi runs (``wiring/bridgewatch.py``):
        back to the frame rule. False: there was no provenance to lose."""
        if self._exit is not None:
            return False
        events = self.path.lose(why)
        self._after(events)
        return bool(events)

    def provenance_back(self) -> bool:
        """A new bridge connection after a loss (``/reload``). False: nothing was lost."""
        events = self.path.restore()
        self._after(events)
        return bool(events)

    def pass_held_status(self) -> None:
        """The screen check confirmed the ``blocked`` report the tracker held: it goes to the
        host terminal now, where it speaks the protocol."""
        held = self.path.pass_held_status()
        if held:
            self.injector.inject(held)

    def _flush_output(self) -> None:
        self._output_timer = None
        self.host.write(self.path.flush())
        self.injector.set_safe(self.path.safe)

    def _master_eof(self) -> None:
        self._end_gathering()
        if self._output_timer is not None:
            self._output_timer.cancel()
            self._output_timer = None
        out, events, safe = self.path.end()
        self.host.write(out)
        self.injector.set_safe(safe)
        if events:
            self._after(events)
        self.injector.flush()
        self.loop.remove_reader(self.master_fd)
        self.loop.remove_writer(self.master_fd)
        self._writer_on = False
        self._master_open = False
        self._reap()

    def _drain_master(self) -> None:
        """The child exited: take what is left in the PTY without waiting for grandchildren."""
        while self._master_open:
            data = self._read_master()
            if data is None:
                self._end_gathering()
                self.loop.remove_reader(self.master_fd)
                self.loop.remove_writer(self.master_fd)
                self._writer_on = False
                self._master_open = False
                return
            if not data:
                self._master_eof()
                return
            self._output(data)

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
                    self._report("screen", exc)

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

    # -- job control (jobs.py decides; these are its hands on the streams) -------------------
    def _on_reports(self) -> None:
        """The child's leader reported a stop, a continue or the exit."""
        self._reap()

    def drain_output(self) -> None:
        """Relay what the child wrote so far (before it stopped), without waiting."""
        while self._master_open:
            data = self._read_master()
            if data is None:
                break
            if not data:
                self._master_eof()
                return
            self._output(data)
        if self.path.held:
            self._flush_output()

    def resume_sequence(self) -> bytes:
        """What re-applies the child's modes and title after a stop."""
        try:
            return self.path.resume_sequence()
        except Exception as exc:
            self._report("resume_sequence", exc)
            return b""

    def _job_change(self, state: str) -> None:
        self._emit(JobChange(state))

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
        self._drain_master()
        self._emit(self._exit)

    # -- failure handling -------------------------------------------------------------------
    def _emit(self, event: RelayEvent) -> None:
        if self.cues is None:
            return
        try:
            self.cues.relay_event(event)
        except Exception as exc:
            self._report("sink", exc)

    def _focus_failed(self, exc: BaseException) -> None:
        """The focus filter raised: drop it and go on as a plain passthrough for the input."""
        self._report("focus", exc)
        held = self.input.drop_filter()  # a byte it was holding (a lone ESC) is not lost
        self.path.focus_lost()
        self.host.write(seq.FOCUS_REPORTING_OFF)
        if held:
            self._queue_child(held)

    def _report(self, where: str, exc: BaseException) -> None:
        if self.on_error is not None:
            try:
                self.on_error(where, exc)
            except Exception:
                pass


def termios_veof(fd: int) -> bytes:
    import termios

    cc = termios.tcgetattr(fd)[6]
    veof = cc[termios.VEOF]
    return veof if isinstance(veof, bytes) else bytes([veof])


def exit_status(exit: ChildExited) -> int:
    if exit.signal:
        return 128 + exit.signal
    return exit.code if exit.code is not None else 1
