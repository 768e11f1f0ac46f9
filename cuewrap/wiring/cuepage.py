"""``/cue`` in Pi (through the bridge): ``on`` / ``off``, ``mute`` / ``unmute``, and the page
(docs/design.md#what-the-user-sees): ``engine.page.cue_page`` from the engine's status and
what this session's parts report, with the advice for where it runs (``cuewrap.advice``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuewrap.advice import Where, fixes
from cuewrap.engine import status
from cuewrap.engine.page import BridgeCounts, GuardCounts, cue_page, toggle_reply

if TYPE_CHECKING:
    from cuewrap.config import Settings
    from cuewrap.engine import EngineState
    from cuewrap.engine.state import Removed
    from cuewrap.wiring.parts import Parts


class CuePage:
    def __init__(self, settings: Settings, env: Mapping[str, str], made: Parts) -> None:
        self.settings = settings
        self.env = env
        self.made = made
        self._fallback: str | None = None  # the output tracker failed: what guards instead

    def fell_back(self, note: str) -> None:
        """The output tracker failed (``relay.events.GuardFellBack``): ``note`` says what
        guards the output instead; the page says it too."""
        self._fallback = note

    def reply(self, action: str, state: EngineState) -> str:
        """The reply to ``/cue ACTION``."""
        if action in ("on", "off"):
            return toggle_reply(action == "on")
        attention = self.made.attention
        if attention is not None:  # /cue mute [DURATION], /cue unmute
            said = attention.request(action)
            if said is not None:
                return said
        return self.page(state)

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
