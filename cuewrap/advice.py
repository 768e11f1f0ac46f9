"""What will happen where cuewrap runs (SSH, tmux, the terminal), and the one setting that would fix
each weakness (docs/design.md#real-environments, issue: "doctor and /cue say what to change"). Pure:
the caller gathers the facts, ``cuewrap doctor`` and Pi's ``/cue`` print the lines.
"""

from __future__ import annotations

from dataclasses import dataclass

FOCUS_EVENTS = "set -g focus-events on (in ~/.tmux.conf)"
PASSTHROUGH = "set -g allow-passthrough on (in ~/.tmux.conf)"


@dataclass(frozen=True)
class Where:
    ssh: bool  # SSH_CONNECTION / SSH_TTY / SSH_CLIENT
    tmux: bool  # TMUX
    tmux_version: str = ""
    focus_events: bool | None = None  # tmux's option (None: not in tmux, or not known)
    passthrough: bool | None = None  # tmux's allow-passthrough for Pi's pane
    terminal: str = "unknown"  # the outer terminal, as identified
    focus_reported: bool | None = None  # a focus report was seen (None: cannot be known yet)
    idle_after: float = 60.0
    terminal_notifications: bool = True  # notify.terminal is not off (and a protocol chosen)
    desktop: bool = False
    command: bool = False  # notify.command set
    program: str = "Pi"  # the wrapped program (generic mode: its preset's or command's name)


def situation(w: Where) -> list[str]:
    """One line per layer, outermost first: what cuewrap will do there."""
    lines: list[str] = []
    if w.ssh:
        lines.append(
            "over SSH: terminal notifications travel in-band to the terminal on your side;"
            " desktop notifications are off (they would show on this remote machine)"
        )
    if w.tmux:
        presence = (
            "tmux's focus reports say when your terminal loses focus, and cuewrap also"
            " watches window, pane and session switches and detaching"
            if w.focus_events
            else "cuewrap watches window, pane and session switches and detaching; tmux does"
            " not say when your terminal loses focus (focus-events off)"
        )
        lines.append(f"inside tmux {w.tmux_version}: {presence}".replace("  ", " "))
        lines.append(
            "inside tmux: a reminder for a pane you are not looking at is a status-line message"
            " on your client and the window's bell flag; terminal notifications go through"
            " tmux only from a visible pane"
            + (" (allow-passthrough on)" if w.passthrough else " and allow-passthrough is off")
        )
    lines.append(f"terminal: {w.terminal}")
    return lines


def fixes(w: Where) -> list[str]:
    """``problem: the one setting``, for each weakness."""
    out: list[str] = []
    if w.tmux and w.focus_events is False:
        out.append(
            f"tmux does not tell {w.program}'s pane when your terminal loses focus (only"
            f" switches and detaching count as leaving): {FOCUS_EVENTS}"
        )
    if w.tmux and w.passthrough is False:
        out.append(f"tmux drops terminal notifications from {w.program}'s pane: {PASSTHROUGH}")
    focus_possible = not w.tmux or w.focus_events is True
    if focus_possible and w.focus_reported is False:
        out.append(
            "your terminal has not reported focus, so you count as away only after"
            f" {w.idle_after:g} s without a key: lower presence.idle_after to be reminded sooner"
        )
    if not w.tmux and not (w.terminal_notifications or w.desktop or w.command):
        setting = "notify.command (e.g. a push to your phone)" if w.ssh else "notify.desktop = on"
        out.append(f"no channel can show a notification (title marks only): {setting}")
    return out
