"""The session's mode, decided once (cuewrap/wiring/mode.py), and the test hook's faults, read
once (cuewrap/wiring/_faults.py)."""

from __future__ import annotations

import pytest

from cuewrap.wiring._faults import NO_FAULTS, Fault, faults_of
from cuewrap.wiring.mode import mode_of

pytestmark = pytest.mark.unit


def test_pi_with_and_without_its_bridge() -> None:
    pi = mode_of(["/opt/bin/pi", "--model", "x"], no_bridge=False, preset="claude")
    assert pi.pi and not pi.generic and pi.bridge and pi.preset is None
    assert (pi.program, pi.app, pi.answering) == ("pi", "Pi", "pi")
    assert not pi.answers_child and pi.own_status_app is None and not pi.content_only
    bare = mode_of(["pi"], no_bridge=True, preset="auto")
    assert bare.pi and not bare.bridge and bare.answering == ""


def test_a_pi_without_its_tui_is_content_only() -> None:
    assert mode_of(["pi", "-p", "hello"], no_bridge=False, preset="auto").content_only
    assert mode_of(["pi", "--mode", "json"], no_bridge=True, preset="auto").content_only
    assert not mode_of(["pi", "--", "-p"], no_bridge=False, preset="auto").content_only


def test_generic_mode_carries_its_preset_looked_up_once() -> None:
    codex = mode_of(["/usr/bin/codex", "exec"], no_bridge=False, preset="auto")
    assert codex.generic and not codex.pi and not codex.bridge
    assert codex.preset is not None and codex.preset.name == "codex"
    assert "detected from the command name" in codex.preset_why
    assert (codex.program, codex.app, codex.answering) == ("codex", "Codex", "program")
    assert codex.own_status_app == "codex" and not codex.answers_child
    assert mode_of(["opencode"], no_bridge=False, preset="auto").answers_child
    assert mode_of(["aider"], no_bridge=False, preset="auto").content_only
    # the setting wins over the name; "none": an unknown program, named by its command
    forced = mode_of(["my-wrapper"], no_bridge=False, preset="aider")
    assert forced.preset is not None and forced.preset.name == "aider"
    unknown = mode_of(["/usr/bin/codex"], no_bridge=False, preset="none")
    assert unknown.preset is not None and unknown.preset.name == "none"
    assert unknown.app == "codex" and not unknown.content_only


def test_faults_are_read_from_the_variable_only() -> None:
    assert faults_of({}) is NO_FAULTS and not NO_FAULTS.on
    assert faults_of({"OTHER": "tracker"}) is NO_FAULTS
    comma = faults_of({"CUEWRAP_DEBUG_FAULT": ","})
    assert comma.on and comma.names == frozenset()  # set: the terminal is not asked
    f = faults_of({"CUEWRAP_DEBUG_FAULT": "sink,build:keys"})
    assert f.raises("sink") and not f.raises("tracker") and not f.raises("keys")
    f.before("bridge")  # not asked: nothing happens
    with pytest.raises(Fault, match="before keys"):
        f.before("keys")
    # an item names one part exactly (build:wiredx is not build:wired)
    faults_of({"CUEWRAP_DEBUG_FAULT": "build:wiredx"}).before("wired")
