"""Background work: pi-subagents lifecycle records and the background cue
(docs/design.md#cue-rules).

A start is tracked only if it belongs to this parent session and this process's completion
owner; a completion must match a tracked, still-active start. Records from before a gap stay
(so a late completion is recognised) but give no cue.
"""

from __future__ import annotations

from dataclasses import replace

from cuewrap.engine import wording
from cuewrap.engine._step import (
    Step,
    at_capacity,
    block_reason,
    has_run,
    new_cue,
    observe,
    reject,
)
from cuewrap.engine.effects import MARK_COMPLETED, MARK_FAILED
from cuewrap.engine.state import BgRecord
from cuewrap.facts import SubagentComplete, SubagentForegroundComplete, SubagentStarted


def _start_invalid(f: SubagentStarted) -> str | None:
    if not (f.run_id and f.session_id and f.completion_owner_id):
        return "missing id, sessionId or completionOwnerId"
    if f.artifact_version != 3:
        return "lifecycleArtifactVersion is not 3"
    if not f.parent or f.session_id != f.parent:
        return "sessionId is not the current parent session"
    if not f.owner_now or f.completion_owner_id != f.owner_now:
        return "completionOwnerId is not this process's completion owner"
    return None


def on_subagent_started(st: Step, f: SubagentStarted) -> None:
    observe(st, "pi-subagents")
    reason = _start_invalid(f)
    if reason is not None:
        reject(st, "pi-subagents", reason)
        return
    s = st.s
    key = (f.session_id, f.run_id)
    if key in s.bg:
        reject(st, "pi-subagents", "start already observed for this parent and run id")
        return
    if len(s.bg) >= s.config.capacity:
        at_capacity(st, "pi-subagents", "background records")
        return
    observe(st, "pi-subagents", trusted=True)
    st.set(
        bg=s.bg.set(key, BgRecord(f.completion_owner_id, True, s.generation)),
        bg_active=s.bg_active + 1,
    )
    st.rec("background", run_id=f.run_id, state="started", active=s.bg_active + 1)


def _bg_finish(st: Step, key: tuple[str, str], rec: BgRecord) -> None:
    s = st.s
    current = rec.generation == s.generation
    st.set(
        bg=s.bg.set(key, replace(rec, active=False)),
        bg_active=s.bg_active - 1 if current else s.bg_active,
    )


def on_subagent_complete(st: Step, f: SubagentComplete) -> None:
    observe(st, "pi-subagents")
    s = st.s
    key = (f.parent or "", f.run_id)
    rec = s.bg.get(key)
    if rec is None:
        reject(st, "pi-subagents", "completion without an observed start")
        return
    if f.session_id != f.parent:
        reject(st, "pi-subagents", "completion for another parent session")
        return
    if f.completion_owner_id != rec.owner or f.owner_now != rec.owner:
        reject(st, "pi-subagents", "completion owner does not match")
        return
    if not rec.active:
        reject(st, "pi-subagents", "duplicate completion")
        return
    _bg_finish(st, key, rec)
    st.rec("background", run_id=f.run_id, state="finished", active=st.s.bg_active)
    s = st.s
    if not isinstance(f.success, bool):
        reject(st, "pi-subagents", "success is not a boolean (state removed, no cue)")
        return
    if rec.generation != s.generation:
        block: str | None = "started before a gap"
    elif f.awaited_by_workflow:
        block = "awaited by a workflow (no cue of its own)"
    elif has_run(s):
        block = "Pi is busy (the run's own cue covers it)"
    else:
        block = block_reason(s)
    if block is not None:
        st.rec("no_cue", cue="background", run_id=f.run_id, reason=block)
        return
    body = wording.background(f.success, background_running=s.bg_active)
    new_cue(st, "background", "completed" if f.success else "failed", body, None, source="bridge")
    st.set(cue_mark=MARK_COMPLETED if f.success else MARK_FAILED)


def on_subagent_foreground(st: Step, f: SubagentForegroundComplete) -> None:
    s = st.s
    key = (s.parent or "", f.run_id)
    rec = s.bg.get(key)
    if rec is not None and rec.active:
        _bg_finish(st, key, rec)
        st.rec("background", run_id=f.run_id, state="removed (foreground)")
