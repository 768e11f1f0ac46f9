"""Typed facts: what the sources tell the cue engine (docs/design.md#fact-sources, #presence,
#the-bridge).

Every fact is a frozen dataclass carrying the source it came from. Sources, strongest first:
``bridge`` (the Pi extension), ``osc7501`` (a program status in the output), ``child`` (any child's
BEL, own notifications, output activity and quiet: generic mode, docs/design.md#generic-mode),
``screen`` (a pyte reading), ``exit`` (the child's exit status). Presence facts come from the focus
filter (``focus``) or from keystrokes (``keys``).

No fact ever holds a prompt, tool output or assistant text, with one exception the user opts
into: with ``privacy.body = "summary"`` the bridge adds a short ``summary`` (a dialog's title,
the Ask questionnaire's first question, the first line of the last answer or the error) to
``UiPromptStart``, ``ToolStart`` (Ask only) and ``AgentEnd``. It is raw text from Pi, made safe
by ``cuewrap.engine.summary``; the decision log keeps only its length.
"""

from __future__ import annotations

from dataclasses import dataclass

# the base, and the two facts the output tracker reads from the child's output, live in a
# module of their own: the relay imports them while the child boots, the rest of the facts
# (30 frozen dataclasses, ~10 ms to create) only with the cue side (docs/architecture.md)
from cuewrap.factbase import ChildProgress as ChildProgress
from cuewrap.factbase import Fact as Fact
from cuewrap.factbase import PresenceState as PresenceState
from cuewrap.factbase import ProgramStatus as ProgramStatus
from cuewrap.factbase import Source as Source

# --- presence (docs/design.md#presence)
# -------------------------------------------------------------------


@dataclass(frozen=True)
class Presence(Fact):
    """A focus report from the host terminal: ``focused`` (CSI I) or ``away`` (CSI O).

    Source ``tmux``: inside tmux, presence merged from tmux's view of Pi's pane and the focus
    reports (``away`` when another pane, window or session is in front or no client is
    attached; ``unknown`` when the pane is in front again and no focus report says more)."""

    state: PresenceState
    source: Source = "focus"


@dataclass(frozen=True)
class Keystroke(Fact):
    """The user typed something (any input that is not a focus report)."""

    source: Source = "keys"


# --- bridge facts (docs/design.md#the-bridge); each maps one Pi event
# ---------------------------------------


@dataclass(frozen=True)
class BridgeHello(Fact):
    protocol: int
    pi_version: str
    mode: str | None  # "tui" | "rpc" | "json" | "print"; None: this Pi does not say (0.74.2)
    has_ui: bool
    session_id: str
    session_file: str | None
    pid: int
    session_name: str | None = None
    # what this Pi emits, by its version (pi_support.FEATURES names); None: not said (assume all)
    capabilities: frozenset[str] | None = None
    source: Source = "bridge"


@dataclass(frozen=True)
class SessionStart(Fact):
    reason: str  # startup | reload | new | resume | fork
    session_id: str
    session_file: str | None
    source: Source = "bridge"


@dataclass(frozen=True)
class SessionShutdown(Fact):
    reason: str  # quit | reload | new | resume | fork
    source: Source = "bridge"


@dataclass(frozen=True)
class BridgeGone(Fact):
    """Socket EOF: that Pi runtime is gone (with or without a session_shutdown before).
    ``why``: "" at EOF, ``refused`` when cuewrap ended it (it refused one of Pi's own writes)."""

    source: Source = "bridge"
    why: str = ""


@dataclass(frozen=True)
class UserInput(Fact):
    """A prompt from the user (Pi's ``input`` event). Only the source, never the text."""

    input_source: str  # "interactive" | "rpc" | "extension" ...
    source: Source = "bridge"


@dataclass(frozen=True)
class AgentStart(Fact):
    source: Source = "bridge"


@dataclass(frozen=True)
class AgentEnd(Fact):
    """One attempt ended (NOT the end of the run). ``stop_reason`` of the last assistant message;
    ``summary`` (only when asked for): the first line of its answer, or its error."""

    stop_reason: str | None
    summary: str | None = None
    source: Source = "bridge"


@dataclass(frozen=True)
class AgentBeforeSettle(Fact):
    outcome: str | None  # "completed" | "error" | "aborted" | None
    source: Source = "bridge"


@dataclass(frozen=True)
class AgentSettled(Fact):
    """The run is over (the only real end of a run)."""

    aborted: bool
    source: Source = "bridge"


@dataclass(frozen=True)
class ToolStart(Fact):
    tool_call_id: str
    tool_name: str
    summary: str | None = None  # Ask only, when asked for: its first question
    dialog: str | None = None  # Ask of one single-choice question: its check (answering)
    source: Source = "bridge"


@dataclass(frozen=True)
class ToolEnd(Fact):
    tool_call_id: str
    tool_name: str
    is_error: bool
    source: Source = "bridge"


@dataclass(frozen=True)
class UiPromptStart(Fact):
    kind: str  # select | confirm | input | editor | custom
    summary: str | None = None  # when asked for: the dialog's title
    dialog: str | None = None  # confirm/select: the title's first line (the answer check only)
    source: Source = "bridge"


