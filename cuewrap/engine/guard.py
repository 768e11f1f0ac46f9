"""The terminal guard's rules (docs/terminal-guard.md): which of the child's sequences reach
the host terminal (what cuewrap says when it removed one is in ``wording``). Pure: no clock,
no I/O; the controller hands in the times and the state it read.

- Clipboard writes (OSC 52 and its neighbours, ``guard.clipboard``): only right after the
  user's own action; in Pi mode also not while a run streams and not inside a frame Pi draws.
- Sequences that act outside the window — titles, notifications, program status
  (``guard.sequences``): inside a frame the child draws they are content it renders, not its
  own; the output tracker removes them whole under ``own`` (it needs no decision from here, the
  rule is the frame) and cuewrap never takes a fact from them.
"""

from __future__ import annotations

CLIPBOARD_AFTER_KEY = 2.0  # seconds after a keystroke a clipboard write counts as asked for

SEQUENCE_WHY = "inside a frame the program draws (content it renders, not its own)"


def clipboard_passes(
    setting: str,
    read: bool,
    since_key: float,
    pi_mode: bool,
    run_streaming: bool,
    framed: bool,
) -> tuple[bool, str]:
    """Does a clipboard sequence from the child reach the host terminal, and why.

    ``since_key``: seconds since the user's last keystroke (``inf`` when none)."""
    if setting == "allow":
        return True, "guard.clipboard = allow"
    if setting == "block":
        return False, "guard.clipboard = block"
    if read:
        return False, "a clipboard read (passes only with guard.clipboard = allow)"
    if since_key > CLIPBOARD_AFTER_KEY:
        return False, f"no keystroke in the last {CLIPBOARD_AFTER_KEY:g} s"
    if pi_mode and run_streaming:
        return False, "a run is streaming"
    if pi_mode and framed:
        return False, "inside a frame Pi draws (part of the transcript)"
    return True, "right after your keystroke"
