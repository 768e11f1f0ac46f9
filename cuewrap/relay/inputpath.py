"""The host's input on its way to the child, sans I/O (the relay reads, writes and keeps the
timers; this decides). The input half of what ``relay/outputpath.py`` is for the output.

What the user's terminal sends goes through the focus filter (``term/focus.py``; until the
answer to cuewrap's start-up query, the answer filter, ``term/answers.py``), which takes out
what is cuewrap's: focus reports, the terminal's answers, its reply to the Program Status
query. What comes back from :meth:`InputPath.feed` (and the flushes), in order, is what to do:

- ``bytes``: for the child, as typed;
- a relay event (:class:`~cuewrap.term.focus.FocusReport`, a terminal's answer, ``KeysRead``
  once per read that had typed bytes in it): for the cue side;
- :data:`STATUS_ON`: the host terminal speaks the Program Status Protocol, so the child's
  reports pass on from now on (the relay asks the output path, which hands back the one it
  took out before, for the host).

A focus report is also the child's when the child turned focus reporting on (mode 1004) and
cuewrap does not tell it its presence itself (``Path.telling``): one write, as the host sent
it (a split ``ESC [O`` reads as the Escape key in Pi). The last one the host sent is kept
(:attr:`InputPath.host_focus`): after cuewrap types keys into a program that takes a key for
the user's return, the relay sends it once more (:meth:`InputPath.still_out`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from cuewrap.relay.events import KeysRead
from cuewrap.term import sequences as seq
from cuewrap.term.answers import AnswerFilter, TerminalAnswer
from cuewrap.term.focus import FocusFilter, FocusReport, HostStatusReply

if TYPE_CHECKING:
    from cuewrap.relay.events import RelayEvent
    from cuewrap.relay.outputpath import Path


class StatusOn:
    """The host speaks the Program Status Protocol (see the module docstring)."""


STATUS_ON: Final = StatusOn()
KEYSTROKE: Final = KeysRead()  # an immutable value: one instance for every read of typed input

Step = bytes | StatusOn  # or a RelayEvent (kept apart for the type checker below)
Item = bytes | FocusReport | HostStatusReply | TerminalAnswer


class InputPath:
    """The focus filter's items read into steps (see the module docstring). ``focus`` None:
    the input passes unfiltered (no cues, or the filter failed: :meth:`drop_filter`)."""

    def __init__(self, focus: FocusFilter | None) -> None:
        self.focus: FocusFilter | None = focus
        self.host_focus: str | None = None  # the host terminal's last focus report: in, out

    @property
    def pending(self) -> bool:
        """The filter holds the start of what may be a report or an answer (a timer's
        flush decides)."""
        return self.focus is not None and self.focus.pending

    @property
    def busy(self) -> str | None:
        """Why cuewrap's own keys cannot go in now (None: they can): the input is in the
        middle of a key sequence or a paste."""
        focus = self.focus
        if focus is not None and (focus.pending or focus.in_paste):
            return "the input is in the middle of a key sequence or a paste"
        return None

    def passes(self, data: bytes) -> bool:
        """``data`` (one read) goes to the child as it came, with nothing taken out: the
        filter holds nothing and it has no ESC (the usual keystroke). What ``feed`` would then
        say is ``[data, KEYSTROKE]`` with the path told (:meth:`typed`), so the relay writes
        ``data`` first and does the rest after. Without a filter: False (``feed`` passes the
        read on alone)."""
        focus = self.focus
        return focus is not None and focus.passes(data)

    def typed(self, path: Path) -> KeysRead:
        """What a read that :meth:`passes` sets off once written: the path hears it (a
        clipboard write right after a key), and the event for the cue side."""
        path.typed()
        return KEYSTROKE

    def feed(self, data: bytes, path: Path) -> list[Step | RelayEvent]:
        """One read of the host's input. Raises where the filter fails (the relay then drops
        it and passes ``data`` on as it came)."""
        focus = self.focus
        if focus is None:
            return [data]
        return self._steps(focus.feed(data), path)

    def flush(self, path: Path) -> list[Step | RelayEvent]:
        """The hold's time is over: what the filter held, as typed."""
        return self._steps(self.focus.flush(), path) if self.focus is not None else []

    def flush_answer(self, path: Path) -> list[Step | RelayEvent]:
        """A partial answer of the terminal that did not complete in time: it was data."""
        if isinstance(self.focus, AnswerFilter):
            return self._steps(self.focus.flush(everything=True), path)
        return []

    def drop_filter(self) -> bytes:
        """The filter failed: dropped (the input passes unfiltered from now on); what it was
        holding (a lone ESC), for the child."""
        broken, self.focus = self.focus, None
        try:
            return b"".join(i for i in broken.flush() if isinstance(i, bytes)) if broken else b""
        except Exception:
            return b""

    def still_out(self, path: Path) -> bool:
        """The host's last report was a focus-out and the child hears the host's reports."""
        return self.host_focus == "out" and path.child_mode(1004) and not path.telling

    def _steps(self, items: Iterable[Item], path: Path) -> list[Step | RelayEvent]:
        steps: list[Step | RelayEvent] = []
        typed = False
        for item in items:
            if isinstance(item, bytes):
                if item:
                    steps.append(item)
                    typed = True
            elif isinstance(item, FocusReport):
                self.host_focus = item.direction
                if path.child_mode(1004) and not path.telling:
                    steps.append(seq.FOCUS_IN if item.direction == "in" else seq.FOCUS_OUT)
                steps.append(item)
            elif isinstance(item, HostStatusReply):
                steps.append(STATUS_ON)
                steps.append(item)
            elif isinstance(item, TerminalAnswer):
                if item.kind == "osc7501":
                    steps.append(STATUS_ON)  # the host shows the child's reports
                steps.append(item)  # to cuewrap, never to the child
        if typed:
            path.typed()
            steps.append(KEYSTROKE)
        return steps
