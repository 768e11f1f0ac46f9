from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cuewrap.deliver.terminal import (
    Choice,
    TerminalNotifier,
    TmuxInfo,
    detect_terminal_protocol,
    query_tmux,
)
from cuewrap.engine.effects import Eligibility, Notify
from cuewrap.term.sequences import BEL, osc9, osc99, osc777, tmux_passthrough


def no_tmux() -> TmuxInfo | None:
    raise AssertionError("tmux must not be queried outside tmux")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("env", "protocol", "terminal"),
    [
        ({"TERM": "xterm-kitty"}, "osc99", "kitty"),
        ({"TERM": "xterm-256color", "KITTY_WINDOW_ID": "1"}, "osc99", "kitty"),
        ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, "osc9", "iTerm2"),
        ({"LC_TERMINAL": "iTerm2", "TERM": "xterm-256color"}, "osc9", "iTerm2"),
        ({"TERM_PROGRAM": "WezTerm", "TERM": "xterm-256color"}, "osc777", "WezTerm"),
        ({"TERM": "wezterm"}, "osc777", "WezTerm"),
        ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc777", "ghostty"),
        ({"TERM": "xterm-ghostty"}, "osc777", "ghostty"),
        ({"TERM_PROGRAM": "vscode", "TERM": "xterm-256color"}, "osc99", "VS Code"),
        ({"WT_SESSION": "abc", "TERM": "xterm-256color"}, "osc777", "Windows Terminal"),
        ({"TERM": "foot"}, "osc777", "foot"),
        ({"TERM": "foot-extra"}, "osc777", "foot"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777", "rxvt-unicode"),
        ({"TERM": "xterm-256color", "VTE_VERSION": "7600"}, "osc777", "VTE"),
        ({"TERM_PROGRAM": "Apple_Terminal", "TERM": "xterm-256color"}, "off", "Terminal.app"),
        ({"TERM": "xterm-256color"}, "osc777", "unknown"),
        ({}, "osc777", "unknown"),
    ],
)
def test_detection_outside_tmux(env: dict[str, str], protocol: str, terminal: str) -> None:
    choice = detect_terminal_protocol(env, "auto", no_tmux)
    assert (choice.protocol, choice.terminal, choice.tmux_passthrough) == (
        protocol,
        terminal,
        False,
    )
    assert choice.reason


@pytest.mark.unit
def test_setting_overrides_detection() -> None:
    choice = detect_terminal_protocol({"TERM": "xterm-kitty"}, "osc9", no_tmux)
    assert choice.protocol == "osc9"
    assert "notify.terminal = osc9" in choice.reason
    assert detect_terminal_protocol({"TERM": "xterm-kitty"}, "off", no_tmux).protocol == "off"


@pytest.mark.unit
def test_setting_off_does_not_ask_tmux() -> None:
    choice = detect_terminal_protocol({"TMUX": "/tmp/x,1,0"}, "off", no_tmux)
    assert choice == Choice("off", False, "notify.terminal is off")


