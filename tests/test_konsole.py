"""Konsole, as cuewrap knows it: detection (KONSOLE_VERSION), its own OSC 777 popup, a bell
that is a popup of its own, and its tab title format (cuewrap.term.konsole). Real Konsole:
tests/test_realterm_matrix.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuewrap.deliver.plan import make_plan
from cuewrap.deliver.terminal import Choice, detect_terminal_protocol
from cuewrap.term.konsole import DEFAULT_FORMAT, osc30, tab_title, user_format

pytestmark = pytest.mark.unit

KONSOLE = {"KONSOLE_VERSION": "221203", "TERM": "xterm-256color", "COLORTERM": "truecolor"}
LOCAL = (True, "local graphical session (DISPLAY=:0)")


def files(found: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda path: found.get(str(path))


def test_konsole_is_known_by_its_environment_and_shows_its_own_osc777() -> None:
    choice = detect_terminal_protocol(KONSOLE, "auto", lambda: None)
    assert (choice.terminal, choice.protocol) == ("Konsole", "osc777"), choice
    plan = make_plan(choice, "auto", "auto", *LOCAL, in_tmux=False)
    assert (plan.path, plan.terminal, plan.desktop) == ("terminal", True, False), plan


@pytest.mark.parametrize(
    ("terminal", "desktop", "path", "rings"),
    [
        ("auto", "auto", "terminal", False),  # Konsole's own popup: the bell would be a second
        ("osc777", "auto", "terminal", False),
        ("off", "auto", "desktop", False),  # cuewrap's popup: still no bell popup as well
        ("off", "off", "none", True),  # no other popup: the bell is the one
    ],
)
def test_a_bell_in_konsole_never_makes_a_second_popup(
    terminal: str, desktop: str, path: str, rings: bool
) -> None:
    choice = detect_terminal_protocol(KONSOLE, terminal, lambda: None)
    on = LOCAL if desktop != "off" else (False, "notify.desktop = off")
    plan = make_plan(choice, terminal, desktop, *on, in_tmux=False, bell=True)
    assert (plan.path, plan.bell) == (path, rings), plan
    if not rings:
        assert "Konsole" in plan.bell_why and "popup" in plan.bell_why


def test_a_bell_elsewhere_rings_as_set() -> None:
    xterm = Choice("osc777", False, "xterm", "xterm")
    assert make_plan(xterm, "auto", "auto", *LOCAL, in_tmux=False, bell=True).bell
    assert not make_plan(xterm, "auto", "auto", *LOCAL, in_tmux=False, bell=False).bell


def test_the_tab_format_shows_the_title_while_cuewrap_runs_and_comes_back() -> None:
    both = tab_title(KONSOLE | {"HOME": "/h"}, files({}))
    assert both == (osc30("%w"), osc30(DEFAULT_FORMAT)), both
    assert both[0] == b"\x1b]30;%w\x1b\\"


def test_the_format_of_the_users_default_profile_comes_back() -> None:
    found = {
        "/h/.config/konsolerc": "[Desktop Entry]\nDefaultProfile=Mine.profile\n",
        "/h/.local/share/konsole/Mine.profile": "[General]\nLocalTabTitleFormat=%n in %D\n",
    }
    env = KONSOLE | {"HOME": "/h"}
    assert user_format(env, files(found)) == "%n in %D"
    assert tab_title(env, files(found)) == (osc30("%w"), osc30("%n in %D"))
    # a format that shows the program's title already: nothing to do
    found["/h/.local/share/konsole/Mine.profile"] = "[General]\nLocalTabTitleFormat=%w\n"
    assert tab_title(env, files(found)) is None
    # a profile name that is a path, a broken file: Konsole's default
    found["/h/.config/konsolerc"] = "[Desktop Entry]\nDefaultProfile=../../x\n"
    assert user_format(env, files(found)) == DEFAULT_FORMAT
    found["/h/.config/konsolerc"] = "not ini ["
    assert user_format(env, files(found)) == DEFAULT_FORMAT


@pytest.mark.parametrize(
    "extra", [{"TMUX": "/tmp/t,1,0"}, {"STY": "1.pts-0.h"}, {"KONSOLE_VERSION": ""}]
)
def test_not_konsole_or_behind_a_multiplexer_nothing(extra: dict[str, str]) -> None:
    assert tab_title(KONSOLE | {"HOME": "/h"} | extra, files({})) is None


def test_a_format_with_control_characters_is_sanitized() -> None:
    env = KONSOLE | {"HOME": "/h"}
    found = {
        "/h/.config/konsolerc": "[Desktop Entry]\nDefaultProfile=P.profile\n",
        "/h/.local/share/konsole/P.profile": "[General]\nLocalTabTitleFormat=%d\x07\x1b]52;c;x\n",
    }
    both = tab_title(env, files(found))
    assert both is not None
    assert both[1].count(b"\x1b") == 2 and b"\x07" not in both[1], both  # its own OSC and ST


def test_real_files_are_read(tmp_path: Path) -> None:
    from cuewrap.term.konsole import read_small

    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "konsolerc").write_text("[Desktop Entry]\nDefaultProfile=A.profile\n")
    (tmp_path / ".local" / "share" / "konsole").mkdir(parents=True)
    (tmp_path / ".local" / "share" / "konsole" / "A.profile").write_text(
        "[General]\nLocalTabTitleFormat=%u@%h\n"
    )
    assert user_format({"HOME": str(tmp_path)}, read_small) == "%u@%h"
    assert read_small(tmp_path / "none") is None


def test_doctor_says_where_the_marks_show_in_konsole(tmp_path: Path) -> None:
    from cuewrap.config import load_settings
    from cuewrap.doctor.report import _channels

    env = KONSOLE | {"HOME": str(tmp_path)}
    choice = detect_terminal_protocol(env, "auto", lambda: None)
    lines = {
        name: why for name, _, why in _channels(load_settings(None, env, {}), env, choice, None)
    }
    assert "Konsole's tab title format is %w" in lines["title marks"], lines
