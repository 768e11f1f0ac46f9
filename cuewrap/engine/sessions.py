"""Pi's session lifecycle over the bridge: hello, start, shutdown, gaps (docs/design.md#cue-rules
rule 10).

A gap (shutdown, bridge gone, a new session without a shutdown) bumps the generation: cues,
waits, Ask calls and background counts from before it can no longer fire.
"""

from __future__ import annotations

from cuewrap.engine import pi_support
from cuewrap.engine._step import Step, invalidate, observe
from cuewrap.engine.effects import Diagnostic
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
    _pi_support(st, f)
    s = st.s
    # a Pi that does not say its mode (0.74.2) has a UI only in its interactive mode
    mode = f.mode if f.mode is not None else ("tui" if f.has_ui else "without UI")
    if mode != "tui":
        if s.guard is None:
            st.set(guard=f"Pi mode is {mode!r}, not 'tui' (cues off for this runtime)")
            invalidate(st, "guard")
            st.set(uncovered=frozenset())
            st.rec("guard", enabled=False, mode=mode)
    elif s.guard is not None:
        st.set(guard=None)
        st.rec("guard", enabled=True, mode=mode)


def _pi_support(st: Step, f: BridgeHello) -> None:
    """What this Pi gives (its hello's capabilities); said once when cues are partial."""
    s = st.s
    if s.pi_version == f.pi_version and s.pi_caps == f.capabilities and s.pi_told:
        return
    st.set(pi_version=f.pi_version, pi_caps=f.capabilities)
    line = pi_support.describe(f.pi_version, f.capabilities)
    gone = [feature.name for feature in pi_support.missing(f.capabilities)]
    caps = sorted(f.capabilities) if f.capabilities is not None else None
    st.rec("pi_support", pi=f.pi_version, capabilities=caps, missing=gone, full=line is None)
    if line is not None and not s.pi_told:
        st.set(pi_told=True)
        st.fx.append(Diagnostic(line))


def on_session_start(st: Step, f: SessionStart) -> None:
    _new_runtime(st, f.session_id, f.session_file, f"session_start {f.reason}")


def on_session_shutdown(st: Step, f: SessionShutdown) -> None:
    if not st.s.in_gap:
        _gap(st, f"session_shutdown {f.reason}")


def on_bridge_gone(st: Step, f: BridgeGone) -> None:
    st.set(bridge_live=False)
    if not st.s.in_gap:
        _gap(st, "bridge gone")
