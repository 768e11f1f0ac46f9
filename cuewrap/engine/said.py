"""A program's own words in its notification, read as its facts (generic mode; the preset
names the program: ``EngineConfig.words``, ``engine/words.py``; docs/generic-mode.md).

opencode says "Session done" when a turn ends, its error when one fails, "Session aborted",
"Permission needs input": words of its own, not a model's (the body; the title, the session's,
is never read). They are certain, as an OSC 7501 report is:

- an outcome (``done``, ``error``, ``aborted``) settles the turn it ends — a run of the
  ``child`` source, implied by the words when none was seen begin (the program says nothing
  when it starts) — with the finished cue's rules: Finished, Failed, Cancelled;
- ``blocked`` opens the wait ``said`` (Needs your input, with the kind its words say); the
  next words, a settled run or the exit end it.

The notification itself was taken out of the output (cuewrap answered the program's query: it
was addressed to cuewrap): the cue is cuewrap's, one per event, none while the user looks.
"""

from __future__ import annotations

from cuewrap.engine._step import Step
from cuewrap.engine.effects import Outcome
from cuewrap.engine.runs import settle, start_run
from cuewrap.engine.waits import add_wait, end_wait
from cuewrap.facts import ChildNotice

SAID = "said"  # the wait its words opened
_OUTCOMES: dict[str, Outcome] = {"done": "completed", "error": "failed", "aborted": "cancelled"}


def on_said(st: Step, f: ChildNotice, state: str, kind: str | None) -> None:
    """``f``'s body says ``state`` (and ``kind``, for ``blocked``)."""
    app = st.s.config.words
    st.set(told=True, busy=False)  # its words, not its output going quiet, tell this wait
    for key in ("quiet", "child", SAID):
        end_wait(st, key, f"{app} said {state}")
    if state == "blocked":
        add_wait(st, SAID, None, kind=kind)
        return
    if st.s.run is None:
        start_run(st, "child")
        st.rec("run", run=st.s.run_seq, state="implied", reason=f"{app} said {state}")
    settle(st, _OUTCOMES[state], f"{app} said {state} (its own words)")
