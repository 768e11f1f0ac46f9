"""The ``/cue`` page (docs/design.md#what-the-user-sees): evidence of this session, not a version
guarantee.

A pure function of the engine's ``Status`` (``status.py``) and what the shell knows besides:
the bridge channel's counters, the delivery channels, the clipboard guard's counts, tmux's
line and the advice (``cuewrap.advice.fixes``). No I/O, no clock: the controller gathers
them and this assembles the whole page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cuewrap.engine.status import Status

NAMES = {
    "bridge": "Pi bridge",
    "osc7501": "OSC 7501",
    "focus": "focus reports",
    "ask": "Ask",
    "pi-subagents": "pi-subagents",
}

CUES_ON = "cuewrap: cues on (nothing from before is replayed)"
CUES_OFF = "cuewrap: cues off (pending reminders dropped)"


@dataclass(frozen=True)
class BridgeCounts:
    """The bridge channel's counters (``BridgeServer.stats()``)."""

    live: int
    facts: int
    hellos: int
    dropped: tuple[tuple[str, int], ...]  # (reason, count), by reason
    own: int = 0  # Pi's own writes to its terminal that came through it (provenance)
    provenance: str = ""  # a lost bridge: when and why, and whether it came back

    @classmethod
    def from_stats(cls, stats: Mapping[str, object]) -> BridgeCounts:
        rejected = stats.get("rejected")
        dropped = rejected if isinstance(rejected, dict) else {}

        def count(key: str) -> int:
            value = stats.get(key, 0)
            return value if isinstance(value, int) else 0

        return cls(
            live=count("live_connections"),
            facts=count("facts"),
            hellos=count("hellos"),
            dropped=tuple(sorted((str(k), int(v)) for k, v in dropped.items())),
            own=count("own_writes"),
            provenance=str(stats.get("provenance") or ""),
        )


@dataclass(frozen=True)
class Channels:
    """The delivery channels as set up for this session."""

    terminal: str  # the terminal notification protocol ("osc777", "osc9", "off", …)
    terminal_reason: str
    desktop: bool
    desktop_why: str  # why it is off (shown only then)
    bell: bool
    title_marks: bool
    keep_awake: bool
    path: str = ""  # which way a cue reaches the desktop: terminal | desktop | both | none
    path_why: str = ""


@dataclass(frozen=True)
class GuardCounts:
    """The clipboard guard for ``/cue`` (docs/terminal-guard.md): the setting, how many of
    the program's OSC 52 sequences were removed, the last one's wall-clock time (``HH:MM:SS``)
    and size in bytes."""

    setting: str
    removed: int = 0
    last_at: str = ""
    last_size: int = 0


_CLIPBOARD_WORDS = {
    "user": "the program's clipboard writes pass only right after your own action",
    "allow": "the program's clipboard writes and reads pass",
    "block": "the program's clipboard writes are all removed",
}
_SEQUENCES_WORDS = {
    "own": "titles, notifications and status reports inside the program's frames are removed",
    "allow": "titles, notifications and status reports pass, also from what it renders",
}


def _counts_line(name: str, words: dict[str, str], g: GuardCounts) -> str:
    """One guard's ``/cue`` line: its setting in words, then what it removed."""
    line = f"{name}: {g.setting} ({words.get(g.setting, g.setting)})"
    if g.removed:
        noun = "sequence" if g.removed == 1 else "sequences"
        line += f" · removed {g.removed} {noun}, last at {g.last_at} ({g.last_size} bytes)"
    else:
        line += " · nothing removed"
    return line


def guard_line(g: GuardCounts) -> str:
    """``/cue``'s line for guard.clipboard."""
    return _counts_line("clipboard guard", _CLIPBOARD_WORDS, g)


def sequences_line(g: GuardCounts) -> str:
    """``/cue``'s line for guard.sequences (titles, notifications, status reports)."""
    return _counts_line("sequence guard", _SEQUENCES_WORDS, g)


def toggle_reply(on: bool) -> str:
    """The reply to ``/cue on`` / ``/cue off``."""
    return CUES_ON if on else CUES_OFF


def cue_page(
    status: Status,
    channels: Channels,
    bridge: BridgeCounts | None = None,
    guard: GuardCounts | None = None,
    *,
    sequences: GuardCounts | None = None,
    tmux: str | None = None,
    fixes: Sequence[str] = (),
    fallback: str | None = None,
) -> str:
    """The text of ``/cue``: on/off and the driving source, presence, each integration's
    evidence, the bridge channel (when there is one), capacity, the delivery channels, the
    clipboard guard (and ``fallback``: what guards the output after its tracker failed); then
    ``tmux`` (its status line, inside tmux) and one ``to improve:`` line per fix."""
    s = status
    p = s.presence
    lines = [
        f"cuewrap: cues {'on' if s.enabled else 'off'}"
        + ("" if s.guard is None else f" (disabled: {s.guard})")
        + f" · cues come from: {s.source}",
        f"presence: {p.state} (counts as {p.counts_as}; via {p.via})",
    ]
    if s.muted or s.hush is not None:  # docs/attention.md: held, marks and state stay
        why = "muted (/cue unmute)" if s.muted else s.hush
        lines.append(f"quiet: {why}: reminders are held; marks and the state stay")
    if s.pi_version is not None:  # from the bridge's hello: what this Pi gives
        lines.append(s.pi_support or f"Pi {s.pi_version}: full cues")
    if s.summaries is not None:  # privacy.body = "summary": what the notifications can say
        lines.append(f"privacy.body summary: notifications say {s.summaries}")
    for info in s.integrations:
        line = f"  {NAMES.get(info.name, info.name)}: {info.status}"
        if info.rejected:
            reasons = ", ".join(f"{k} {v}" for k, v in info.reasons)
            line += f" · rejected {info.rejected} ({reasons})"
        lines.append(line)
    if bridge is not None:
        line = f"bridge channel: {bridge.live} live, {bridge.facts} facts, {bridge.hellos} hellos"
        if bridge.own:
            line += f", {bridge.own} of Pi's own writes"
        if bridge.dropped:
            line += " · dropped: " + ", ".join(f"{k} {v}" for k, v in bridge.dropped)
        if bridge.provenance:
            line += f" · {bridge.provenance}"
        lines.append(line)
    cap = s.capacity
    lines.append(
        f"capacity: Ask ids {cap.ask_ids.used}/{cap.ask_ids.limit},"
        f" background {cap.background.used}/{cap.background.limit}"
    )
    c = channels
    desktop = "on" if c.desktop else f"off ({c.desktop_why})"
    lines.append(
        f"channels: terminal {c.terminal} ({c.terminal_reason}); desktop {desktop};"
        f" bell {_on(c.bell)}; title marks {_on(c.title_marks)}; keep-awake {_on(c.keep_awake)}"
    )
    if c.path:
        lines.append(f"desktop popup: {c.path_why}")  # the reason begins with the path
    if guard is not None:
        lines.append(guard_line(guard))
    if sequences is not None:
        lines.append(sequences_line(sequences))
    if fallback is not None:
        lines.append(f"output guard: {fallback}")
    if tmux is not None:
        lines.append(tmux)
    lines.extend(f"to improve: {fix}" for fix in fixes)
    return "\n".join(lines)


def _on(flag: bool) -> str:
    return "on" if flag else "off"
