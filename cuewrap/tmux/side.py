"""cuewrap inside tmux: presence from tmux's own view of Pi's pane, cues the user sees in tmux
(docs/tmux-and-ssh.md).

No control-mode client: tmux up to 3.5a crashes (SIGSEGV, every session of the server gone)
when a notification such as ``%session-window-changed`` meets a control client that is still
identifying, and every control client cuewrap started was one more chance of that
(docs/tmux-and-ssh.md#why-no-control-client). ``TmuxSide`` asks tmux short questions instead,
each one ordinary ``tmux`` command (``display-message -p`` for the pane, ``list-clients``) run
off the loop (``control.run_tmux``), and only when something depends on the answer:

- at start, and at every focus report of the pane (with ``focus-events on`` tmux sends them
  for window, pane and session switches, attach and detach);
- before a fact whose cue depends on whether the user is looking (the controller holds it for
  the answer: ``stale``, ``refresh``);
- at a key typed into the pane while the last view says it is not in front;
- every ``POLL`` seconds (``POLL_SLOW`` after ``SLOW_AFTER``) while something waits on a
  change of presence that no focus report would tell (``watch``): a needs-input wait (leaving
  gives its cue), a mark or a notification that the user's return takes away, a message for
  the next client that attaches. Nothing runs while nothing waits.

The answer (``view.PaneView``) is merged with the pane's focus reports
(``view.PresenceMerge``) into the presence the engine gets.

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

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from cuewrap.loop import Loop, Timer
from cuewrap.term.sequences import BEL
from cuewrap.tmux.command import literal
from cuewrap.tmux.control import run_tmux
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

# While something waits on a change of presence that no focus report tells: ask this often
# (seconds), and after SLOW_AFTER seconds of waiting, every POLL_SLOW (a mark can stand all
# night: ~1 tmux command in 4 s, ~1 ms of CPU each, is what a return is worth after that).
POLL = 1.0
POLL_SLOW = 4.0
SLOW_AFTER = 60.0
# A view younger than this is taken as now (a fact is not held for a fresher one).
FRESH = 0.25
# A key typed into the pane asks again when the view is older than this (seconds).
KEY_STALE = 2.0
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
        self.viewed_at = float("-inf")  # when tmux last answered with a view (loop clock)
        self.asked = 0  # questions asked so far (for /cue and the tests)
        self.why = "not started"  # when there is no view: why
        self._asking = False
        self._again = False
        self._after: list[Callable[[PaneView | None], None]] = []
        self._pending: Notify | None = None  # waiting for a client to attach
        self._key_asked = float("-inf")
        self._watch = False  # the session waits on a change of presence (``watch``)
        self._watch_since = 0.0
        self._poll: Timer | None = None
        self._closed = False
        self._reaper = reaper

    # -- life ---------------------------------------------------------------------------------
    def start(self) -> bool:
        if not self.pane or not self.env.get("TMUX"):
            self.why = "TMUX or TMUX_PANE is not set"
            return False
        self.why = "asking tmux"
        if not self.refresh():
            return False
        return True

    @property
    def busy(self) -> bool:
        """A question to tmux is in flight (a delivery may wait on it)."""
        return self._asking

    @property
    def stale(self) -> bool:
        """The last view is not fresh enough to decide a cue by (none, or older than
        ``FRESH``), and tmux can be asked."""
        return not self._closed and self.loop.clock() - self.viewed_at >= FRESH

    def close(self) -> None:
        self._closed = True
        self._stop_poll()

    # -- what waits on presence ---------------------------------------------------------------
    def watch(self, waiting: bool) -> None:
        """Told after every engine step: whether the session waits on a change of presence (a
        needs-input wait pending, a mark or a notification standing). While it does, and no
        focus report would tell the change (``focus-events`` off), tmux is asked every
        ``POLL`` seconds."""
        if waiting and not self._watch:
            self._watch_since = self.loop.clock()
        self._watch = waiting
        self._schedule()

    def _polling(self) -> bool:
        if self._closed:
            return False
        waiting = self._watch or self._pending is not None
        focus_tells = self.view is not None and self.view.focus_events
        return waiting and not focus_tells and self.view is not None

    def _schedule(self) -> None:
        if not self._polling():
            self._stop_poll()
            return
        if self._poll is not None:
            return
        slow = self.loop.clock() - self._watch_since >= SLOW_AFTER and self._pending is None
        self._poll = self.loop.call_later(POLL_SLOW if slow else POLL, self._polled)

    def _polled(self) -> None:
        self._poll = None
        if self._polling():
            self.refresh()  # its answer schedules the next one

    def _stop_poll(self) -> None:
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None

    # -- asking ---------------------------------------------------------------------------------
    def refresh(self, after: Callable[[PaneView | None], None] | None = None) -> bool:
        """Ask tmux for a fresh view (coalesced: one question in flight, one more queued).
        False when tmux could not be run (``after`` is then called at once with None)."""
        if after is not None:
            self._after.append(after)
        if self._asking:
            self._again = True
            return True
        self._asking = True
        self._again = False
        self.asked += 1
        args = ["display-message", "-p", "-t", self.pane, PANE_FORMAT, ";"]
        args += ["list-clients", "-F", CLIENT_FORMAT]
        if not run_tmux(self.loop, self._reaper, self.env, args, self._answered):
            self._asking = False
            self.why = "tmux could not be started"
            self._flush_after(None)
            return False
        return True

    def when_answered(self, callback: Callable[[PaneView | None], None]) -> None:
        """``callback`` once the question in flight is answered (with the view, None when
        there is none); at once when no question is in flight. Asks nothing itself."""
        if self._asking:
            self._after.append(callback)
        else:
            callback(self.view)

    def _answered(self, status: int | None, out: str) -> None:
        self._asking = False
        if self._closed:
            self._flush_after(None)
            return
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
                    state="watching",
                    version=view.version,
                    focus_events=view.focus_events,
                    passthrough=view.passthrough,
                )
            if self.view is None or view.state != self.view.state:
                self.log("tmux_view", state=view.state, clients=len(view.clients))
            self.view = view
            self.viewed_at = self.loop.clock()
        if view is not None:
            if not view.focus_events and self.presence.focus is not None:
                # turned off while Pi runs: no more reports come, the last one would stand
                # for ever (keys and the idle rule decide again)
                self.presence.forget_focus()
                self.log("tmux", state="focus reports off", why="focus-events is off")
            self._show_pending(view)
            self._tell(self.presence.on_tmux(view.state), "tmux")
        self._flush_after(view)
        if self._again and not self._closed:
            self.refresh()
        else:
            self._schedule()

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
        """Keys reach only a pane in front of someone: if tmux's view says otherwise, it is
        old (a client attached or switched since): ask again. A view older than ``KEY_STALE``
        is asked again too, so that what ``/cue`` shows (typed in Pi) is tmux's of now."""
        now = self.loop.clock()
        if now - self._key_asked < 1.0:
            return
        if self.presence.tmux in ("hidden", "visible") or now - self.viewed_at >= KEY_STALE:
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
            if view.flag_works():
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
            return f"tmux: not asked ({self.why}); presence from focus reports and keys"
        age = self.loop.clock() - self.viewed_at
        when = "just now" if age < KEY_STALE else f"{age:.0f} s ago"
        return (
            f"tmux {view.version}: Pi's pane is {view.state} ({len(view.clients)} client"
            f"{'s' if len(view.clients) != 1 else ''} attached, asked {when}); focus-events "
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
