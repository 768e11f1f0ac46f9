"""The child's capability queries cuewrap answers itself (generic mode, a preset that asks for
it: opencode; docs/generic-mode.md, "opencode, heard").

cuewrap is the terminal its child talks to, and two things a child may ask about are cuewrap's,
not the host terminal's:

- ``CSI ? 1004 $ p`` (DECRQM: is focus reporting, mode 1004, supported?). cuewrap owns the
  host's focus reporting (docs/design.md#presence): the child's own ``CSI ? 1004 h/l`` never
  reach the host, they only say what the child wants to be told. So the mode the child asks
  about is the one cuewrap keeps for it: supported, set or reset as the child last set it
  (``CSI ? 1004 ; 1 $ y`` / ``; 2 $ y``), and the reports it then gets are the truth of
  cuewrap's presence (``wiring/focustell.py``).
- kitty's notification query ``OSC 99 ; i=ID : p=? ; ST``. cuewrap reads the child's OSC 99
  notifications itself and turns them into its own cues (one popup per cue), so it answers
  what it takes: a title and a body (``p=title,body``), nothing else (no buttons, no close or
  activation reports back).

Pure: the tracker finds them (``tracker.py``) and reports a :class:`ChildQuery`; the relay
writes :func:`answer` to the child's input at once, before the host can see what follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

DECRQM_FOCUS = b"?1004"  # the parameters of CSI ? 1004 $ p
# kitty's query as opentui writes it, and any id (kitty's grammar for an identifier)
OSC99_QUERY = re.compile(rb"i=([A-Za-z0-9_.+-]{1,64}):p=\?;\Z")
OSC99_TAKES = b"p=title,body"  # what cuewrap takes of a child's OSC 99 notification


@dataclass(frozen=True)
class ChildQuery:
    """The child asked one of the queries cuewrap answers (``decrqm1004``, ``osc99``).
    ``ident``: the OSC 99 query's id (echoed in the answer). ``cut``: taken out of the output
    (the host never saw it)."""

    kind: Literal["decrqm1004", "osc99"]
    ident: str = ""
    cut: bool = True


def osc99_query(rest: bytes) -> str | None:
    """The id of kitty's capability query, when ``rest`` (what follows ``OSC 99 ;``) is one."""
    m = OSC99_QUERY.match(rest)
    return m.group(1).decode("ascii") if m is not None else None


def answer(query: ChildQuery, focus_on: bool) -> bytes:
    """The bytes cuewrap writes to the child's input for ``query`` (``focus_on``: the child
    turned mode 1004 on, as cuewrap tracks it)."""
    if query.kind == "decrqm1004":
        return b"\x1b[?1004;" + (b"1" if focus_on else b"2") + b"$y"
    return b"\x1b]99;i=" + query.ident.encode("ascii") + b":p=?;" + OSC99_TAKES + b"\x1b\\"
