"""The cue engine's state: frozen values only, no I/O, no clock (docs/design.md#cue-rules).

``EngineState`` is replaced, never mutated: ``reducer.step`` returns a new one. The two
structures that can grow to the capacity limit (Ask call-id history, background records) are
``PMap`` values, a small persistent map whose update copies one bucket (about n/128 entries)
instead of the whole map, so a step stays cheap at 8192 entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from cuewrap.engine.effects import Notify

CAPACITY = 8192  # docs/design.md#capacity: Ask call ids and background records, each

K = TypeVar("K")
V = TypeVar("V")

_BUCKET_BITS = 7
_NBUCKETS = 1 << _BUCKET_BITS
_MASK = _NBUCKETS - 1
_EMPTY: dict[Any, Any] = {}  # shared, never mutated


class PMap(Generic[K, V]):
    """A persistent (immutable) hash map: ``set`` returns a new map sharing 127/128 buckets.

    The bucket dicts are private and never mutated after construction.
    """

    __slots__ = ("_buckets", "_len")

    def __init__(self) -> None:
        self._buckets: tuple[dict[K, V], ...] = (_EMPTY,) * _NBUCKETS
        self._len = 0

    @classmethod
    def _make(cls, buckets: tuple[dict[K, V], ...], length: int) -> PMap[K, V]:
        m: PMap[K, V] = cls.__new__(cls)
        m._buckets = buckets
        m._len = length
        return m

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._buckets[hash(key) & _MASK].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._buckets[hash(key) & _MASK]

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        for b in self._buckets:
            yield from b

    def items(self) -> Iterator[tuple[K, V]]:
        for b in self._buckets:
            yield from b.items()

    def set(self, key: K, value: V) -> PMap[K, V]:
        i = hash(key) & _MASK
        old = self._buckets[i]
        new = dict(old)
        new[key] = value
        buckets = (*self._buckets[:i], new, *self._buckets[i + 1 :])
        return PMap._make(buckets, self._len + (0 if key in old else 1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PMap):
            return NotImplemented
        return self._len == other._len and all(
            a == b for a, b in zip(self._buckets, other._buckets, strict=True)
        )

    def __hash__(self) -> int:
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"PMap(len={self._len})"


# --- configuration and time --------------------------------------------------------------


@dataclass(frozen=True)
class EngineConfig:
    enabled: bool = True  # cues.enabled
    idle_after: float = 60.0  # presence.idle_after (seconds)
    label: str = ""  # session label fallback (cwd basename); Pi's session name wins
    privacy_summary: bool = False  # privacy.body = "summary": say why (engine/summary.py)
    keep_awake: bool = False  # keep_awake.enabled
    escalate_after: float = 0.0  # notify.escalate_after (seconds; 0 = off)
    urgent_after: float = 0.0  # quiet.urgent_after (seconds; 0 = never)
    progress: bool = False  # notify.progress
    title_marks: bool = True  # notify.title_marks (off: no mark is written, none recorded)
    capacity: int = CAPACITY  # per structure; only tests lower it
    # generic mode (docs/design.md#generic-mode): any program, facts from the "child" source
    generic: bool = False
    app: str = "Pi"  # how notifications name the program (a preset's app or the command)
    app_known: bool = False  # a preset named the program: its app wins over OSC 7501's app=
    signal: str = "Wants your attention"  # what its BEL / a text-less notification means
    host_native: frozenset[str] = frozenset()  # child OSCs the host shows as they are
    reemit: bool = False  # a channel exists to re-emit a child's notification
    # the preset whose own notifications are read as facts (engine/notices.py; "": none)
    notices: str = ""
    words: str = ""  # the program whose notification words are its facts (engine/words.py)
    guard_clipboard: str = "user"  # guard.clipboard (its log records and /cue)
    guard_sequences: str = "own"  # guard.sequences


@dataclass(frozen=True)
class Removed:
    """What one terminal guard removed (docs/terminal-guard.md), for ``/cue``: how many, the
    last one's wall-clock time (``HH:MM:SS``) and size in bytes."""

    count: int = 0
    last_at: str = ""
    last_size: int = 0


@dataclass(frozen=True)
class Tick:
    """Time passes (the shell's answer to a ``Wake``). Not a fact: it is not recorded."""


# --- parts of the state ------------------------------------------------------------------

RunSource = Literal["bridge", "osc7501", "screen", "notice", "child"]
AskCallState = Literal["fresh", "waiting", "done"]


@dataclass(frozen=True)
class Run:
    """The active main run (agent_start .. agent_settled; retries are inside it)."""

    id: int
    source: RunSource
    generation: int  # session generation it started in
    attempts: int = 1
    stop_reason: str | None = None  # last AgentEnd.stop_reason
    summary: str | None = None  # last AgentEnd.summary (privacy.body = "summary" only)
    before_settle: str | None = None  # AgentBeforeSettle.outcome
    keyed: bool = False  # the user typed while it ran (a cancel is the user's act)
    started: float = 0.0  # the engine's time when it started


@dataclass(frozen=True)
class BgRecord:
    """A tracked pi-subagents background run, keyed by (parent identity, run id)."""

    owner: str
    active: bool
    generation: int  # active records of an older generation are "gap"


