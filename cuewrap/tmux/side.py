"""cuewrap inside tmux: presence from tmux's own events, cues the user sees in tmux
(docs/design.md#real-environments).

``TmuxSide`` owns one control-mode client (``control.ControlClient``) on the relay loop. Every
notification that can change who looks at Pi's pane (window, pane and session switches,
attach, detach) makes it ask tmux two short questions through that client (the pane, the
clients); the answer (``view.PaneView``) is merged with the pane's focus reports
(``view.PresenceMerge``) into the presence the engine gets. Nothing runs while nothing happens.
When the control client is replaced (another kind, or restarted after it ended), changes made
while no client listened are told to none: the view is asked again once the new one is up.

A notification is delivered from a fresh view: what the delivery depends on that can change
while Pi runs (``allow-passthrough``, the pane shown or not, the clients attached and their
terminals) is read when deciding, never kept from the start:

- the terminal OSC and the desktop notification: decided by the session's ``Delivery`` from that
  view (``deliver``; one popup per cue), the OSC DCS-wrapped, only from a pane a client shows;
- clients in front of another pane, window or session: a status-line message on each of them
  (``display-message -c``, for ``MESSAGE_MS`` or until their next key), naming the session and
  window;
- Pi's window not current in its session: one BEL from the pane, which sets the window's bell
  flag in the status line (``monitor-bell``, on by default);
- no client attached at all: the message waits and is shown on the client that attaches next,
  if the cue still holds then.

Collaborators are passed in; every delivery state goes to ``record``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from cuewrap.loop import Loop, Timer
from cuewrap.term.sequences import BEL
from cuewrap.tmux.control import ControlClient, Kind, run_tmux
from cuewrap.tmux.protocol import Notification, literal
from cuewrap.tmux.view import (
    CLIENT_FORMAT,
    PANE_FORMAT,
    FocusState,
    Live,
    Merged,
    PaneView,
    PresenceMerge,
    TmuxInfo,
    parse_view,
)
from cuewrap.workers import Reaper

if TYPE_CHECKING:
    from cuewrap.engine.effects import Eligibility, Notify

# notifications after which who-looks-at-what may have changed
WATCHED = frozenset(
    {
        "session-window-changed",
        "window-pane-changed",
        "client-session-changed",
        "client-detached",
        "session-changed",
        "sessions-changed",
        "unlinked-window-add",
        "unlinked-window-close",
        "window-close",
        "session-renamed",
        "window-renamed",
    }
)
RECONNECTS = 3  # times the control client is restarted when it ends
RECONNECT_DELAY = 0.25  # seconds, doubled each time
STEADY = 10.0  # a control client that lived this long starts the restart count afresh
# How long a cue's status-line message stands (ms; a key ends it earlier). Bounded: while a
# message stands, tmux draws none of the panes' output on that client (it freezes its
# terminal; a full redraw comes when the message goes), so "until the next key" froze the
# user's view of whatever they were watching for as long as they did not type.
MESSAGE_MS = 4000

#: The states of the delivery records tmux's own messages and flags go through: a subset of
#: ``cuewrap.deliver.DeliveryState``, so the session's ``Delivery.record`` takes them.
TmuxState = Literal["requested", "delivered", "failed", "dropped-ineligible", "off", "waiting"]
RecordDelivery = Callable[[int, str, TmuxState, str], None]  # (cue id, channel, state, reason)


class TmuxSide:
    def __init__(
        self,
        loop: Loop,
        env: Mapping[str, str],
        *,
        on_presence: Callable[[Merged, str], None],
        inject: Callable[[bytes], None],
        is_eligible: Callable[[Eligibility], bool],
        record: RecordDelivery,
        log: Callable[..., None],
        reaper: Reaper,
    ) -> None:
        self.loop = loop
        self.env = env
        self.pane = env.get("TMUX_PANE", "")
        self.on_presence = on_presence
        self.inject = inject
        self.is_eligible = is_eligible
        self.record = record
        self.log = log
        self.presence = PresenceMerge()
        self.view: PaneView | None = None
        self.why = "not started"  # when there is no view: why
        self._client: ControlClient | None = None
        self._asking = False
        self._again = False
        self._after: list[Callable[[PaneView | None], None]] = []
        self._pending: Notify | None = None  # waiting for a client to attach
        self._restarts = 0
        self._key_asked = float("-inf")
        self._started_at = 0.0
        self._retry_timer: Timer | None = None
        self._ask_when_up = False  # a client replaced another: ask again once it is up
        # the client a new one replaces, kept until the new one is up (see _listen)
        self._retiring: ControlClient | None = None
        self._closed = False
        self._reaper = reaper

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> bool:
        if not self.pane or not self.env.get("TMUX"):
            self.why = "TMUX or TMUX_PANE is not set"
            return False
        if not self._listen("listen"):
            self.why = "tmux could not be started"
            return False
        self.why = "asking tmux"
        self.refresh()
        return True

    def _listen(self, kind: Kind) -> bool:
        """(Re)start the control client as ``kind`` (see ``cuewrap.tmux.control``). A client
        that replaces another starts first; the old one is closed once the new one is up
        (``_on_up``): tmux 3.3a's server was seen to crash (SIGSEGV) in about one of six tries
        when a control client left and an attached one came at the same moment, followed by
        a ``select-window`` (docs/tmux-and-ssh.md). Meanwhile the old one still tells of
        every change."""
        old, self._client = self._client, None
        self._retire()  # one still waiting from an earlier switch
        client = ControlClient(
            self.loop,
            self.env,
            kind,
            self.pane,
            on_notification=self._on_notification,
            on_exit=lambda: self._on_exit() if self._client is client else None,
            reap=lambda proc: reaper_add(self._reaper, proc),
            on_up=self._on_up,
        )
        if not client.start():
            if old is None:
                return False  # at start: start() says so
            old.close()  # closing does not call its on_exit
            # replacing one: as if it had ended (restarted with the same policy; its first
            # line then asks tmux again, as below)
            self._client = client
            self._started_at = self.loop.clock()
            self.log("tmux", state="not started", client=kind)
            self._on_exit()
            return False
        self._ask_when_up = old is not None  # at start, start() asks
        self._retiring = old
        self._client = client
        self._started_at = self.loop.clock()
        self.log("tmux", state="listening", client=kind)
        return True

    def _choose_kind(self, view: PaneView) -> None:
        """``listen`` when tmux's own focus reports say attach/switch/detach, else ``attach``
        (read live: a change of ``focus-events`` while cuewrap runs is followed)."""
        want: Kind = "listen" if view.focus_events else "attach"
        client = self._client
        if client is not None and client.running and client.kind != want:
            self._listen(want)  # asks again once the new client is up (_on_up)

    def _on_up(self) -> None:
        """The new control client is among tmux's clients: a switch made between the old
        one's end and now was told to neither (asking right after the spawn could be answered
        before tmux had the new one): ask now."""
        self._retire()
        if self._ask_when_up and not self._closed:
            self._ask_when_up = False
            self.refresh()

    def _retire(self) -> None:
        """Close the client a new one replaced (closing does not call its on_exit)."""
        old, self._retiring = self._retiring, None
        if old is not None:
            old.close()

    @property
    def busy(self) -> bool:
        """A question to tmux is in flight (a delivery may wait on it)."""
        return self._asking

    @property
    def watching(self) -> bool:
        return self._client is not None and self._client.running

    def close(self) -> None:
        self._closed = True
        if self._retry_timer is not None:
            self._retry_timer.cancel()
        if self._client is not None:
            self._client.close()
        self._retire()

    def _on_exit(self) -> None:
        """The control client ended (the server restarted, or it was killed): restart it a
        few times; after that, tmux's view goes and presence is the focus reports' alone."""
        if self._closed:
            return
        self._retire()  # the new one ended before it was up: the old one goes too, as before
        if self.loop.clock() - self._started_at >= STEADY:
            self._restarts = 0  # e.g. the user's `detach-client -s` took it along
        if self._restarts >= RECONNECTS:
            self.why = "tmux's control client keeps ending"
            self.log("tmux", state="gone", why=self.why)
            self.view = None
            self._tell(self.presence.on_tmux(None), "tmux")
            return
        delay = RECONNECT_DELAY * (2**self._restarts)
        self._restarts += 1
        self.log("tmux", state="restarting", retry_in=delay)
        self._retry_timer = self.loop.call_later(delay, self._restart)

    def _restart(self) -> None:
        self._retry_timer = None
        if self._closed or self._client is None:
            return
        if not self._client.start():
            self._on_exit()  # once more later, a few times at most
            return
        self._ask_when_up = True
        self._started_at = self.loop.clock()
        self.log("tmux", state="listening", client=self._client.kind)
        self.refresh()

    # -- asking ---------------------------------------------------------------------------------
    def _on_notification(self, note: Notification) -> None:
        if note.name in WATCHED:
            self.refresh()

    def refresh(self, after: Callable[[PaneView | None], None] | None = None) -> None:
        """Ask tmux for a fresh view (coalesced: one question in flight, one more queued)."""
        if after is not None:
            self._after.append(after)
        if self._asking:
            self._again = True
            return
        self._asking = True
        self._again = False
        args = ["display-message", "-p", "-t", self.pane, PANE_FORMAT, ";"]
        args += ["list-clients", "-F", CLIENT_FORMAT]
        if not run_tmux(self.loop, self._reaper, self.env, args, self._answered):
            self._asking = False
            self.why = "tmux could not be started"
            self._flush_after(None)

    def _answered(self, status: int | None, out: str) -> None:
        self._asking = False
        lines = tuple(out.splitlines())
        view = parse_view(lines[:1], lines[1:]) if status == 0 else None
        if view is None:
            self.why = f"tmux did not describe the pane (status {status})"
            self.log("tmux", state="no view", why=self.why)
        else:
            self.why = ""
            if self.view is None:
                self.log(
                    "tmux",
                    state="watching" if self.watching else "asked (not watching)",
                    version=view.version,
                    focus_events=view.focus_events,
                    passthrough=view.passthrough,
                )
            if self.view is None or view.state != self.view.state:
                self.log("tmux_view", state=view.state, clients=len(view.clients))
            self.view = view
        if view is not None:
            if not view.focus_events and self.presence.focus is not None:
                # turned off while Pi runs: no more reports come, the last one would stand
                # for ever (keys and the idle rule decide again)
                self.presence.forget_focus()
                self.log("tmux", state="focus reports off", why="focus-events is off")
            self._choose_kind(view)
            self._show_pending(view)
            self._tell(self.presence.on_tmux(view.state), "tmux")
        self._flush_after(view)
        if self._again and not self._closed:
            self.refresh()

    def _flush_after(self, view: PaneView | None) -> None:
        after, self._after = self._after, []
        for callback in after:
            callback(view)

    # -- presence -------------------------------------------------------------------------------
    def focus(self, state: FocusState) -> None:
        """A focus report of the pane (tmux sends them only with ``focus-events on``, also
        for attach, detach and switches: the view is asked again)."""
        self._tell(self.presence.on_focus(state), "focus")
        self.refresh()

    def keystroke(self) -> None:
        """Keys reach only a pane in front of someone: if tmux's view says otherwise, it missed
        a change (a client attached or switched while only listening): ask again."""
        now = self.loop.clock()
        if self.presence.tmux in ("hidden", "visible") and now - self._key_asked >= 1.0:
            self._key_asked = now
            self.refresh()

    def _tell(self, merged: Merged | None, via: str) -> None:
        if merged is None:
            return
        if self.presence.tmux in ("hidden", "visible"):
            via = "tmux"
        self.on_presence(merged, via)

    # -- delivery -------------------------------------------------------------------------------
    def notify(self, n: Notify, deliver: Callable[[Notify, Live | None], None]) -> None:
        """Deliver ``n`` from a fresh view: ``deliver`` (the session's terminal and desktop
        paths) with what tmux says now, or with None when tmux cannot be asked (then what was
        decided at start holds); then tmux's own interface."""

        def after(view: PaneView | None) -> None:
            if not self.is_eligible(n.eligibility):
                self.record(n.cue_id, "tmux", "dropped-ineligible", "no longer holds")
                return
            if view is None:
                self.record(n.cue_id, "tmux", "off", self.why or "tmux could not be asked")
                deliver(n, None)
                return
            deliver(n, live(view))
            self._deliver(n, view)

        self.refresh(after)

    def _deliver(self, n: Notify, view: PaneView) -> None:
        cue = n.cue_id
        # tmux's own interface
        if view.state != "active":
            if view.clients:
                self._message(n, view, view.clients_elsewhere())
            else:
                self._pending = n
                self.record(cue, "tmux", "waiting", "no client attached: shown at the next attach")
            if view.flag_works(self._client is not None and self._client.kind == "attach"):
                self.inject(BEL)
                self.record(cue, "tmux-flag", "requested", "BEL: tmux flags the window")
            else:
                why = "monitor-bell is off" if not view.monitor_bell else "Pi's window is current"
                self.record(cue, "tmux-flag", "off", why)

    def _message(self, n: Notify, view: PaneView, clients: tuple[str, ...]) -> None:
        if not clients:
            return
        text = literal(f"{n.title}: {n.body} ({view.where()})")
        args: list[str] = []
        ms = str(MESSAGE_MS)
        for name in clients:
            args += [*([";"] if args else []), "display-message", "-c", name, "-d", ms, text]
        cue, where = n.cue_id, ", ".join(clients)

        def done(status: int | None, out: str) -> None:
            state: TmuxState = "delivered" if status == 0 else "failed"
            self.record(cue, "tmux", state, f"status-line message on {where}")

        if not run_tmux(self.loop, self._reaper, self.env, args, done):
            self.record(cue, "tmux", "failed", "tmux could not be started")

    def _show_pending(self, view: PaneView) -> None:
        n = self._pending
        if n is None or not view.clients:
            return
        self._pending = None
        if self.is_eligible(n.eligibility):
            self._message(n, view, tuple(c.name for c in view.clients))
        else:
            self.record(n.cue_id, "tmux", "dropped-ineligible", "no longer holds at attach")

    def live_now(self) -> Live | None:
        """What the last view said (for /cue and the progress indicator; a delivery asks
        afresh); None before tmux has answered or when it cannot be asked."""
        return live(self.view) if self.view is not None else None

    # -- what the user sees on /cue -------------------------------------------------------------
    def status_line(self) -> str:
        view = self.view
        if view is None:
            return f"tmux: not watched ({self.why}); presence from focus reports and keys"
        return (
            f"tmux {view.version}: Pi's pane is {view.state} ({len(view.clients)} client"
            f"{'s' if len(view.clients) != 1 else ''} attached); focus-events "
            f"{'on' if view.focus_events else 'off'}, allow-passthrough "
            f"{'on' if view.passthrough else 'off'}"
        )


def live(view: PaneView) -> Live:
    """What a delivery depends on, from a view: ``allow-passthrough`` as read now (a tmux
    before 3.3 passes DCS always, already folded into ``view.passthrough``), the terminal of
    the client that shows Pi's pane, and whether any client shows its window."""
    looker = view.looker()
    info = TmuxInfo(
        "on" if view.passthrough else "off",
        looker.termname if looker is not None else "",
        looker.termtype if looker is not None else "",
        view.version,
    )
    return Live(info, view.shown)


def reaper_add(reaper: Reaper, proc: subprocess.Popen[bytes]) -> None:
    """A control client told to end (stdin closed): reaped, KILLed if it lingers a second."""
    reaper.add(proc, 1.0)
