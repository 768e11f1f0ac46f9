"""A muted session inside tmux (docs/attention.md): `cuewrap mute` from another window, the
window option ``@cuewrap_muted`` beside ``@cuewrap_state`` (which keeps the state), `ls`;
unmute unsets it. Real Pi in a real tmux (the scene of tests/test_sessions_tmux_pi.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_sessions_tmux_pi import Scene, scene  # noqa: F401  (the fixture)
from tmuxrig import SESSION

pytestmark = pytest.mark.tmux


def muted_option(sc: Scene, window: int) -> str:
    out = sc.rig.tmux(
        "show-options", "-w", "-v", "-t", f"{SESSION}:{window}", "@cuewrap_muted", check=False
    )
    return out.strip()


def cuewrap(sc: Scene, *args: str) -> int:
    return subprocess.run([sys.executable, "-m", "cuewrap", *args], env=sc.env,
                          capture_output=True, timeout=30).returncode  # fmt: skip


@pytest.mark.parametrize("scene", [{}], indirect=True, ids=["defaults"])
def test_mute_shows_on_the_window_and_in_ls(scene: Scene) -> None:  # noqa: F811
    sc = scene
    sc.wait(lambda: len(sc.ls()) == 2, "two sessions listed")
    sc.wait_state(1, "idle")
    b = next(r for r in sc.ls() if r["where"] == f"{SESSION}:1.0")
    assert cuewrap(sc, "mute", str(b["pid"]), "1h") == 0
    sc.wait(lambda: muted_option(sc, 1) == "1", "@cuewrap_muted on window 1")
    assert muted_option(sc, 0) == ""
    assert sc.option(1) == "idle"  # the state stays what it is
    row = next(r for r in sc.ls() if r["pid"] == b["pid"])
    assert row["muted"] is True and isinstance(row["muted_until"], float)
    assert cuewrap(sc, "unmute", str(b["pid"])) == 0
    sc.wait(lambda: muted_option(sc, 1) == "", "@cuewrap_muted unset")
    assert cuewrap(sc, "mute", str(b["pid"])) == 0
    sc.wait(lambda: muted_option(sc, 1) == "1", "@cuewrap_muted on again")
    sc.type_into(1, "/quit")  # the end unsets it with the state
    sc.wait(lambda: sc.option(1) == "" and muted_option(sc, 1) == "", "both unset at the end")