TMUX_ENV = {"TMUX": "/tmp/tmux-0/default,123,0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}


@pytest.mark.unit
@pytest.mark.parametrize("allow", ["on", "all"])
def test_tmux_with_passthrough_wraps(allow: str) -> None:
    info = TmuxInfo(allow, "xterm-kitty", "kitty(0.35.2)", "3.4")
    choice = detect_terminal_protocol(TMUX_ENV, "auto", lambda: info)
    assert (choice.protocol, choice.tmux_passthrough, choice.terminal) == ("osc99", True, "kitty")
    assert f"allow-passthrough is {allow}" in choice.reason


@pytest.mark.unit
def test_tmux_without_passthrough_sends_nothing() -> None:
    info = TmuxInfo("off", "xterm-ghostty", "ghostty 1.1.3", "3.3a")
    choice = detect_terminal_protocol(TMUX_ENV, "auto", lambda: info)
    assert (choice.protocol, choice.tmux_passthrough) == ("off", False)
    assert "allow-passthrough off" in choice.reason
    assert choice.terminal == "ghostty"
    # an explicit protocol cannot get through a tmux that drops it either
    assert detect_terminal_protocol(TMUX_ENV, "osc777", lambda: info).protocol == "off"


@pytest.mark.unit
def test_old_tmux_always_passes() -> None:
    info = TmuxInfo(None, "foot", "", "3.2a")
    choice = detect_terminal_protocol(TMUX_ENV, "auto", lambda: info)
    assert (choice.protocol, choice.tmux_passthrough, choice.terminal) == ("osc777", True, "foot")


@pytest.mark.unit
def test_tmux_that_cannot_be_queried_sends_nothing() -> None:
    choice = detect_terminal_protocol(TMUX_ENV, "auto", lambda: None)
    assert choice.protocol == "off"
    assert "could not be queried" in choice.reason


@pytest.mark.unit
def test_tmux_client_wins_over_stale_environment() -> None:
    """The tmux server was started from kitty; the user is now attached from iTerm2."""
    env = dict(TMUX_ENV, KITTY_WINDOW_ID="3")
    info = TmuxInfo("on", "xterm-256color", "iTerm2 3.5.4", "3.4")
    choice = detect_terminal_protocol(env, "auto", lambda: info)
    assert (choice.protocol, choice.terminal) == ("osc9", "iTerm2")
    # a client that says nothing specific: the environment decides
    info = TmuxInfo("on", "xterm-256color", "", "3.4")
    assert detect_terminal_protocol(env, "auto", lambda: info).terminal == "kitty"


@pytest.mark.unit
def test_tmux_own_term_is_not_used() -> None:
    info = TmuxInfo("on", "", "", "3.4")
    env = dict(TMUX_ENV, TERM="foot")  # cannot be the outer terminal's TERM inside tmux
    assert detect_terminal_protocol(env, "auto", lambda: info).terminal == "unknown"


@pytest.mark.unit
def test_tmux_is_queried_once() -> None:
    calls: list[int] = []

    def query() -> TmuxInfo:
        calls.append(1)
        return TmuxInfo("on")

    detect_terminal_protocol(TMUX_ENV, "auto", query)
    assert calls == [1]


# -- building ------------------------------------------------------------------------------------
def notify(title: str = "Pi · proj", body: str = "finished", cue_id: int = 5) -> Notify:
    return Notify(
        cue_id=cue_id,
        kind="finished",
        outcome="completed",
        title=title,
        body=body,
        eligibility=Eligibility(generation=1, run=1, cue_id=cue_id, epoch=0),
    )


@pytest.mark.unit
def test_build_each_protocol() -> None:
    n = notify()
    assert TerminalNotifier(Choice("osc777", False, "")).build(n) == osc777("Pi · proj", "finished")
    assert TerminalNotifier(Choice("osc9", False, "")).build(n) == osc9("Pi · proj: finished")
    assert TerminalNotifier(Choice("osc99", False, "")).build(n) == osc99(
        "Pi · proj", "finished", ident="cuewrap-5"
    )
    assert TerminalNotifier(Choice("off", False, "")).build(n) == b""


@pytest.mark.unit
def test_build_wraps_for_tmux_and_appends_one_bell() -> None:
    n = notify()
    wrapped = TerminalNotifier(Choice("osc777", True, ""), bell=True).build(n)
    assert wrapped == tmux_passthrough(osc777("Pi · proj", "finished")) + BEL
    assert wrapped.count(BEL) == 1
    assert TerminalNotifier(Choice("off", False, ""), bell=True).build(n) == BEL


@pytest.mark.unit
def test_build_sanitizes_text() -> None:
    out = TerminalNotifier(Choice("osc777", False, "")).build(
        notify("a;b\x1b]0;evil\x07", "x\ny;z\x9c")
    )
    assert out.startswith(b"\x1b]777;notify;")
    assert out.count(b";") == 3  # 777 ; notify ; title ; body — no extra separators
    assert b"\x07" not in out and b"\n" not in out and "\x9c".encode() not in out
    assert out.count(b"\x1b") == 2  # the OSC introducer and ST


@pytest.mark.unit
def test_enabled() -> None:
    assert TerminalNotifier(Choice("osc9", False, "")).enabled
    assert TerminalNotifier(Choice("off", False, ""), bell=True).enabled
    assert not TerminalNotifier(Choice("off", False, "")).enabled


# -- asking a real tmux ---------------------------------------------------------------------------
@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[dict[str, str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/install-test-deps installs it)")
    sock = str(tmp_path / f"tmux-{uuid.uuid4().hex[:8]}")
    base = ["tmux", "-S", sock, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-s", "t", "sleep 120"], check=True, timeout=10)
    try:
        pane = subprocess.run(
            [*base, "display-message", "-p", "-t", "t", "#{pane_id}"],
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        pid = subprocess.run(
            [*base, "display-message", "-p", "#{pid}"],
            check=True,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        # what a process inside that pane sees
        yield {
            "TMUX": f"{sock},{pid},0",
            "TMUX_PANE": pane,
            "PATH": os.environ["PATH"],
            "_SOCK": sock,
        }
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, timeout=10)


@pytest.mark.tmux
def test_query_real_tmux(tmux_server: dict[str, str]) -> None:
    env = tmux_server
    base = ["tmux", "-S", env["_SOCK"]]
    info = query_tmux(env)
    assert info is not None
    assert info.version
    assert info.allow_passthrough in ("off", None)  # default: off (None on tmux < 3.3)
    if info.allow_passthrough is None:
        return
    assert detect_terminal_protocol(env, "auto", lambda: info).protocol == "off"
    # turn it on for this pane only: the pane's effective value counts
    subprocess.run(
        [*base, "set", "-p", "-t", env["TMUX_PANE"], "allow-passthrough", "on"],
        check=True,
        timeout=10,
    )
    info = query_tmux(env)
    assert info is not None and info.allow_passthrough == "on"
    choice = detect_terminal_protocol(env, "auto", lambda: info)
    assert choice.tmux_passthrough and choice.protocol == "osc777"


@pytest.mark.tmux
def test_query_tmux_without_a_server(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    env = {"TMUX": f"{tmp_path}/no-such-socket,1,0", "PATH": os.environ["PATH"]}
    started = time.monotonic()
    assert query_tmux(env) is None
    assert time.monotonic() - started < 3
