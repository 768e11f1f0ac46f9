"""Generic mode: cues for any terminal program from the ``child`` source
(docs/design.md#generic-mode).

The child's BEL and its own notifications (OSC 9 / 777 / 99) open the wait ``"child"``; its output
going quiet after activity opens the weaker wait ``"quiet"`` ("seems to be waiting"). Output
resuming ends both. The rules of docs/design.md#cue-rules hold: nothing while the user looks (the
child's BEL or notification passes through and nothing more, then or later); one cue per event;
marks hidden on return; ``--no-cues`` and exit invalidate.

Translate, never duplicate: :func:`consume_notice` is the tracker's policy. While the user is
away, a child's notification in a protocol the host terminal does not show is taken out of the
output and comes back here ``consumed``: it is then delivered once, with the child's own text
(sanitized, capped), through cuewrap's channels. In a protocol the host shows, it passes
unchanged and cuewrap adds only the mark. OSC 7501 (``runs.on_program_status``) is stronger:
once a program speaks it, the child's signals are recorded only.

A known program's own notification in its fixed words (``notices.py``: Gemini CLI's) is a fact
of what it says: "session complete" settles a run (Finished, its outcome unknown: the same
words follow an error), "needs your attention" opens the child's wait (of kind ``permission``
at an approval: answerable, docs/answering.md). Such a notification is always taken out of
the output while cues are on: cuewrap's own cue is its one popup, and nothing while the user
looks.
"""

from __future__ import annotations

from cuewrap.engine import notices, wording
from cuewrap.engine._step import Step, app_name, block_reason, new_cue
from cuewrap.engine.runs import settle, start_run
from cuewrap.engine.said import on_said
from cuewrap.engine.state import EngineState
from cuewrap.engine.waits import end_wait
from cuewrap.engine.words import said as words
from cuewrap.facts import ChildBell, ChildNotice, OutputActive, OutputQuiet

CHILD = "child"  # wait opened by the child's BEL or notification
OSC = "osc"  # wait opened by the program's own OSC 7501 ``blocked`` (runs.on_program_status)
QUIET = "quiet"  # wait opened by output quiet after activity
TITLE_CAP = 80
BODY_CAP = 200


def stronger_live(s: EngineState) -> bool:
    return s.bridge_live or "osc7501" in s.trusted


def _looking_at(s: EngineState, now: float) -> bool:
    """``s.looking`` with the idle time up to ``now`` counted (no step needed)."""
    if s.focus_seen or s.idle_away or s.last_activity is None:
        return s.looking
    return now < s.last_activity + s.config.idle_after


def consume_notice(s: EngineState, protocol: str, now: float) -> bool:
    """The tracker's policy: take this child notification out of the output now?

    Only in generic mode with cues on, the user away, and either a wait of the child's already
    told (it merges: shown by the host it would be a second notification for one wait) or —
    no stronger source live — a channel to re-emit it and a host terminal that would not show
    it as it is. With the program's own OSC 7501 reports live, only the first: its notification
    during a ``blocked`` wait cuewrap already told (docs/generic-mode.md)."""
    if not (s.config.generic and s.cues_active):
        return False
    if notices.read_for(s.config.notices) and not stronger_live(s):
        return True  # read as a fact: cuewrap's cue is its one popup (on_child_notice)
    if _looking_at(s, now):
        return False
    if s.hush is not None or s.muted:  # quiet: it is the reminder, held (docs/attention.md)
        return True
    if stronger_live(s):
        return OSC in s.wait_keys and s.wait_cue is not None
    if CHILD in s.wait_keys:
        return True
    return s.config.reemit and protocol not in s.config.host_native


def _open_wait(st: Step, key: str) -> None:
    s = st.s
    if key in s.wait_keys:
        return
    wid = s.wait_seq + 1
    st.set(waits=(*s.waits, (key, wid)), wait_seq=wid)
    st.rec("wait", key=key, wait=wid, state="pending", source="child")


def _signal(st: Step, what: str) -> bool:
    """Common checks for a child's BEL or notification; True when it may cue."""
    s = st.s
    st.set(told=True)
    if stronger_live(s):
        st.rec("no_cue", source="child", signal=what, reason="a stronger source is live")
        return False
    block = block_reason(s)
    if block is not None:
        st.rec("no_cue", source="child", signal=what, reason=f"{block}: passed through only")
        return False
    end_wait(st, QUIET, f"child {what}")
    return True


def _signalled(st: Step) -> None:
    """For the overview: the program asked for the user, whatever the presence and cues."""
    if not stronger_live(st.s):
        st.set(signalled=True)


def on_child_bell(st: Step, f: ChildBell) -> None:
    if not st.s.config.generic:
        st.rec("no_cue", source="child", signal="BEL", reason="Pi mode: passed through only")
        return
    _signalled(st)
    if not _signal(st, "BEL"):
        return
    if CHILD in st.s.wait_keys:
        st.rec("no_cue", source="child", signal="BEL", reason="this wait was already told")
        return
    _open_wait(st, CHILD)
    note = new_cue(st, "needs-input", None, st.s.config.signal, None, source="child", signal="BEL")
    st.set(wait_cue=note.cue_id)


