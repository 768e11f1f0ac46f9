"""Pi's session lifecycle over the bridge: hello, start, shutdown, gaps (SPEC 5, rule 10).

A gap (shutdown, bridge gone, a new session without a shutdown) bumps the generation: cues,
waits, Ask calls and background counts from before it can no longer fire.
"""

from __future__ import annotations

from cuewrap.engine._step import Step, invalidate, observe
from cuewrap.engine.waits import drop_waits
from cuewrap.facts import BridgeGone, BridgeHello, SessionShutdown, SessionStart


def _gap(st: Step, reason: str) -> None:
    s = st.s
    drop_waits(st, "gap")
    st.set(
        generation=s.generation + 1,
        in_gap=True,
        ask_calls=(),
        bg_active=0,
        live_cues=frozenset(),
        cue_mark=None,
        wait_cue=None,
        uncovered=frozenset(),
    )
    st.rec("gap", reason=reason, generation=s.generation + 1, background_now_gap=s.bg_active)


def _close_gap(st: Step) -> None:
    s = st.s
    st.set(in_gap=False)
    if s.run is not None and s.run.generation != s.generation:
        st.set(run=None)
        st.rec("run", run=s.run.id, state="dropped", reason="started before a gap")


def _new_runtime(st: Step, session_id: str, session_file: str | None, why: str) -> None:
    s = st.s
    if s.in_gap:
        _close_gap(st)
    elif s.session_id is not None and session_id != s.session_id:
        _gap(st, f"{why}: new session without shutdown")
        _close_gap(st)
    elif s.session_id is not None:
        st.rec("session", state="duplicate or same runtime (harmless)")
    st.set(session_id=session_id, parent=session_file or session_id)


def on_bridge_hello(st: Step, f: BridgeHello) -> None:
    observe(st, "bridge", trusted=True)
    _new_runtime(st, f.session_id, f.session_file, "hello")
    st.set(bridge_live=True, session_name=f.session_name)
    s = st.s
    if f.mode != "tui":
        if s.guard is None:
            st.set(guard=f"Pi mode is {f.mode!r}, not 'tui' (cues off for this runtime)")
            invalidate(st, "guard")
            st.set(uncovered=frozenset())
            st.rec("guard", enabled=False, mode=f.mode)
    elif s.guard is not None:
        st.set(guard=None)
        st.rec("guard", enabled=True, mode=f.mode)


def on_session_start(st: Step, f: SessionStart) -> None:
    _new_runtime(st, f.session_id, f.session_file, f"session_start {f.reason}")


def on_session_shutdown(st: Step, f: SessionShutdown) -> None:
    if not st.s.in_gap:
        _gap(st, f"session_shutdown {f.reason}")


def on_bridge_gone(st: Step, f: BridgeGone) -> None:
    st.set(bridge_live=False)
    if not st.s.in_gap:
        _gap(st, "bridge gone")
