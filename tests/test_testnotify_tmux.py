"""Inside tmux, ``cuewrap config``'s test notification takes a reminder's route too: the
session's tmux side decides from tmux's view of the pane (docs/architecture.md#a-cue).

A real tmux server on a private socket with a user's client attached (``test_tmux_side``'s
``Server``); the real cue comes from the cue side a session builds in the same pane.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_testnotify import real_cue, run_test_notification, what_channels_did
from test_tmux_side import Server

from cuewrap.config import Settings

pytestmark = pytest.mark.tmux


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.close()


def pane_env(server: Server, tmp_path: Path) -> dict[str, str]:
    env = server.start()
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT"):
        env.pop(var, None)  # no desktop: what tmux does is what is compared
    return {**env, "XDG_RUNTIME_DIR": str(tmp_path), "TERM": "tmux-256color"}


def deliveries(records: list[dict[str, Any]]) -> list[tuple[object, object, object]]:
    return [(r["channel"], r["state"], r["reason"]) for r in records if r["kind"] == "delivery"]


def test_a_hidden_pane_gets_the_same_tmux_route_as_a_real_cue(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = pane_env(server, tmp_path)
    server.tmux("select-window", "-t", "work:1")  # the user looks at another window
    cue_records, cue_bytes = real_cue(env, Settings(), presence="tmux")
    test_records, test_bytes, line = run_test_notification(env, Settings())
    assert what_channels_did(test_records) == what_channels_did(cue_records)
    got = deliveries(test_records)
    assert ("terminal", "off", "Pi's window is not shown: tmux would drop it") in got, got
    assert [s for c, s, _ in got if c == "tmux"] == ["delivered"], got  # a status-line message
    assert cue_bytes.count(b"\x07") == test_bytes.count(b"\x07")  # the window's bell flag
    assert "tmux: delivered (status-line message on" in line, line


def test_a_shown_pane_sends_through_tmuxs_passthrough(server: Server, tmp_path: Path) -> None:
    env = pane_env(server, tmp_path)
    server.tmux("set-option", "-g", "allow-passthrough", "on")
    records, written, line = run_test_notification(env, Settings())
    got = deliveries(records)
    assert ("terminal", "unconfirmable", "tmux passthrough (pane shown)") in got, got
    assert written.startswith(b"\x1bPtmux;\x1b\x1b]777;notify;Pi;cuewrap config: test"), written
    assert "tmux" not in {c for c, _, _ in got}  # the user looks at the pane: no message
    assert "started" in [r["state"] for r in records if r["kind"] == "tmux"]  # its tmux side
    assert "terminal: unconfirmable (tmux passthrough (pane shown))" in line, line
