"""The host terminal at the session's start, beyond raw mode: asked what it is (XTVERSION,
kitty's OSC 99 query, the Program Status query, DA1), and Konsole's tab title format.

Imported right after the spawn: no ``typing`` (``records``).
"""

from __future__ import annotations

import os

from cuewrap.records import TYPE_CHECKING
from cuewrap.term import sequences as seq

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cuewrap.config import Settings
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.host import HostTerminal
    from cuewrap.loop import Loop
    from cuewrap.relay.reactions import CueSide
    from cuewrap.term.focus import FocusFilter
    from cuewrap.wiring._faults import Faults

QUERY_WINDOW = 5.0  # seconds the host terminal has to answer cuewrap's start-up query


def asks(env: Mapping[str, str], guard: bool, faults: Faults) -> bool:
    """Ask the host terminal what it is (XTVERSION, kitty's OSC 99 query), not inside tmux
    (tmux answers for itself; the attached client's type comes from tmux) and not when
    ``CUEWRAP_DEBUG_NO_QUERY`` is set (a benchmark's comparison) nor when a fault is asked
    for (``wiring/_faults.py``)."""
    return guard and not env.get("TMUX") and not env.get("CUEWRAP_DEBUG_NO_QUERY") and not faults.on


def osc99_query_id(env: Mapping[str, str]) -> str | None:
    """kitty's OSC 99 query only where the environment says kitty (other terminals ignore
    an unknown OSC, but there is no point)."""
    kitty = env.get("KITTY_WINDOW_ID") or env.get("TERM") == "xterm-kitty"
    return f"cuewrap-q{os.getpid()}" if kitty else None


def query(
    host: HostTerminal,
    loop: Loop,
    log: DecisionLog,
    focus: FocusFilter,
    cues: CueSide,
    ident: str | None,
) -> None:
    """Write the query in raw mode (no echo of the answers) and before any output of the
    child is relayed, so its answers come before those to the child's own queries; the
    answers are taken out of the input by the filter (``term.answers``). Nothing waits
    for them: the first frame is not delayed. ``ident``: the OSC 99 query's, if asked."""
    from cuewrap.term.answers import AnswerFilter

    if not isinstance(focus, AnswerFilter):
        return
    query = seq.XTVERSION_QUERY
    if ident is not None:
        query += seq.osc99_query(ident)
    # both modes: with PI_PROGRAM_STATUS=1 Pi asks no query of its own; where the
    # terminal answers this one, the relay passes the child's reports on
    query += seq.PROGRAM_STATUS_QUERY
    host.write(query + seq.DA1_QUERY)
    log.write("terminal_query", xtversion=True, osc99=ident is not None, osc7501=True, da1=True)

    def too_late() -> None:
        if focus.active:
            focus.stop()
            cues.terminal_answer(None)

    loop.call_later(QUERY_WINDOW, too_late)


def konsole_title(
    host: HostTerminal, env: Mapping[str, str], settings: Settings, log: DecisionLog
) -> None:
    """In Konsole, its tab title format shows the program's title (and so the marks)
    while cuewrap runs; the user's format back on every way out (``term.konsole``)."""
    from cuewrap.term.konsole import read_small, tab_title

    both = tab_title(env, read_small) if settings.notify.title_marks else None
    if both is not None:
        host.enable(*both)
        log.write("konsole_title", shows="%w")