@dataclass(frozen=True)
class UiPromptEnd(Fact):
    kind: str
    # confirm/select: the option it closed with, as the dialog lists them (confirm: 1 yes,
    # 2 no); 0 none (cancelled); None not known (docs/bridge-protocol.md)
    option: int | None = None
    source: Source = "bridge"


@dataclass(frozen=True)
class AskBlocked(Fact):
    """``rpiv:ask-user:blocked`` on pi.events. ``tool_call_id`` only in newer Ask versions."""

    active: bool
    tool_call_id: str | None = None
    source: Source = "bridge"


@dataclass(frozen=True)
class SubagentStarted(Fact):
    """``subagent:async-started``; ``parent``/``owner_now`` are what the bridge read at the time."""

    run_id: str
    session_id: str
    completion_owner_id: str
    artifact_version: int
    parent: str | None  # getSessionFile() ?? getSessionId() of the current session
    owner_now: str | None  # globalThis[Symbol.for("pi-subagents.completion-owner-id")]
    source: Source = "bridge"


@dataclass(frozen=True)
class SubagentComplete(Fact):
    """``subagent:async-complete``."""

    run_id: str
    session_id: str
    completion_owner_id: str
    success: bool | None  # None when the payload had no boolean ``success``
    awaited_by_workflow: bool
    parent: str | None
    owner_now: str | None
    source: Source = "bridge"


@dataclass(frozen=True)
class SubagentForegroundComplete(Fact):
    run_id: str
    source: Source = "bridge"


@dataclass(frozen=True)
class CueToggle(Fact):
    """``/cue on`` / ``/cue off`` from Pi."""

    enabled: bool
    source: Source = "bridge"


# --- the attention budget (docs/attention.md): quiet hours, the desktop's do-not-disturb, mute
# --------------------------------------------------------------------


@dataclass(frozen=True)
class Quiet(Fact):
    """Quiet begins (``why``: "quiet hours", "desktop do-not-disturb") or ends (``why`` None),
    told by the edge from the local time of day and the desktop (``cuewrap.attention``): the
    engine has no clock. Nothing pops up or sounds meanwhile; marks and the state stay."""

    why: str | None
    source: Source = "attention"


@dataclass(frozen=True)
class Mute(Fact):
    """This session muted (``cuewrap mute PID``, ``/cue mute``) or unmuted (also when a mute's
    duration ran out): its reminders stop, its marks and state stay. ``via``: who said it."""

    muted: bool
    via: str
    source: Source = "attention"


# --- OSC 7501 (docs/design.md#fact-sources): ProgramStatus, in cuewrap/factbase.py
# --------------------------------------------------------------------


# --- any child (generic mode, docs/design.md#generic-mode; ChildProgress: cuewrap/factbase.py)
# ------------------------------------------------------


@dataclass(frozen=True)
class ChildBell(Fact):
    """A bare BEL in the child's output (passed through unchanged)."""

    source: Source = "child"


@dataclass(frozen=True)
class ChildNotice(Fact):
    """The child's own notification (OSC 9 / 777 / 99). ``consumed``: cuewrap took it out of
    the output and must deliver it; else it reached the host terminal unchanged. The text is
    the child's own, for the user; the decision log keeps only its lengths."""

    protocol: str  # osc9 | osc777 | osc99
    title: str
    body: str
    consumed: bool
    source: Source = "child"


@dataclass(frozen=True)
class OutputActive(Fact):
    """The child's output resumed after a pause. ``echo``: it came right after the user's
    input (an echo or an answer), so it does not start a stretch of work."""

    echo: bool = False
    source: Source = "child"


@dataclass(frozen=True)
class OutputQuiet(Fact):
    """The child's output, active, has been quiet for ``generic.quiet_after`` seconds."""

    source: Source = "child"


# --- screen heuristics (docs/design.md#fact-sources)
# -----------------------------------------------------------


@dataclass(frozen=True)
class GuardDecided(Fact):
    """The terminal guard decided a sequence of the child's output (docs/terminal-guard.md): a
    clipboard sequence passed or was removed (``guard="clipboard"``), or a title, notification
    or status report was removed from inside a frame (``"sequences"``). ``what`` names the
    sequence, never its payload; ``why`` the byte path's reason; ``at`` the wall-clock time the
    edge saw it (``HH:MM:SS``: the engine has no clock of its own)."""

    guard: str  # "clipboard" or "sequences"
    what: str
    passed: bool
    size: int
    read: bool = False
    why: str = ""
    at: str = ""
    source: Source = "child"


@dataclass(frozen=True)
class ScreenActivity(Fact):
    """The screen shows Pi working (``⠋ Working`` in the editor border) or not."""

    working: bool
    source: Source = "screen"


# --- job control (docs/design.md#real-environments)
# ------------------------------------------------------------------


@dataclass(frozen=True)
class JobState(Fact):
    """The child and cuewrap stopped together (Ctrl-Z) or were continued (``fg``)."""

    stopped: bool
    source: Source = "job"


# --- exit ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChildExit(Fact):
    code: int | None
    signal: int | None
    source: Source = "exit"
