"""What the relay's reads set off, away from its I/O; and the relay's controls, what the cue side
may ask of it.

The relay reads, writes, runs the loop and handles signals (``relay/relay.py``). What the
bytes it moves lead to is here, in :class:`Reactions`:

- the output path now (:attr:`Reactions.path`: the tracker's, or the fallback once it raised,
  swapped by :meth:`~Reactions.failed`): the relay hands it each chunk and never asks which it
  has;
- a chunk's results taken where they go (:meth:`~Reactions.after`): the path's answers to the
  child's input, its bytes for the injector, the events to the cue side
  (:meth:`~Reactions.emit`); the input path's steps likewise (:meth:`~Reactions.perform`);
- the relay's controls (``RelayControls``: this object is them, handed to the factory that
  makes the cue side, so nothing is assigned afterwards): Pi's own writes, provenance lost and
  back, a held status passed, the focus told, cuewrap's own keys typed, the output unseen;
- what the path says the terminal needs at a stop and at the end (``restore_sequence``,
  ``resume_sequence``), and the focus filter's failure.

Every failure here is reported (``report``: the log) and the session goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from cuewrap.relay.events import JobChange, RelayEvent
from cuewrap.relay.inputpath import StatusOn
from cuewrap.term import sequences as seq

if TYPE_CHECKING:
    from cuewrap.host import HostTerminal
    from cuewrap.loop import Loop
    from cuewrap.relay.childinput import ChildInput
    from cuewrap.relay.gathering import Gathering
    from cuewrap.relay.inject import Injector
    from cuewrap.relay.outputpath import Path
    from cuewrap.term.answers import TerminalAnswer

REFOCUS_AFTER = 0.1  # seconds after cuewrap's keys before the child hears the focus again


class OutputTap(Protocol):
    """Sees every output chunk and every new size: the screen source's gate (Pi mode) or
    the output watch (generic mode, ``generic/activity.py``)."""

    def feed(self, data: bytes) -> None: ...
    def resize(self, *, rows: int, cols: int) -> None: ...


class CueSide(Protocol):
    """The cue side as the relay knows it from the start (``wiring/pending.py``): what every
    event goes to, and what sees every output chunk now (None: nothing); and what is told that
    the host terminal's answers to cuewrap's queries will not come (``wiring/hostterm.py``)."""

    @property
    def tap(self) -> OutputTap | None: ...
    def relay_event(self, event: RelayEvent) -> None: ...
    def terminal_answer(self, answer: TerminalAnswer | None) -> None: ...


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


class Reactions:
    def __init__(
        self,
        loop: Loop,
        host: HostTerminal,
        path: Path,
        injector: Injector,
        child: ChildInput,
        gathering: Gathering,
        *,
        cues: Callable[[RelayControls], CueSide] | None,
        report: Callable[[str, BaseException], None] | None,
    ) -> None:
        """``path``: the output path (``relay/outputpath.py``). ``child``: the child's input
        (its queue, and the input path it holds). ``gathering``: the output's pace (unseen
        output gathers longer). ``cues``: makes the cue side, given these controls (None: no
        cue side)."""
        self.loop = loop
        self.host = host
        self.path = path
        self.injector = injector
        self.child = child
        self.gathering = gathering
        self.on_error = report
        self.exited = False  # the child is gone: no provenance is lost any more
        self.cues: CueSide | None = cues(self) if cues is not None else None

    # -- what the relay's reads set off ------------------------------------------------------
    def after(self, events: Sequence[RelayEvent]) -> None:
        """A chunk's events: what the path answers the child and injects, then the cue side."""
        path = self.path
        if path.to_child:
            self.child.queue(path.take_child())
        if path.to_inject:
            self.injector.inject(path.take_inject())
        for event in events:
            self.emit(event)

    def emit(self, event: RelayEvent) -> None:
        """``event`` to the cue side (a failure there is reported; the relay goes on)."""
        if self.cues is None:
            return
        try:
            self.cues.relay_event(event)
        except Exception as exc:
            self.report("sink", exc)

    def failed(self, exc: BaseException) -> Path:
        """The output path raised (the tracker): the fallback from here on."""
        self.report("tracker", exc)
        self.path, events = self.path.failed(self.injector.safe)
        for event in events:
            self.emit(event)
        return self.path

    def keys(self, data: bytes) -> None:
        """One read of the host's input, through the input path. Where the focus filter
        raises it is dropped (a byte it was holding, a lone ESC, is not lost) and the input
        goes on as a plain passthrough: ``data`` as it came."""
        child = self.child
        try:
            steps = child.input.feed(data, self.path)
        except Exception as exc:
            self.report("focus", exc)
            held = child.input.drop_filter()
            self.path.focus_lost()
            self.host.write(seq.FOCUS_REPORTING_OFF)
            if held:
                child.queue(held)
            child.queue(data)
            return
        self.perform(steps)

    def typed(self) -> None:
        """A read that passed as it came (``InputPath.passes``) was written to the child: what
        it sets off, as :meth:`keys` would have after the write (the path told, the keystroke
        for the cue side)."""
        self.emit(self.child.input.typed(self.path))

    def perform(self, steps: Iterable[bytes | StatusOn | RelayEvent]) -> None:
        """The input path's steps, in order (``relay/inputpath.py``): bytes for the child; the
        host speaks the Program Status Protocol: the child's reports pass on from now on, and
        one taken out before the answer came is written now (at a safe point), so that the
        host shows the state it missed (a slow answer, over SSH); events for the cue side."""
        for step in steps:
            if isinstance(step, bytes):
                self.child.queue(step)
            elif isinstance(step, StatusOn):
                missed = self.path.pass_status_on()
                if missed:
                    self.injector.inject(missed)
            else:
                self.emit(step)

    def job_change(self, state: str) -> None:
        """The pair stopped or continued (``relay/jobs.py``): the cue side re-applies marks."""
        self.emit(JobChange(state))

    def child_exited(self) -> None:
        """The child is gone (its output is drained next, then its exit emitted)."""
        self.exited = True

    def report(self, where: str, exc: BaseException) -> None:
        if self.on_error is not None:
            try:
                self.on_error(where, exc)
            except Exception:
                pass

    # -- the terminal at a stop and at the end -------------------------------------------------
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
            self.report("restore_sequence", exc)
            return b""

    def resume_sequence(self) -> bytes:
        """What re-applies the child's modes and title after a stop."""
        try:
            return self.path.resume_sequence()
        except Exception as exc:
            self.report("resume_sequence", exc)
            return b""

    # -- the relay's controls (RelayControls) ---------------------------------------------------
    def set_unseen(self, unseen: bool) -> None:
        """Nobody looks at the child's output now, or someone does again (``Gathering``)."""
        self.gathering.set_unseen(unseen)

    def type_to_child(self, data: bytes) -> str | None:
        """cuewrap's own keys for the child (an answer to a dialog, docs/answering.md): one
        write, only at a safe point of the input. None once written whole; otherwise why
        not, and nothing was written."""
        why = self.child.write_whole(data)
        if why is not None:
            return why
        if self.child.input.still_out(self.path):
            self.loop.call_later(REFOCUS_AFTER, self._still_out)
        return None

    def _still_out(self) -> None:
        """After cuewrap's keys, the truth about focus again: a program that takes a key as a
        sign the user is back (Gemini CLI 0.61.0 does) would stay silent while they are away.
        The host's last report was a focus-out and no other came since: the child gets it
        once more (docs/answering.md). Where cuewrap tells the child its presence itself
        (``tell_focus``) that is the truth it gets instead."""
        if self.child.input.still_out(self.path):
            self.child.queue(seq.FOCUS_OUT)

    def tell_focus(self, focused: bool) -> None:
        """The user's presence as cuewrap knows it, for a child that turned focus reporting
        on (generic mode, a preset that asks: docs/generic-mode.md): one focus report when it
        differs from what the child was told last (``OutputPath.tell_focus``), in one write.
        From the first call on the host's own reports are no longer forwarded: the cue side's
        presence (focus reports, idle time, tmux's view) is the one truth the child gets."""
        report = self.path.tell_focus(focused)
        if report:
            self.child.queue(report)

    @property
    def provenance(self) -> str:
        return self.path.provenance

    def own_output(self, data: bytes) -> None:
        """Pi's own write, from the bridge (checked there: ``term.provenance``): written by
        the output path where the output is at rest."""
        try:
            out, events, safe = self.path.own(data)
        except Exception as exc:
            self.failed(exc)
            return
        self.host.write(out)
        self.injector.safe = safe
        if events:
            self.after(events)
        if safe and self.injector.queue:
            self.injector.flush()

    def provenance_lost(self, why: str) -> bool:
        """The bridge that carried Pi's own writes ended while Pi runs (``wiring/bridgewatch.py``):
        back to the frame rule. False: there was no provenance to lose."""
        if self.exited:
            return False
        events = self.path.lose(why)
        self.after(events)
        return bool(events)

    def provenance_back(self) -> bool:
        """A new bridge connection after a loss (``/reload``). False: nothing was lost."""
        events = self.path.restore()
        self.after(events)
        return bool(events)

    def pass_held_status(self) -> None:
        """The screen check confirmed the ``blocked`` report the tracker held: it goes to the
        host terminal now, where it speaks the protocol."""
        held = self.path.pass_held_status()
        if held:
            self.injector.inject(held)
