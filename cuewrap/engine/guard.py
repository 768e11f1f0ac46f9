"""The terminal guard's rules (docs/terminal-guard.md): which of the child's sequences reach
the host terminal, and how cuewrap says that it removed one. Pure: no clock, no I/O; the
controller hands in the times and the state it read.

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

# what each guarded sequence is, for the log's readers and the notice inside Pi
SEQUENCE_NAMES = {
    "osc0": "window title (OSC 0)",
    "osc1": "icon title (OSC 1)",
    "osc2": "window title (OSC 2)",
    "osc9": "notification or progress (OSC 9)",
    "osc777": "notification (OSC 777)",
    "osc99": "notification (OSC 99)",
    "osc7501": "program status report (OSC 7501)",
    "osc21337": "program status (OSC 21337)",
}

_CLIP_NAMES = {
    "osc52": ("clipboard write (OSC 52", "clipboard read (OSC 52"),
    "osc1337 Copy": ("clipboard write (iTerm2 OSC 1337 Copy=", ""),
    "osc1337 File": ("file download (iTerm2 OSC 1337 File=", ""),
    "osc5522": ("clipboard write (kitty OSC 5522", "clipboard read (kitty OSC 5522"),
}


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


def clipboard_notice(what: str, read: bool, size: int, why: str) -> str:
    """What cuewrap says inside Pi the first time it removes a clipboard sequence."""
    names = _CLIP_NAMES.get(what)
    name = (names[1] or names[0]) if names is not None and read else None
    if name is None:
        name = names[0] if names is not None else f"clipboard sequence ({what}"
    return (
        f"removed a {name}, {size} bytes) from Pi's output:"
        f" {why}. It never reached your terminal; /cue counts them,"
        " guard.clipboard = allow lets them through."
    )


def sequence_notice(what: str, size: int) -> str:
    """What cuewrap says inside Pi the first time in a run it removes a guarded sequence."""
    name = SEQUENCE_NAMES.get(what, what)
    return (
        f"removed a {name}, {size} bytes, from an answer Pi shows: a model's text cannot pose"
        " as Pi or cuewrap. It never reached your terminal; /cue counts them,"
        " guard.sequences = allow lets them through."
    )
