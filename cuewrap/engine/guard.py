"""The terminal guard's rules (docs/terminal-guard.md): which of the child's sequences reach
the host terminal (what cuewrap says when it removed one is in ``wording``), and what follows
a decision (``on_guard_decided``: the log record, the count for ``/cue``, the first removal
said inside Pi). Pure: no clock, no I/O; the byte path hands in the times
(``engine/output.py``), the edge the wall-clock time of a decision.

- Clipboard writes (OSC 52 and its neighbours, ``guard.clipboard``): only right after the
  user's own action; in Pi mode also not while a run streams and not inside a frame Pi draws.
- Sequences that act outside the window — titles, notifications, program status
  (``guard.sequences``): inside a frame the child draws they are content it renders, not its
  own; the output tracker removes them whole under ``own`` (it needs no decision from here, the
  rule is the frame) and cuewrap never takes a fact from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuewrap.engine import wording
from cuewrap.engine.effects import Diagnostic
from cuewrap.engine.state import Removed

if TYPE_CHECKING:
    from cuewrap.engine._step import Step
    from cuewrap.facts import GuardDecided

CLIPBOARD_AFTER_KEY = 2.0  # seconds after a keystroke a clipboard write counts as asked for

SEQUENCE_WHY = "inside a frame the program draws (content it renders, not its own)"


def clipboard_passes(
    setting: str,
    read: bool,
    since_key: float,
    pi: bool,
    run_streaming: bool,
    framed: bool,
) -> tuple[bool, str]:
    """Does a clipboard sequence from the child reach the host terminal, and why.

    ``since_key``: seconds since the user's last keystroke (``inf`` when none); ``pi``: the
    program is Pi (its streaming run and the frames it draws hold the clipboard back)."""
    if setting == "allow":
        return True, "guard.clipboard = allow"
    if setting == "block":
        return False, "guard.clipboard = block"
    if read:
        return False, "a clipboard read (passes only with guard.clipboard = allow)"
    if since_key > CLIPBOARD_AFTER_KEY:
        return False, f"no keystroke in the last {CLIPBOARD_AFTER_KEY:g} s"
    if pi and run_streaming:
        return False, "a run is streaming"
    if pi and framed:
        return False, "inside a frame Pi draws (part of the transcript)"
    return True, "right after your keystroke"


NOT_ASKED = "already on its way (not asked)"  # decided before (its head passed, say)
KITTY_DATA = ("osc5522 data", "osc5522 end")  # a kitty write's data: its start was decided


def on_guard_decided(st: Step, f: GuardDecided) -> None:
    """A clipboard sequence passed or was removed, or a sequence was removed from a frame:
    logged without its payload, counted for ``/cue``, and the first removal said inside Pi
    (the clipboard's once a session; a frame's once a run: Pi repeats an answer at every
    redraw) while Pi's bridge is live."""
    s = st.s
    if f.guard == "clipboard":
        if f.what in KITTY_DATA:
            return
        why = f.why or NOT_ASKED
        st.rec("clipboard", sequence=f.what, passed=f.passed, read=f.read, bytes=f.size,
               setting=s.config.guard_clipboard, why=why)  # fmt: skip
        if f.passed:
            return
        st.set(clip_removed=Removed(s.clip_removed.count + 1, f.at, f.size))
        if not s.clip_told and s.bridge_live:
            st.set(clip_told=True)
            st.fx.append(Diagnostic(wording.clipboard_removed(f.what, f.read, f.size, why)))
        return
    st.rec("guard", sequence=f.what, passed=False, bytes=f.size,
           setting=s.config.guard_sequences, why=SEQUENCE_WHY)  # fmt: skip
    st.set(seq_removed=Removed(s.seq_removed.count + 1, f.at, f.size))
    run = s.run.id if s.run is not None else s.last_run
    key = -1 if run is None else run
    if s.seq_told != key and s.bridge_live:
        st.set(seq_told=key)
        st.fx.append(Diagnostic(wording.sequence_removed(f.what, f.size)))
