"""What tmux says about Pi's pane, and what that means for presence (pure, no I/O).

Definitions (docs/design.md#real-environments), for Pi's pane P in window W:

- *active*: some attached user client (not a control client) shows W as its session's current
  window and P as W's active pane: the user is looking at Pi unless their terminal lost focus.
- *visible*: some attached user client shows W (P may be an inactive pane of a split). tmux
  passes a pane's DCS passthrough on only then.
- *hidden*: neither. tmux sets W's bell flag for a BEL from P only when W is not its session's
  current window, or the session has no client attached at all.

``PresenceMerge`` merges what tmux says with the focus reports of the pane: a pane that is not
active is ``away`` whatever focus said last; an active pane defers to the focus reports (with
``focus-events on`` tmux sends them for the outer terminal and for pane/window switches alike),
and without any it is ``unknown`` (keystrokes and the idle rule decide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cuewrap.tmux.command import passthrough_allowed


@dataclass(frozen=True)
class TmuxInfo:
    """What tmux says about the pane cuewrap runs in and the client looking at it."""

    # effective allow-passthrough of the pane: "on" | "all" | "off";
    # None: tmux older than 3.3, which has no such option and always passes DCS through
    allow_passthrough: str | None
    client_termname: str = ""  # the outer terminal's TERM
    client_termtype: str = ""  # the outer terminal's XTVERSION answer, e.g. "kitty(0.35.2)"
    version: str = ""


@dataclass(frozen=True)
class Live:
    """What tmux says about Pi's pane now, read at a delivery (this module's fresh view):
    ``allow-passthrough``, tmux's version and the terminal of the client that shows the pane
    (in ``info``), and whether any client shows Pi's window (tmux drops a hidden pane's
    passthrough)."""

    info: TmuxInfo
    shown: bool


# What cuewrap asks (one display-message for the pane, one list-clients); tab-separated.
PANE_FORMAT = "\t".join(
    (
        "#{session_id}",
        "#{session_name}",
        "#{window_id}",
        "#{window_index}",
        "#{window_name}",
        "#{window_active}",
        "#{pane_id}",
        "#{allow-passthrough}",
        "#{focus-events}",
        "#{monitor-bell}",
        "#{version}",
    )
)
CLIENT_FORMAT = "\t".join(
    (
        "#{client_name}",
        "#{client_control_mode}",
        "#{session_id}",
        "#{window_id}",
        "#{pane_id}",
        "#{client_flags}",
        "#{client_termname}",
        "#{client_termtype}",  # last: the terminal's own words (XTVERSION), kept whole
    )
)

TmuxPresence = Literal["active", "visible", "hidden"]


@dataclass(frozen=True)
class Client:
    name: str
    session_id: str
    window_id: str
    pane_id: str
    focused: bool  # tmux's view of the client terminal's focus (only with focus-events on)
    termname: str = ""  # the client terminal's TERM
    termtype: str = ""  # the client terminal's XTVERSION answer (tmux 3.3+), e.g. "kitty(0.36.0)"


@dataclass(frozen=True)
class PaneView:
    session_id: str
    session_name: str
    window_id: str
    window_index: str
    window_name: str
    window_active: bool  # Pi's window is its session's current window
    pane_id: str
    passthrough: bool  # allow-passthrough is on (or all), read when this view was taken
    focus_events: bool
    monitor_bell: bool
    version: str
    clients: tuple[Client, ...]  # attached user clients (control clients left out)

    @property
    def state(self) -> TmuxPresence:
        if any(c.window_id == self.window_id and c.pane_id == self.pane_id for c in self.clients):
            return "active"
        if any(c.window_id == self.window_id for c in self.clients):
            return "visible"
        return "hidden"

    @property
    def shown(self) -> bool:
        return self.state != "hidden"

    def clients_elsewhere(self) -> tuple[str, ...]:
        """User clients in front of another pane, window or session: where a message goes."""
        return tuple(
            c.name
            for c in self.clients
            if not (c.window_id == self.window_id and c.pane_id == self.pane_id)
        )

    def flag_works(self) -> bool:
        """A BEL from Pi's pane sets its window's bell flag: ``monitor-bell`` is on, and the
        window is not its session's current window or no client is attached to the session
        (tmux flags only those)."""
        attached = any(c.session_id == self.session_id for c in self.clients)
        return self.monitor_bell and (not self.window_active or not attached)

    def looker(self) -> Client | None:
        """The client whose terminal a notification from Pi's pane would reach: one in front of
        the pane, else one showing its window, else any (None: nobody attached)."""
        for c in self.clients:
            if c.window_id == self.window_id and c.pane_id == self.pane_id:
                return c
        for c in self.clients:
            if c.window_id == self.window_id:
                return c
        return self.clients[0] if self.clients else None

    def where(self) -> str:
        """``session work, window 0 (pi)``: where Pi is, for a message."""
        name = f" ({self.window_name})" if self.window_name else ""
        return f"session {self.session_name}, window {self.window_index}{name}"


def _on(value: str) -> bool:
    return value.strip().lower() in ("1", "on", "all", "yes")


def parse_view(pane_lines: tuple[str, ...], client_lines: tuple[str, ...]) -> PaneView | None:
    """The view from the two answers; None when the pane line is not what was asked."""
    if not pane_lines:
        return None
    f = pane_lines[0].split("\t")
    if len(f) != PANE_FORMAT.count("\t") + 1 or not f[6].startswith("%"):
        return None
    clients: list[Client] = []
    fields = CLIENT_FORMAT.count("\t") + 1
    for line in client_lines:
        c = line.split("\t", fields - 1)  # the last field (termtype) kept whole
        if len(c) != fields or c[1] == "1":
            continue  # malformed, or a control client (an iTerm2 or another program's)
        flags = set(c[5].split(","))
        if flags & {"exited", "suspended", "dead"}:
            continue  # going away, or stopped with C-z: nobody looks through it
        termtype = c[7][:100]  # bounded: the outer terminal's own words
        clients.append(Client(c[0], c[2], c[3], c[4], "focused" in flags, c[6][:100], termtype))
    return PaneView(
        session_id=f[0],
        session_name=f[1],
        window_id=f[2],
        window_index=f[3],
        window_name=f[4],
        window_active=_on(f[5]),
        pane_id=f[6],
        passthrough=passthrough_allowed(f[7], f[10]),
        focus_events=_on(f[8]),
        monitor_bell=_on(f[9]),
        version=f[10],
        clients=tuple(clients),
    )


FocusState = Literal["focused", "away"]
Merged = Literal["focused", "away", "unknown"]


class PresenceMerge:
    """Merges the pane's focus reports with tmux's view; ``update`` returns the merged
    presence when it changed (None otherwise)."""

    def __init__(self) -> None:
        self.focus: FocusState | None = None  # last focus report of the pane
        self.tmux: TmuxPresence | None = None  # None: tmux has not said (or cannot)
        self.merged: Merged | None = None  # last merged value told

    def value(self) -> Merged:
        if self.tmux in ("hidden", "visible"):
            return "away"  # another pane, window or session is in front, or nobody attached
        if self.focus is not None:
            return self.focus
        return "unknown"

    def on_focus(self, direction: FocusState) -> Merged | None:
        self.focus = direction
        return self._changed()

    def forget_focus(self) -> None:
        """tmux no longer passes the terminal's focus on (``focus-events`` turned off): the
        last report no longer says anything (the next merge is without it)."""
        self.focus = None

    def on_tmux(self, state: TmuxPresence | None) -> Merged | None:
        self.tmux = state
        return self._changed()

    def _changed(self) -> Merged | None:
        new = self.value()
        if new == self.merged:
            return None
        first = self.merged is None
        self.merged = new
        if first and new == "unknown":
            return None  # nothing known yet: the engine already starts there
        return new
