"""``cuewrap doctor -- COMMAND``: the preset, the facts listened for, the channels and why."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.pty


def doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    e.pop("DISPLAY", None)
    e.pop("WAYLAND_DISPLAY", None)
    e.update(TERM="xterm-256color", HOME=os.environ.get("HOME", "/"), **env)
    return subprocess.run(
        [sys.executable, "-m", "cuewrap", "doctor", *args],
        capture_output=True,
        text=True,
        env=e,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )


def section(out: str) -> str:
    return out[out.index("For: ") : out.index("\nChannels")]


def test_doctor_for_a_known_agent_names_preset_facts_and_translation() -> None:
    done = doctor("--", "/usr/local/bin/codex", "--full-auto", CUEWRAP_NOTIFY_TERMINAL="osc777")
    assert done.returncode == 0, done.stderr
    text = section(done.stdout)
    assert "preset: codex (detected from the command name 'codex')" in text
    assert "'Waiting for you' [?]" in text  # no more than its signal says
    assert "after 15 s of quiet: 'Seems to be waiting'" in text
    assert "OSC 777  passed as they are (this terminal shows them)" in text
    assert "OSC 9    taken out and re-emitted once as OSC 777" in text
    assert "OSC 99   taken out and re-emitted once as OSC 777" in text
    marks = next(ln for ln in done.stdout.splitlines() if ln.strip().startswith("title marks"))
    assert "before Codex's title" in marks and "Pi" not in marks  # never assume Pi
    # its reports count unasked, and the table of the programs measured says so, its row first
    assert "its app=codex reports" in text
    table = text[text.index("programs measured") :]
    assert table.splitlines()[1].strip().startswith("Codex CLI (this one; 0.171.0")
    for name in ("Claude Code (also", "opencode (also", "Gemini CLI (also", "aider (also"):
        assert name in table
    assert "certain" in table.split("Claude Code (also")[0]


def test_doctor_for_an_unknown_program_lists_the_programs_measured_none_as_this_one() -> None:
    text = section(doctor("--", "make", CUEWRAP_NOTIFY_TERMINAL="osc777").stdout)
    assert "this one" not in text and "Codex CLI (also; 0.171.0" in text
    assert "reports unasked" not in text


def test_doctor_preset_override_quiet_off_and_no_channel() -> None:
    done = doctor(
        "--",
        "claude",
        CUEWRAP_GENERIC_PRESET="none",
        CUEWRAP_GENERIC_QUIET_AFTER="0",
        CUEWRAP_NOTIFY_TERMINAL="off",
        CUEWRAP_NOTIFY_DESKTOP="off",
    )
    text = section(done.stdout)
    assert "preset: none (generic.preset = none)" in text
    assert "'Wants your attention' [?]" in text
    assert "off (generic.quiet_after = 0)" in text
    assert "OSC 9    passed as they are: cuewrap has no channel to re-emit them" in text


def test_doctor_for_pi_says_pi_mode_and_bad_usage_is_2() -> None:
    assert "Pi mode (the command is pi)" in doctor("--", "pi").stdout
    bad = doctor("--")
    assert bad.returncode == 2 and "missing COMMAND after --" in bad.stderr
    plain = doctor()
    assert plain.returncode == 0 and "For: " not in plain.stdout


def test_doctor_inside_tmux_reemits_through_tmux(tmp_path: object) -> None:
    # a TMUX pointing at no server: tmux cannot be asked, so no passthrough; a raw OSC from
    # the pane would never get through tmux, its status line still does
    done = doctor(
        "--",
        "codex",
        TMUX=f"{tmp_path}/no-such-socket,1,0",
        CUEWRAP_NOTIFY_DESKTOP="off",
    )
    text = section(done.stdout)
    assert "OSC 9    taken out and re-emitted once as a tmux status-line message" in text
