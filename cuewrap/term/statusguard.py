"""The output path's guard for the Program Status Protocol (OSC 7501; docs/terminal-guard.md).

The tracker (``term/tracker.py``) finds a complete ``ESC ] 7501 ; … ST|BEL`` in the child's
output and says where it stands (``fresh``: not released before; ``removable``: the stream is in
ground right before it, so taking it out changes nothing else the host sees). This guard says
what it is and what becomes of it — a fact or none, passed, cut, or cut with its ESC's effect
put back — and keeps the state that decides it:

- ``consume``: reports are taken out (the host does not speak the protocol, or cuewrap owns it);
  :meth:`pass_on` turns it off once the host answered the query, and hands back the last
  report taken out so the host can be told the state it missed;
- ``shown``: the last report that reached the host was not ``clear`` (cuewrap clears the host's
  indicator if the child exits first);
- ``answer_query`` (generic mode): the child's query ``7501;?`` is cuewrap's to answer, and a
  report from a child that never asked is text it prints, no fact — unless the preset proves the
  program reports on its own under ``own_app``;
- ``hold_blocked`` (Pi mode while the frame rule decides): a ``blocked`` report is taken out even
  for a host that speaks the protocol, kept in ``held`` until the screen confirms the dialog.

Pure: no I/O, no clock; the tracker performs the verdicts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuewrap.factbase import ProgramStatus
from cuewrap.term.grammar import parse_status

PASS = 0  # the sequence stays in the output
CUT = 1  # taken out
CUT_NEUTRAL = 2  # taken out where the stream is not in ground: its ESC's effect put back

_STATUS = b"\x1b]7501;"
_QUERY = b"\x1b]7501;?"


@dataclass(frozen=True)
class StatusQuery:
    """The child asked ``ESC ] 7501 ; ? ST|BEL`` (the Program Status query). ``cut``: it was
    taken out of the output (the host terminal never sees it)."""

    cut: bool


QUERY_CUT = StatusQuery(True)
QUERY_PASSED = StatusQuery(False)


class StatusGuard:
    """What a complete OSC 7501 in the child's output becomes (see the module docstring)."""

    def __init__(
        self,
        *,
        consume: bool = True,
        answer_query: bool = False,
        own_app: str | None = None,
        hold_blocked: bool = False,
    ) -> None:
        self.consume = consume
        self.answer_query = answer_query
        self.own_app = own_app
        self.hold_blocked = hold_blocked
        self.shown = False
        self.held = b""  # the last blocked report taken out under hold_blocked, as written
        self._asked = False  # the child asked the query: its reports count (generic mode)
        self._missed = b""  # the last report taken out, as written (the host may want it)
        self._missed_shows = False  # … and it was not clear

    @property
    def active(self) -> bool:
        """Some OSC 7501 may be taken out: an unfinished one at a chunk's end is worth holding."""
        return self.consume or self.answer_query

    def could_remove(self, s: bytes, whole: bool) -> bool:
        """``s`` (ESC-led, unfinished) may yet become a report or query this guard takes out.
        ``whole``: ``s`` is the head of an OSC already known to be unfinished."""
        if self.consume and (s.startswith(_STATUS) or (not whole and _STATUS.startswith(s))):
            return True
        return self.answer_query and (s.startswith(_QUERY) or (not whole and _QUERY.startswith(s)))

    def query(self, removable: bool) -> StatusQuery:
        """The child's query (``rest`` is ``?``, ``answer_query`` on): cut where ``removable``."""
        self._asked = True
        return QUERY_CUT if removable else QUERY_PASSED

    def report(
        self, rest: bytes, raw: bytes, fresh: bool, removable: Callable[[], bool]
    ) -> tuple[ProgramStatus | None, int]:
        """A complete report (``rest``: what follows ``7501;``, ``raw``: the whole sequence as
        written): the fact it is (None: none) and its verdict (:data:`PASS`, :data:`CUT`,
        :data:`CUT_NEUTRAL`). ``removable`` is asked only when the answer matters."""
        status = parse_status(rest)
        if status is None:
            return None, PASS
        if self.answer_query and not self._asked and not self._own_report(status):
            # generic mode: a program reports only after its query was answered; a report
            # from one that never asked is text it prints (a file, a model's answer), no fact
            return None, PASS
        if self.hold_blocked and not self.consume:
            if status.state == "blocked":  # passed on once the screen shows the dialog
                self.held = raw
                if not fresh:
                    return status, PASS
                return status, CUT if removable() else CUT_NEUTRAL
            self.held = b""  # its wait is over
        if self.consume:
            if fresh and removable():
                self._missed = raw
                self._missed_shows = status.state != "clear"
                return status, CUT
            return status, PASS
        self.shown = status.state != "clear"  # passed to a host that speaks the protocol
        self._missed = b""
        return status, PASS

    def _own_report(self, status: ProgramStatus) -> bool:
        """The preset says this program reports without a query, under this ``app=``."""
        own = self.own_app
        if own is None:
            return False
        return status.app == own or (status.state == "clear" and status.app is None)

    def pass_on(self) -> bytes:
        """The host terminal speaks the protocol: from now on reports pass. Returns the last
        report taken out before (b"" if none), as the child wrote it, for the host to be told
        the state it missed; the host counts as shown it."""
        self.consume = False
        missed, self._missed = self._missed, b""
        if missed:
            self.shown = self._missed_shows
        return missed

    def take_held(self) -> bytes:
        """The held ``blocked`` report, once the screen confirmed it (b"" when none or when
        reports are taken out anyway); the host counts as shown it."""
        held, self.held = self.held, b""
        if not held or self.consume:
            return b""
        self.shown = True
        return held
