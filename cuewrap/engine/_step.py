"""One step in progress (``Step``) and the cue bookkeeping every rule module shares.

Private to the engine: ``reducer.step`` builds a ``Step``, the rule modules (``presence``,
``waits``, ``runs``, ``sessions``, ``background``) update it, and these helpers keep the decision
log, the cue ids and the rejection counts consistent across them (docs/design.md#cue-rules). Imports
nothing from the rule modules, so none of them can form a cycle through it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from cuewrap.engine import summary as summaries
from cuewrap.engine import wording
from cuewrap.engine.effects import (
    Certainty,
    CueKind,
    Diagnostic,
    Effect,
    Eligibility,
    Notify,
    Outcome,
    Record,
)
from cuewrap.engine.state import EngineState

_FIELD_NAMES = frozenset(f.name for f in fields(EngineState))


def evolve(s: EngineState, changes: dict[str, Any]) -> EngineState:
    """``dataclasses.replace`` without re-running ``__init__`` (10-20x cheaper at 40 fields).

    The result is an ordinary frozen ``EngineState``; only ``Step.set`` builds one this way.
    """
    assert changes.keys() <= _FIELD_NAMES, changes.keys() - _FIELD_NAMES
    new = object.__new__(EngineState)
    d = new.__dict__
    d.update(s.__dict__)
    d.update(changes)
    return new


class Step:
    """One step in progress: the state so far and the effects so far (local, never shared)."""

    __slots__ = ("fx", "now", "s", "stale_why")

    def __init__(self, state: EngineState, now: float) -> None:
        self.s = state
        self.now = now
        self.fx: list[Effect] = []
        self.stale_why = "stale"  # why cues went stale in this step (for Withdraw)

    def set(self, **changes: Any) -> None:
        self.s = evolve(self.s, changes)

    def rec(self, kind: str, **fields: object) -> None:
        self.fx.append(Record(kind, fields))


# --- cue bookkeeping -----------------------------------------------------------------------


def has_run(s: EngineState) -> bool:
    return s.run is not None and s.run.generation == s.generation


def block_reason(s: EngineState) -> str | None:
    """Why no new cue may be given now (None: one may)."""
    if s.exited:
        return "child exited"
    if not s.enabled:
        return "cues are off"
    if s.guard is not None:
        return s.guard
    if s.looking:
        # no focus reports: present until presence.idle_after without a keystroke (counted
        # from a keystroke, the start, or a return tmux reported), not only after typing
        return "focused" if s.focus_seen else "present (no focus reports; not idle yet)"
    return None


def invalidate(st: Step, reason: str) -> None:
    """Rule 7: pending cues can no longer fire; the finished/background mark goes."""
    s = st.s
    st.set(epoch=s.epoch + 1, live_cues=frozenset(), cue_mark=None, wait_cue=None)
    st.stale_why = reason
    st.rec("invalidated", reason=reason, epoch=s.epoch + 1)


def _label(s: EngineState) -> str:
    return s.session_name or s.config.label


def app_name(s: EngineState) -> str:
    """The program notifications name: Pi, or in generic mode its preset's name for it
    ("Claude Code"), else the app= of its OSC 7501 reports, else the command's name."""
    if s.config.app_known:
        return s.config.app
    return s.status_app or s.config.app


def new_cue(
    st: Step,
    kind: CueKind,
    outcome: Outcome | None,
    body: str,
    run: int | None,
    *,
    source: str,
    certainty: Certainty = "certain",
    title: str | None = None,
    private: bool = False,
    summary: str | None = None,
    **why: object,
) -> Notify:
    """Decide one notification. ``private``: title and body are a child's own text, which the
    decision log does not keep (only its length). ``summary``: what says why (a question, an
    answer's first line, an error), used only with ``privacy.body = "summary"``: it is added to
    the body, and the decision log records that one was used and its length, never its text."""
    s = st.s
    cue_id = s.cue_seq + 1
    elig = Eligibility(generation=s.generation, run=run, cue_id=cue_id, epoch=s.epoch)
    if title is None:
        title = wording.title(_label(s), app_name(s))
    logged = f"(the child's own text, {len(title) + len(body)} characters)" if private else body
    said: str | None = None
    if s.config.privacy_summary:
        if private:  # a program's own text is already its summary (generic mode)
            said = summaries.clean(body)[: summaries.BODY_MAX]
        else:
            status = body
            body = summaries.body(status, summary)
            said = body[len(status) + 2 :] if len(body) > len(status) else ""
        why = {**why, "summary_chars": len(said)}
    note = Notify(cue_id, kind, outcome, title, body, elig, source, certainty, said)
    st.set(cue_seq=cue_id, live_cues=s.live_cues | {cue_id})
    st.rec(
        "cue", cue_id=cue_id, cue=kind, outcome=outcome, body=logged, run=run, source=source, **why
    )
    st.fx.append(note)
    return note


# --- integrations: seen, trusted, rejected -------------------------------------------------


def reject(st: Step, integration: str, reason: str, **fields: object) -> None:
    s = st.s
    counts = list(s.rejections)
    for i, (name, why, n) in enumerate(counts):
        if name == integration and why == reason:
            counts[i] = (name, why, n + 1)
            break
    else:
        counts.append((integration, reason, 1))
    st.set(rejections=tuple(counts))
    st.rec("rejected", integration=integration, reason=reason, **fields)


def observe(st: Step, integration: str, trusted: bool = False) -> None:
    s = st.s
    if integration not in s.seen or (trusted and integration not in s.trusted):
        st.set(
            seen=s.seen | {integration},
            trusted=s.trusted | {integration} if trusted else s.trusted,
        )


def at_capacity(st: Step, integration: str, what: str) -> None:
    s = st.s
    cap = s.config.capacity
    reject(st, integration, f"capacity reached ({cap} {what})")
    if integration not in s.cap_warned:
        st.set(cap_warned=s.cap_warned | {integration})
        st.fx.append(
            Diagnostic(
                f"cuewrap: {cap} {what} tracked; new ones are not tracked until cuewrap restarts"
            )
        )
