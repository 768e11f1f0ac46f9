"""``/cue`` in Pi (through the bridge): ``on`` / ``off``, ``mute`` / ``unmute``, and the page
(docs/design.md#what-the-user-sees): ``engine.page.cue_page`` from the engine's status and
what this session's parts report, with the advice for where it runs (``cuewrap.advice``).

Inside tmux the keys of ``/cue`` ask tmux afresh when its last answer is old
(``TmuxSide.keystroke``); that answer comes back a moment later, often after Pi has sent the
request. The page then waits for it, at most ``TMUX_WAIT`` s (Pi waits 3 s for a reply),
so that what it says of tmux is tmux's of now, not of two seconds ago."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from cuewrap.advice import Where, fixes
from cuewrap.engine import status
from cuewrap.engine.page import BridgeCounts, GuardCounts, cue_page, toggle_reply

if TYPE_CHECKING:
    from cuewrap.config import Settings
    from cuewrap.engine import EngineState
    from cuewrap.engine.state import Removed
    from cuewrap.loop import Loop
    from cuewrap.wiring.parts import Parts


#: the longest the page waits for tmux's answer to a question in flight (seconds)
TMUX_WAIT = 1.0


class CuePage:
    def __init__(self, loop: Loop, settings: Settings, env: Mapping[str, str], made: Parts) -> None:
        self.loop = loop
        self.settings = settings
        self.env = env
        self.made = made
        self._fallback: str | None = None  # the output tracker failed: what guards instead

    def fell_back(self, note: str) -> None:
        """The output tracker failed (``relay.events.GuardFellBack``): ``note`` says what
        guards the output instead; the page says it too."""
        self._fallback = note

    def reply(
        self, action: str, state: Callable[[], EngineState], reply: Callable[[str], None]
    ) -> None:
        """The reply to ``/cue ACTION``, given to ``reply`` now, or once tmux has answered
        the question in flight (at most ``TMUX_WAIT`` s); ``state``: the engine's, then."""
        if action in ("on", "off"):
            reply(toggle_reply(action == "on"))
            return
        attention = self.made.attention
        if attention is not None:  # /cue mute [DURATION], /cue unmute
            said = attention.request(action)
            if said is not None:
                reply(said)
                return
        tmux = self.made.tmux
        if tmux is None or not tmux.busy:
            reply(self.page(state()))
            return
        timer = None

        def now(_: object = None) -> None:
            nonlocal timer
            if timer is None:  # answered already
                return
            timer.cancel()
            timer = None
            text = "cuewrap: internal error (see the decision log)"
            try:  # a failure is the loop's to log; Pi still gets its answer
                text = self.page(state())
            finally:
                reply(text)

        timer = self.loop.call_later(TMUX_WAIT, now)
        tmux.when_answered(now)

    def page(self, s: EngineState) -> str:
        made, guard = self.made, self.settings.guard
        bridge = BridgeCounts.from_stats(made.bridge.stats()) if made.bridge is not None else None
        page = cue_page(
            status(s),
            made.delivery.channels(),
            bridge,
            _counts(guard.clipboard, s.clip_removed),
            sequences=_counts(guard.sequences, s.seq_removed),
            tmux=made.tmux.status_line() if made.tmux is not None else None,
            fixes=fixes(self._where(s)),
            fallback=self._fallback,
        )
        if made.answerer is not None and made.answerer.last is not None:
            page += f"\nLast answer from elsewhere: {made.answerer.last}"
        return page

    def _where(self, state: EngineState) -> Where:
        """What /cue's advice needs (cuewrap.advice): this session's evidence."""
        view = self.made.tmux.view if self.made.tmux is not None else None
        delivery = self.made.delivery
        choice = delivery.terminal_choice
        return Where(
            ssh=any(self.env.get(v) for v in ("SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT")),
            tmux=bool(self.env.get("TMUX")),
            tmux_version=view.version if view is not None else "",
            focus_events=view.focus_events if view is not None else None,
            passthrough=view.passthrough if view is not None else None,
            terminal=choice.terminal,
            focus_reported="focus" in state.seen,
            idle_after=self.settings.presence.idle_after,
            terminal_notifications=choice.protocol != "off",
            desktop=delivery.desktop_on,
            command=self.settings.notify.command is not None,
        )


def _counts(setting: str, removed: Removed) -> GuardCounts:
    return GuardCounts(setting, removed.count, removed.last_at, removed.last_size)