@dataclass(frozen=True)
class EngineState:
    config: EngineConfig
    enabled: bool  # /cue on|off (starts as config.enabled)
    guard: str | None = None  # why cues are off for this Pi runtime (e.g. mode "rpc")
    exited: bool = False
    # presence (docs/design.md#presence)
    focus_seen: bool = False  # a real focus report arrived: keystrokes/idle no longer count
    focus_state: Literal["focused", "away"] = "focused"
    presence_via: str = "focus"  # the source of focus_state: "focus" (reports) or "tmux"
    last_activity: float | None = None  # last keystroke (or the first step)
    last_key: float | None = None  # when a Keystroke fact was last stepped (focus reports or not)
    idle_away: bool = False  # unknown presence, idle for idle_after: counts as away
    # bridge / session
    bridge_live: bool = False
    in_gap: bool = False  # shutdown or EOF seen, no new runtime yet
    session_id: str | None = None
    parent: str | None = None  # getSessionFile() ?? getSessionId()
    session_name: str | None = None
    # the Pi behind the bridge (its hello): version, features (None: not said, assume all)
    pi_version: str | None = None
    pi_caps: frozenset[str] | None = None
    pi_told: bool = False  # the "cannot give full cues" line was shown (once per process)
    # integrations seen / trusted (status page)
    seen: frozenset[str] = frozenset()
    trusted: frozenset[str] = frozenset()
    rejections: tuple[tuple[str, str, int], ...] = ()  # (integration, reason, count)
    # eligibility
    generation: int = 0
    epoch: int = 0
    cue_seq: int = 0
    live_cues: frozenset[int] = frozenset()
    # cues notified and not yet withdrawn (docs/design.md#follow-ups)
    notified: frozenset[int] = frozenset()
    escalation: tuple[float, Notify] | None = None  # (due, the wait's notification)
    child_progress: bool = False  # Pi writes its own OSC 9;4 (terminal.showTerminalProgress)
    progress_shown: bool = False
    progress_due: float | None = None  # when to show it (a run is active)
    # runs and waits
    run_seq: int = 0
    run: Run | None = None
    last_run: int | None = None
    wait_seq: int = 0
    waits: tuple[tuple[str, int], ...] = ()  # (wait key, wait instance id)
    uncovered: frozenset[int] = frozenset()  # wait instances not yet notified
    wait_cue: int | None = None  # cue id of the notification covering current waits
    # privacy.body = "summary" only: what pending waits and Ask calls in flight are about
    wait_says: tuple[tuple[int, str], ...] = ()  # (wait instance id, summary)
    ask_says: tuple[tuple[str, str], ...] = ()  # (tool call id, its first question)
    # Ask (docs/design.md#needs-input-facts)
    ask_history: PMap[str, int] = field(default_factory=PMap)  # call id -> generation
    ask_calls: tuple[tuple[str, AskCallState], ...] = ()  # in flight, this generation
    # background (pi-subagents)
    bg: PMap[tuple[str, str], BgRecord] = field(default_factory=PMap)
    bg_active: int = 0  # active records of the current generation
    # what the shell has been told
    cue_mark: str | None = None  # mark of the last finished/background cue (until return)
    mark_shown: str | None = None
    awake_held: bool = False
    wake_at: float | None = None
    cap_warned: frozenset[str] = frozenset()
    # generic mode: the child's output activity and what has told the current wait
    busy: bool = False  # output active (not only echo) since the last quiet
    told: bool = False  # a BEL, notification or OSC 7501 report came since then
    status_app: str | None = None  # app= of the OSC 7501 reports (generic mode)
    # a known program's notification was read (engine/notices.py): from then on its words,
    # not its output, say whether it works (generic mode)
    notices_heard: bool = False
    status_last: str | None = None  # state= of the program's last report (generic mode)
    # the session's state for the overview (``glance``), whatever the presence and the cues
    started: bool = False  # the program has said anything (a fact other than presence/keys)
    outcome: str | None = None  # the last run's outcome (an ``Outcome``)
    outcome_seq: int = 0  # runs settled so far (a new outcome is a new line for scripts)
    outcome_seen: bool = True  # the user was present after that outcome (or a new run began)
    stopped: bool = False  # the pair is stopped (Ctrl-Z)
    signalled: bool = False  # generic: a BEL, notification or quiet since the last output
    # the terminal guard (docs/terminal-guard.md): what each removed, for /cue; whether the
    # first removal was said inside Pi (the clipboard's once; a frame's sequences once a run:
    # the run's id, -1 before any)
    clip_removed: Removed = Removed()
    seq_removed: Removed = Removed()
    clip_told: bool = False
    seq_told: int | None = None
    # the attention budget (engine/attention.py, docs/attention.md)
    hush: str | None = None  # why nothing pops up now: "quiet hours", "desktop do-not-disturb"
    muted: bool = False  # cuewrap mute / /cue mute: no reminders, marks and state stay
    held: tuple[Notify, ...] = ()  # cues held by quiet, still live (the end's reminder)
    urgent: tuple[float, Notify] | None = None  # (due, a held wait's cue): quiet.urgent_after

    @property
    def cues_active(self) -> bool:
        return self.enabled and self.guard is None and not self.exited

    @property
    def looking(self) -> bool:
        """The user counts as present: focused, or (no focus report) typed recently."""
        if self.focus_seen:
            return self.focus_state == "focused"
        return not self.idle_away

    @property
    def presence(self) -> str:
        if self.focus_seen:
            return self.focus_state
        return "unknown"

    @property
    def wait_keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.waits)


def initial_state(config: EngineConfig | None = None) -> EngineState:
    config = config or EngineConfig()
    return EngineState(config=config, enabled=config.enabled)
