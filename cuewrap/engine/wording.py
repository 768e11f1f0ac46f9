"""What cuewrap says: notification text (docs/design.md#cue-rules rules 9 and 12), and the
lines it shows inside Pi. Pure.

A notification names the app ("Pi", or in generic mode the program: a preset's name, the
command, or the ``app=`` of its OSC 7501 reports), the session label (Pi's session name or the cwd
basename) and the status. Nothing else: the facts carry no prompt, question, answer, tool
output or assistant text, so there is none to leak.
"""

from __future__ import annotations

from cuewrap.engine import summary
from cuewrap.engine.effects import Outcome

APP = "Pi"
LABEL_MAX = 80

_FINISHED = {
    "completed": "Finished",
    "failed": "Failed",
    "cancelled": "Cancelled",
    "uncertain": "Finished (outcome unknown)",
}


def clean_label(label: str | None) -> str:
    """Printable, single line, at most LABEL_MAX characters."""
    if not label:
        return ""
    text = "".join(ch if ch.isprintable() else " " for ch in label)
    text = " ".join(text.split())
    return text[:LABEL_MAX]


def clean_text(text: str, cap: int) -> str:
    """A child's own notification text: one safe line (``summary.clean``: no escape sequences,
    controls or bidi overrides), at most ``cap`` characters."""
    return summary.clean(text)[:cap].rstrip()


def title(label: str | None, app: str = APP) -> str:
    lab = clean_label(label)
    return f"{app} — {lab}" if lab else app


def _tasks(n: int) -> str:
    return f"{n} background task{'s' if n != 1 else ''} still running"


def _with_background(text: str, running: int) -> str:
    # Rule 9: parent idle is not children done; never say "all done".
    return f"{text}; {_tasks(running)}" if running > 0 else text


def needs_input() -> str:
    return "Needs your input"


def seems_waiting() -> str:
    """Only the output going quiet says so (generic mode): never more certain than that."""
    return "Seems to be waiting"


def finished(outcome: Outcome, *, seems: bool = False, background_running: int = 0) -> str:
    text = "Seems to have finished" if seems else _FINISHED[outcome]
    return _with_background(text, background_running)


def background(success: bool, *, background_running: int = 0) -> str:
    text = "Background task finished" if success else "Background task failed"
    return _with_background(text, background_running)


def exited(code: int | None, signal: int | None) -> str:
    if signal is not None:
        return f"Was killed (signal {signal})"
    if code:
        return f"Exited (status {code})"
    return "Exited"


def sentence(body: str, app: str = APP) -> str:
    """The body as one sentence naming the app: ``Pi finished; 2 background tasks …``."""
    return f"{app} {body[:1].lower()}{body[1:]}"


# -- shown inside Pi (the bridge's notices) -------------------------------------------------------
def in_pi(text: str) -> str:
    """A line cuewrap shows inside Pi: said to be cuewrap's."""
    return f"cuewrap: {text}"


_CLIPBOARD = {
    # sequence -> (what a write is, what a read is)
    "osc52": ("clipboard write (OSC 52", "clipboard read (OSC 52"),
    "osc1337 Copy": ("clipboard write (iTerm2 OSC 1337 Copy=",) * 2,
    "osc1337 File": ("file download (iTerm2 OSC 1337 File=",) * 2,
    "osc5522": ("clipboard write (kitty OSC 5522", "clipboard read (kitty OSC 5522"),
}


def clipboard_removed(sequence: str, read: bool, size: int, why: str) -> str:
    """The first clipboard sequence the guard removed from Pi's output (docs/terminal-guard.md):
    what it was, its size, why; never its content."""
    write_what, read_what = _CLIPBOARD.get(sequence, (f"clipboard sequence ({sequence}",) * 2)
    what = read_what if read else write_what
    return (
        f"removed a {what}, {size} bytes) from Pi's output:"
        f" {why}. It never reached your terminal; /cue counts them,"
        " guard.clipboard = allow lets them through."
    )


# what each guarded sequence is (term/clipboard.py's GUARDED_WHATS), for the notice inside Pi
SEQUENCE_NAMES = {
    "osc0": "window title (OSC 0)",
    "osc1": "icon title (OSC 1)",
    "osc2": "window title (OSC 2)",
    "osc9": "notification or progress (OSC 9)",
    "osc777": "notification (OSC 777)",
    "osc99": "notification (OSC 99)",
    "osc7501": "program status report (OSC 7501)",
    "osc21337": "program status (OSC 21337)",
    # content that acts outside the window (cuewrap.term.content)
    "da1": "device attributes query (DA1)",
    "da2": "device attributes query (DA2)",
    "da3": "device attributes query (DA3)",
    "dsr": "status or cursor position query (DSR)",
    "window-report": "window report query (CSI t)",
    "decrqm": "mode query (DECRQM)",
    "decreqtparm": "terminal parameters query (DECREQTPARM)",
    "decrqpsr": "presentation state query (DECRQPSR)",
    "decrqtsr": "terminal state query (DECRQTSR)",
    "decrqcra": "screen checksum query (DECRQCRA)",
    "decrqde": "displayed extent query (DECRQDE)",
    "decrqlp": "locator position query (DECRQLP)",
    "xtreportsgr": "rendition query (XTREPORTSGR)",
    "xtqmodkeys": "key modifier query (XTQMODKEYS)",
    "xtsmgraphics": "graphics attribute query (XTSMGRAPHICS)",
    "xtversion": "terminal version query (XTVERSION)",
    "kitty-keyboard-query": "keyboard protocol query (CSI ? u)",
    "decrqss": "setting query (DECRQSS)",
    "xtgettcap": "terminfo query (XTGETTCAP)",
    "dcs-tmux": "tmux passthrough (DCS tmux;)",
    "dcs": "device control string (DCS)",
    "kitty-graphics-file": "kitty image read from a file or shared memory",
    "c1": "C1 control character",
    "osc7": "current directory (OSC 7)",
    "osc50": "font change or query (OSC 50)",
    "osc1337": "iTerm2 command (OSC 1337)",
}
# colour and palette queries (term/clipboard.py's QUERY_PS): the terminal would answer them
SEQUENCE_NAMES |= {
    f"osc{n} query": f"{what} query (OSC {n})"
    for n, what in (
        (4, "palette colour"),
        (5, "special colour"),
        (10, "text colour"),
        (11, "background colour"),
        (12, "cursor colour"),
        (13, "pointer colour"),
        (14, "pointer colour"),
        (15, "Tektronix colour"),
        (16, "Tektronix colour"),
        (17, "highlight colour"),
        (18, "Tektronix colour"),
        (19, "highlight colour"),
        (21, "colour"),
        (22, "pointer shape"),
    )
}


def sequence_removed(what: str, size: int) -> str:
    """The first title, notification or status report removed from an answer in a run
    (docs/terminal-guard.md, guard.sequences): what it was and its size; never its content."""
    name = SEQUENCE_NAMES.get(what, what)
    return (
        f"removed a {name}, {size} bytes, from an answer Pi shows: a model's text cannot pose"
        " as Pi or cuewrap. It never reached your terminal; /cue counts them,"
        " guard.sequences = allow lets them through."
    )
