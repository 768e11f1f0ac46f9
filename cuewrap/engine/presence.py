"""Presence: focus reports, keystrokes and idle time (docs/design.md#presence;
docs/design.md#cue-rules rules 2, 3 and 7).

Focus reports, once seen, are the only source; until then a keystroke means "present" and
``idle_after`` seconds without one mean "away". Leaving with a wait pending gives its cue;
returning invalidates pending cues.
"""

from __future__ import annotations

from cuewrap.engine._step import Step, block_reason, invalidate
from cuewrap.engine.waits import notify_wait
from cuewrap.facts import Keystroke, Presence


def advance_idle(st: Step) -> None:
    s = st.s
    if s.focus_seen or s.idle_away or s.last_activity is None:
        return
    if st.now >= s.last_activity + s.config.idle_after:
        st.set(idle_away=True)
        st.rec("presence", presence="away", via="idle", idle_after=s.config.idle_after)
        _on_leave(st)


def on_presence(st: Step, f: Presence) -> None:
    s = st.s
    before = s.looking
    if f.state in ("focused", "away"):
        st.set(focus_seen=True, focus_state=f.state, presence_via=f.source)
    else:  # the focus source says it no longer knows: back to keystrokes and idle time
        st.set(focus_seen=False, idle_away=False, last_activity=st.now)
    if f.source == "focus":  # a real focus report (not tmux's view of the pane)
        st.set(seen=st.s.seen | {"focus"})
        if f.state != "unknown":
            st.set(trusted=st.s.trusted | {"focus"})
    if st.s.looking != before or f.state == "unknown":
        st.rec("presence", presence=f.state, via=f.source)
    _presence_changed(st, before)


def on_keystroke(st: Step, f: Keystroke) -> None:
    s = st.s
    if s.focus_seen:
        return  # focus reports rule: keys say nothing more
    before = s.looking
    st.set(last_activity=st.now, idle_away=False)
    if not before:
        st.rec("presence", presence="present", via="keys")
    _presence_changed(st, before)


def _presence_changed(st: Step, before: bool) -> None:
    after = st.s.looking
    if before and not after:
        _on_leave(st)
    elif after and not before:
        invalidate(st, "user returned")  # rule 3 (marks) and rule 7


def _on_leave(st: Step) -> None:
    s = st.s
    if not s.waits:
        return
    block = block_reason(s)
    if block is not None:
        st.rec("no_cue", cue="needs-input", reason=block)
    elif s.uncovered:
        notify_wait(st)  # rule 2: left while a wait is pending
    else:
        st.rec("no_cue", cue="needs-input", reason="already notified for this wait (rule 4)")
