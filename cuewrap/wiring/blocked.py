"""Pi mode without the bridge (or with one that has not marked the output yet, or was lost):
a ``blocked`` report (OSC 7501) counts only with a dialog on the screen (docs/terminal-guard.md,
"Whose sequence is it").

Without the bridge cuewrap cannot tell Pi's own reports from a report the model's answer
carries behind a frame end of its own. A ``blocked`` report is the one that raises "Needs your
input", so it is held: once Pi has had time to draw its dialog (it does in the frame right
after it reports), a ``DialogReader`` reads the screen from the ``OutputRing`` (the relay's
output tap) and the report goes on only if ``pi_screen.dialog_shown``; otherwise it is refused
(a ``fact_refused`` record, never content). Any other report passes at once and ends a held
one (the wait it would announce is over). One worker per held report, none per chunk; a
reader that does not start refuses the report (fails closed), and Pi runs on as ever.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from cuewrap.answer.screen import DialogReader, OutputRing
from cuewrap.decisionlog import DecisionLog
from cuewrap.facts import Fact, ProgramStatus
from cuewrap.loop import Loop, Timer
from cuewrap.screen.pi_screen import dialog_shown

FIRST_LOOK = 0.15  # seconds after the report: Pi draws its dialog in the next frame
AGAIN = 0.2  # between looks
LOOKS = 5  # at most, so within about a second

Step = Literal["pass", "again", "refuse"]


def holds(fact: Fact) -> bool:
    """Is this a report held until the screen is read (pure)?"""
    return isinstance(fact, ProgramStatus) and fact.source == "osc7501" and fact.state == "blocked"


def next_step(lines: list[str] | None, looks_left: int) -> Step:
    """After one look at the screen (None: the reader is gone): pass the report on, look
    again, or refuse it (pure)."""
    if lines is None:
        return "refuse"
    if dialog_shown(lines):
        return "pass"
    return "again" if looks_left > 0 else "refuse"


MakeReader = Callable[[int, int], DialogReader]
"""``make(cols, rows)``: a reader, not started yet."""


class BlockedCheck:
    """Holds a ``blocked`` report from the output until the screen shows Pi's dialog."""

    def __init__(
        self,
        loop: Loop,
        log: DecisionLog,
        ring: OutputRing,
        pass_on: Callable[[Fact], None],
        make_reader: MakeReader | None = None,
        active: Callable[[], bool] | None = None,
    ) -> None:
        self._loop = loop
        self._log = log
        self.ring = ring
        self._pass_on = pass_on
        self._make = make_reader or self._new_reader
        # with the bridge: whether the frame rule decides now (no provenance yet, or it was
        # lost); when it does not, every report goes on at once (None: always checks)
        self._active = active
        self._held: ProgramStatus | None = None
        self._looks = 0
        self._timer: Timer | None = None
        self._reader: DialogReader | None = None
        self._gen = 0  # the held report a screen's answer is for

    def offer(self, fact: Fact) -> bool:
        """A fact from the output: True if it is held here (a ``blocked`` report), False if it
        goes on now (and then a held report is dropped: its wait is over)."""
        if self._active is not None and not self._active():
            return False
        if holds(fact):
            assert isinstance(fact, ProgramStatus)
            self._end()
            self._held = fact
            self._looks = LOOKS
            self._timer = self._loop.call_later(FIRST_LOOK, self._look)
            return True
        if self._held is not None and isinstance(fact, ProgramStatus):
            self._refuse("another report came first")
        return False

    def close(self) -> None:
        self._held = None
        self._end()

    # -- the looks ------------------------------------------------------------------------
    def _look(self) -> None:
        self._timer = None
        if self._held is None:
            return
        if self._reader is None and not self._start():
            self._refuse("the screen could not be read")
            return
        assert self._reader is not None
        self._looks -= 1
        gen = self._gen
        self._reader.query(lambda lines: self._seen(gen, lines))

    def _seen(self, gen: int, lines: list[str] | None) -> None:
        if gen != self._gen or self._held is None:
            return  # an answer for a report already decided
        step = next_step(lines, self._looks)
        if step == "pass":
            fact, self._held = self._held, None
            self._end()
            self._pass_on(fact)
        elif step == "again":
            self._timer = self._loop.call_later(AGAIN, self._look)
        else:
            self._refuse("no dialog on the screen" if lines is not None else "the reader is gone")

    def _start(self) -> bool:
        try:
            rows, cols = self.ring.size
            reader = self._make(cols, rows)
            if not reader.start():
                return False
        except Exception as exc:
            self._log.error("blocked_check", exc)
            return False
        self._reader = reader
        for chunk in self.ring.kept():
            reader.feed(chunk)
        self.ring.read_by(reader)  # fed the output from now on
        return True

    def _refuse(self, why: str) -> None:
        self._held = None
        self._end()
        self._log.write("fact_refused", type="ProgramStatus", state="blocked",
                        source="osc7501", why=why)  # fmt: skip

    def _end(self) -> None:
        """No report held any more: no timer, no reader."""
        self._gen += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        reader, self._reader = self._reader, None
        if reader is not None:
            if self.ring.reader is reader:
                self.ring.read_by(None)
            reader.stop()

    def _new_reader(self, cols: int, rows: int) -> DialogReader:
        return DialogReader(self._loop, cols, rows, on_error=self._log.error)
