"""Needs-input: waits and their cue (docs/design.md#cue-rules rules 2 and 4).

A wait is keyed by where it came from: ``"ui"`` (Pi's native prompts), ``"osc"`` (OSC 7501
``blocked``, opened by ``runs.on_program_status``) or ``"ask:<toolCallId>"`` (an
rpiv-ask-user-question call, correlated here). Waits pending together share one cue.

With ``privacy.body = "summary"`` a wait remembers what it is about (the dialog's title, the
Ask call's first question) and its notification says it: the first uncovered wait that has one.
"""

from __future__ import annotations

from typing import Any

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
from cuewrap.facts import AskBlocked, ToolEnd, ToolStart, UiPromptEnd, UiPromptStart

ASK_TOOL = "ask_user_question"


def add_wait(st: Step, key: str, summary: str | None = None, kind: str | None = None) -> None:
    """Open the wait ``key``. ``kind``: what it is, as its fact said (OSC 7501 ``blocked``'s
    ``kind=permission|question|auth``): kept in the wait's and its cue's records."""
    s = st.s
    said_kind = {"fact_kind": kind} if kind else {}
    if key in s.wait_keys:
        st.rec("wait", key=key, state="already pending")
        return
    wid = s.wait_seq + 1
    merged = bool(s.waits)
    st.set(waits=(*s.waits, (key, wid)), wait_seq=wid)
    if summary and s.config.privacy_summary:
        pending = {w for _, w in s.waits}  # ended waits' summaries go (bounded by the waits)
        says = tuple(x for x in s.wait_says if x[0] in pending)
        st.set(wait_says=(*says, (wid, summary)))
    st.rec("wait", key=key, wait=wid, state="pending", **said_kind)
    block = block_reason(s)
    if block is None:
        if merged and not s.uncovered:
            st.rec("no_cue", cue="needs-input", wait=wid, reason="merged with a pending wait")
        else:
            st.set(uncovered=st.s.uncovered | {wid})
            notify_wait(st, kind)
    else:
        if s.cues_active:  # only because the user is looking: notify if they leave
            st.set(uncovered=s.uncovered | {wid})
        st.rec("no_cue", cue="needs-input", wait=wid, reason=block)


def notify_wait(st: Step, kind: str | None = None) -> None:
    s = st.s
    run = s.run.id if s.run is not None else None
    keys = [k for k, w in s.waits if w in s.uncovered] or list(s.wait_keys)
    source = {"osc": "osc7501", "said": "child"}.get(keys[0], "bridge") if keys else "bridge"
    wids = [w for _, w in s.waits if w in s.uncovered] or [w for _, w in s.waits]
    says = dict(s.wait_says)
    summary = next((says[w] for w in wids if w in says), None)
    note = new_cue(
        st,
        "needs-input",
        None,
        wording.needs_input(),
        run,
        source=source,
        summary=summary,
        waits=sorted(s.uncovered),
        fact_kind=kind,
    )
    st.set(uncovered=frozenset(), wait_cue=note.cue_id)


def end_wait(st: Step, key: str, reason: str) -> None:
    s = st.s
    ended = [w for k, w in s.waits if k == key]
    if not ended:
        return
    waits = tuple((k, w) for k, w in s.waits if k != key)
    changes: dict[str, Any] = {"waits": waits, "uncovered": s.uncovered - set(ended)}
    if not waits and s.wait_cue is not None:
        changes.update(live_cues=s.live_cues - {s.wait_cue}, wait_cue=None)
        st.stale_why = f"wait ended ({reason})"
    st.set(**changes)
    st.rec("wait", key=key, wait=ended[0], state="ended", reason=reason)


def drop_waits(st: Step, reason: str) -> None:
    for key in st.s.wait_keys:
        end_wait(st, key, reason)


# --- bridge: native prompts ----------------------------------------------------------------


def on_ui_prompt_start(st: Step, f: UiPromptStart) -> None:
    if not has_run(st.s):
        reject(st, "bridge", "ui_prompt_start outside a run")
        return
    add_wait(st, "ui", f.summary)


def on_ui_prompt_end(st: Step, f: UiPromptEnd) -> None:
    end_wait(st, "ui", "ui_prompt_end")


# --- Ask (rpiv-ask-user-question) ----------------------------------------------------------


def on_tool_start(st: Step, f: ToolStart) -> None:
    if f.tool_name != ASK_TOOL:
        return
    s = st.s
    if f.tool_call_id in s.ask_history:
        reject(st, "ask", "tool call id seen before (repeat or reused across sessions)")
        return
    if len(s.ask_history) >= s.config.capacity:
        at_capacity(st, "ask", "Ask call ids")
        return
    st.set(
        ask_history=s.ask_history.set(f.tool_call_id, s.generation),
        ask_calls=(*s.ask_calls, (f.tool_call_id, "fresh")),
    )
    if f.summary and s.config.privacy_summary:
        calls = dict(s.ask_calls)  # finished calls' questions go (bounded by the calls)
        says = tuple(x for x in s.ask_says if x[0] in calls)
        st.set(ask_says=(*says, (f.tool_call_id, f.summary)))
    st.rec("ask", call=f.tool_call_id, state="in flight")


def _set_call(st: Step, call: str, state: str | None) -> None:
    calls = tuple((c, x) for c, x in st.s.ask_calls if c != call)
    st.set(ask_calls=(*calls, (call, state)) if state is not None else calls)


def on_tool_end(st: Step, f: ToolEnd) -> None:
    if f.tool_call_id in dict(st.s.ask_calls):
        _set_call(st, f.tool_call_id, None)
        end_wait(st, f"ask:{f.tool_call_id}", "tool_execution_end")


def _ask_target(st: Step, f: AskBlocked) -> str | None:
    calls = dict(st.s.ask_calls)
    if f.tool_call_id is not None:
        if f.tool_call_id in calls:
            return f.tool_call_id
        reject(st, "ask", "toolCallId not an ask_user_question call in flight in this session")
        return None
    if not f.active:
        waiting = [c for c, x in calls.items() if x == "waiting"]
        if len(waiting) == 1:
            return waiting[0]
    if len(calls) == 1:
        return next(iter(calls))
    reject(st, "ask", f"no toolCallId and {len(calls)} ask_user_question calls in flight")
    return None


def on_ask_blocked(st: Step, f: AskBlocked) -> None:
    observe(st, "ask")
    call = _ask_target(st, f)
    if call is None:
        return
    observe(st, "ask", trusted=True)
    state = dict(st.s.ask_calls)[call]
    if f.active:
        if state == "fresh":
            _set_call(st, call, "waiting")
            add_wait(st, f"ask:{call}", dict(st.s.ask_says).get(call))
        elif state == "done":
            reject(st, "ask", "active:true after the wait ended (replay does not reopen)")
    else:
        if state == "waiting":
            end_wait(st, f"ask:{call}", "active:false")
        _set_call(st, call, "done")
