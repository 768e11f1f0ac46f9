"""The /cue page in real Pi under cuewrap (docs/design.md#what-the-user-sees): what cuewrap sees,
shown in Pi."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.pi


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_cue_page_shows_sources_presence_and_channels(pi_session) -> None:  # type: ignore[no-untyped-def]
    s = pi_session(env={"CUEWRAP_NOTIFY_TERMINAL": "osc9"})
    s.focus_out()
    s.submit("/cue")
    s.wait_for_screen(r"cuewrap: cues on")
    s.wait_for_screen(r"Pi bridge: trusted protocol observed")
    s.wait_for_screen(r"OSC 7501: trusted protocol observed")
    s.wait_for_screen(r"focus reports: trusted protocol observed")
    s.wait_for_screen(r"Ask: not yet observed")
    s.wait_for_screen(r"presence: away")
    s.wait_for_screen(r"Pi 1\.4\.0: full cues")
    s.wait_for_screen(r"capacity: Ask ids 0/8192, background 0/8192")
    s.wait_for_screen(r"channels: terminal osc9")
    s.wait_for_screen(r"desktop popup: the terminal.s own")
    s.submit("/cue off")
    s.wait_for_screen(r"cuewrap: cues off")
    s.submit("/cue")
    s.wait_for_screen(r"cuewrap: cues off ·")
    s.quit()
    assert s.wait_exit() == 0
