"""Effects: what the pure engine asks the edge (``cuewrap.deliver``) to do.

The engine never performs I/O; it returns these. The shell performs them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CueKind = Literal["needs-input", "finished", "background", "exited"]
Outcome = Literal["completed", "failed", "cancelled", "uncertain"]
Certainty = Literal["certain", "uncertain"]

MARK_WAITING = "[?]"
MARK_COMPLETED = "[✓]"
MARK_FAILED = "[!]"  # failed or uncertain
MARK_CANCELLED = "[-]"


@dataclass(frozen=True)
class Eligibility:
    """What must still hold for a pending cue to be delivered (docs/design.md#cue-rules rule 8)."""

    generation: int  # session generation (bumped at every gap: reload, /new, …)
    run: int | None  # the run the cue is about (None for waits not tied to a run)
    cue_id: int  # unique per cue for the life of the process
    epoch: int  # bumped by return of focus, new task, /cue off, exit


@dataclass(frozen=True)
class SetMark:
    """Show ``mark`` in front of the child's title, or clear it (``None``)."""

    mark: str | None


@dataclass(frozen=True)
class Action:
    """A button on a notification: ``label`` is what it says, ``key`` what comes back when the
    user chooses it. Shown only by a channel that declares ``buttons``
    (``deliver.channel.Capabilities``); the others show the notification without it."""

    key: str
    label: str


@dataclass(frozen=True)
class Notify:
    """Send one notification for cue ``cue_id`` on every enabled channel.

    ``title`` and ``body`` are already privacy-safe (docs/design.md#privacy): the app, the session
    label and the status; never prompt/question/answer/tool/assistant text. Except with
    ``privacy.body = "summary"``: then ``summary`` is the cleaned text that says why (a
    question, the first line of the answer, the error; "" when there is none) and the body
    ends with it (``engine/summary.py``). ``summary`` is None when summaries are off.
    """

    cue_id: int
    kind: CueKind
    outcome: Outcome | None
    title: str
    body: str
    eligibility: Eligibility
    source: str = ""  # where the deciding fact came from: bridge | osc7501 | screen | pty
    certainty: Certainty = "certain"  # "uncertain": the outcome is unknown or only seen
    summary: str | None = None  # privacy.body = "summary" only (None: off)
    actions: tuple[Action, ...] = ()  # buttons, where a channel shows them (none yet)
    # quiet hours: a wait unanswered past quiet.urgent_after, for notify.command only
    urgent: bool = False


@dataclass(frozen=True)
class Withdraw:
    """Cue ``cue_id`` went stale (return, wait answered, new run, /cue off, exit): withdraw its
    notification where the channel can (docs/design.md#follow-ups). Only for cues whose ``Notify``
    was given."""

    cue_id: int
    reason: str


@dataclass(frozen=True)
class Escalate:
    """A needs-input wait is still unanswered ``notify.escalate_after`` seconds after its
    notification, the user still away: remind once more, louder (docs/design.md#follow-ups).
    During quiet hours (``note.urgent``): unanswered ``quiet.urgent_after`` seconds after its
    cue was held, ``notify.command`` alone is run, once (docs/attention.md)."""

    note: Notify


@dataclass(frozen=True)
class Progress:
    """Show (True) or clear (False) the host terminal's progress indicator (OSC 9;4)."""

    on: bool


@dataclass(frozen=True)
class KeepAwake:
    """Hold (True) or release (False) the keep-awake inhibitor."""

    hold: bool


@dataclass(frozen=True)
class Wake:
    """Call the engine back with a tick at time ``at`` (monotonic seconds). Replaces any earlier."""

    at: float | None


@dataclass(frozen=True)
class Record:
    """A decision-log record (``kind`` plus fields)."""

    kind: str
    fields: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnostic:
    """A message for the user, shown through Pi's UI when the bridge is live (caps reached …)."""

    text: str


Effect = SetMark | Notify | Withdraw | Escalate | Progress | KeepAwake | Wake | Record | Diagnostic