def on_child_notice(st: Step, f: ChildNotice) -> None:
    s = st.s
    said = notices.meaning(s.config.notices, f.title, f.body) if s.config.generic else None
    if said is not None and not stronger_live(s):
        _program_notice(st, f, said)
        return
    meaning = words(s.config.words, f.body) if s.config.generic and s.config.words else None
    if meaning is not None:  # the program's own words: its fact (engine/said.py)
        on_said(st, f, *meaning)
        return
    if s.config.generic:
        _signalled(st)
    if f.consumed:
        # taken out of the output by the policy: it reaches the user only through us
        if CHILD in s.wait_keys or (stronger_live(s) and OSC in s.wait_keys):
            # this wait was already told (the child's BEL or an earlier notification): the signals
            # of one wait merge into one notification (docs/design.md#cue-rules rules 2 and 5)
            st.set(told=True)
            st.rec(
                "no_cue",
                source="child",
                signal=f.protocol,
                reason="merged: this wait was already told",
                merged_chars=len(f.title) + len(f.body),
            )
            end_wait(st, QUIET, f"child {f.protocol}")
            return
        _open_wait(st, CHILD)
        title = wording.clean_text(f.title, TITLE_CAP) or wording.title(
            s.session_name or s.config.label, app_name(s)
        )
        body = wording.clean_text(f.body, BODY_CAP) or s.config.signal
        note = new_cue(
            st,
            "needs-input",
            None,
            body,
            None,
            source="child",
            title=title,
            private=True,
            signal=f.protocol,
            translated_from=f.protocol,
        )
        st.set(told=True, wait_cue=note.cue_id)
        end_wait(st, QUIET, f"child {f.protocol}")
        return
    if not s.config.generic:
        st.rec("no_cue", source="child", signal=f.protocol, reason="Pi mode: passed through only")
        return
    if not _signal(st, f.protocol):
        return
    _open_wait(st, CHILD)
    if f.protocol in s.config.host_native:
        why = f"the child's own {f.protocol} passed through: the host terminal shows it"
    else:
        why = f"the child's own {f.protocol} passed through: no channel to re-emit it"
    st.rec("cue", cue="needs-input", source="child", signal=f.protocol, delivery=why)


def _program_notice(st: Step, f: ChildNotice, said: notices.Meaning) -> None:
    """A known program's notification read as what it says (its text never in the log)."""
    st.set(told=True, notices_heard=True, busy=False)
    end_wait(st, QUIET, f"child {f.protocol}")
    if said == "ended":
        end_wait(st, CHILD, "its turn ended")
        if st.s.run is None:  # it reports no start: the run is implied by its end
            start_run(st, "notice")
            st.rec("run", run=st.s.run_seq, state="implied", reason="its turn-ended notification")
        settle(st, "uncertain", f"{f.protocol}: its turn ended")
        return
    _signalled(st)
    if CHILD in st.s.wait_keys:
        st.rec(
            "no_cue", source="child", signal=f.protocol, reason="merged: this wait was already told"
        )
        return
    _open_wait(st, CHILD)
    block = block_reason(st.s)
    if block is not None:
        st.rec("no_cue", cue="needs-input", source="child", signal=f.protocol, reason=block)
        return
    kind = "permission" if said == "permission" else None
    note = new_cue(
        st,
        "needs-input",
        None,
        wording.needs_input(),
        None,
        source="child",
        signal=f.protocol,
        read_from=f.protocol,
        fact_kind=kind,
    )
    st.set(wait_cue=note.cue_id)


def on_output_active(st: Step, f: OutputActive) -> None:
    if not st.s.config.generic:
        return
    why = "output after the user's input" if f.echo else "output resumed"
    for key in (CHILD, QUIET):
        end_wait(st, key, why)
    st.set(signalled=False)
    if not f.echo:
        # while the program reports its own state (OSC 7501, or its notifications read) its
        # output is not its activity: a redraw after "done" must not read as working
        # (docs/generic-mode.md)
        st.set(busy=not (stronger_live(st.s) or st.s.notices_heard), told=False)


def on_output_quiet(st: Step, f: OutputQuiet) -> None:
    s = st.s
    if not s.config.generic:
        return
    st.set(busy=False)
    if s.busy:
        _signalled(st)  # "seems to be waiting"
    reason: str | None = None
    if not s.busy:
        reason = "no output activity before (only echo)"
    elif s.told:
        reason = "already told by a stronger fact (BEL, notification or OSC 7501)"
    elif stronger_live(s):
        reason = "a stronger source is live"
    elif s.waits:
        reason = "a wait is already pending"
    else:
        reason = block_reason(s)
    if reason is not None:
        st.rec("no_cue", cue="needs-input", source="child", signal="quiet", reason=reason)
        return
    _open_wait(st, QUIET)
    note = new_cue(
        st,
        "needs-input",
        None,
        wording.seems_waiting(),
        None,
        source="child",
        certainty="uncertain",
        signal="quiet",
    )
    st.set(wait_cue=note.cue_id)
