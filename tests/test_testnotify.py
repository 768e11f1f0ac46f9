"""``cuewrap config`` → ``t`` (the test notification) takes the path a reminder takes: the same
channel plan, the same channels, the same records as a real cue in the same environment
(docs/architecture.md#a-cue).

The real cue comes from the cue side a session builds (``cueside.build_controller``: the
real delivery, D-Bus worker and command runner) and the facts that make one in generic mode
(the user away, the child's bell). Both run against a real notification daemon (dunst on a
private bus) with a real ``notify.command`` (a recording script).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session, dunst_history
from shared import RecordingLog, calls, recording_command
from waiting import turning, wait_until

from cuewrap.config import Settings
from cuewrap.configure.testnotify import test_notify as send_test
from cuewrap.context import Context
from cuewrap.loop import Loop
from cuewrap.term.focus import FocusReport
from cuewrap.term.tracker import Bell
from cuewrap.wiring.cueside import Edge, Plan, build_controller
from cuewrap.wiring.mode import mode_of

pytestmark = pytest.mark.desktop

# the records that say what the channels did (with the terminal choice they came from)
KINDS = ("terminal_protocol", "delivery", "withdrawal", "desktop_worker")
XTERM = {"TERM": "xterm-256color", "XTERM_VERSION": "XTerm(390)"}  # shows no popup of its own
KITTY = {"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}  # shows its own: one popup, kitty's


def settings_with(command: list[str]) -> Settings:
    s = Settings()
    return s._replace(notify=s.notify._replace(command=command))


def what_channels_did(records: list[dict[str, Any]]) -> dict[object, list[dict[str, Any]]]:
    """Each channel's records in order (the channels finish in any order), without what
    differs between any two cues (the cue's id, the daemon's notification id)."""
    out: dict[object, list[dict[str, Any]]] = {}
    for r in records:
        if r["kind"] not in KINDS:
            continue
        fields = {k: v for k, v in r.items() if k != "cue"}
        if isinstance(fields.get("reason"), str):
            fields["reason"] = re.sub(r"notification id \d+", "notification id N", fields["reason"])
        out.setdefault(fields.get("channel", r["kind"]), []).append(fields)
    return out


def real_cue(
    env: dict[str, str], settings: Settings, presence: str = "focus"
) -> tuple[list[dict[str, Any]], bytes]:
    """A cue from the cue side a session builds: the user away (a focus report, or tmux's
    view of the pane), the child rings its bell."""
    loop, log, written = Loop(), RecordingLog(), bytearray()
    mode = mode_of(["/usr/bin/some-program"], no_bridge=False, preset=settings.generic.preset)
    plan = Plan(mode, size=(24, 80))
    c = build_controller(Context(loop, settings, log, env), plan, Edge(written.extend))

    def away() -> bool:
        return any(r["kind"] == "presence" and r.get("presence") == "away" for r in log.records)

    def done() -> bool:
        reaper = c._reaper
        return not (c.delivery.pending() or (c.tmux is not None and c.tmux.busy)
                    or (reaper is not None and len(reaper)))  # fmt: skip

    try:
        if presence == "focus":
            c.relay_event(FocusReport("out"))
        wait_until(away, 10, "the user away", sleep=turning(loop))
        c.relay_event(Bell())
        [cue] = [r for r in log.records if r["kind"] == "cue"]
        assert cue["cue"] == "needs-input", cue
        wait_until(done, 15, "the channels done", sleep=turning(loop))
    finally:
        c.close()
    return log.records, bytes(written)


def run_test_notification(
    env: dict[str, str], settings: Settings
) -> tuple[list[dict[str, Any]], bytes, str]:
    log, written = RecordingLog(), bytearray()
    line = send_test(settings, env, written.extend, log=log)
    return log.records, bytes(written), line


def osc(data: bytes) -> list[bytes]:
    """The notification sequences (OSC 9 / 99 / 777) in ``data``."""
    return re.findall(rb"\x1b\](?:9|99|777);[^\x07\x1b]*", data)


@pytest.mark.parametrize(
    ("terminal", "popup", "terminal_osc"),
    [(XTERM, "desktop", False), (KITTY, "terminal", True)],
    ids=["xterm: cuewrap's popup", "kitty: the terminal's own popup only"],
)
def test_the_test_notification_takes_the_path_of_a_real_cue(
    dunst: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    terminal: dict[str, str],
    popup: str,
    terminal_osc: bool,
) -> None:
    monkeypatch.chdir(tmp_path)  # the session label, the same for both
    command, out = recording_command(tmp_path)
    settings = settings_with(command)
    env = {**dunst.env, **terminal}

    cue_records, cue_bytes = real_cue(env, settings)
    cue_shown = dunst_history(dunst.env)  # closes them all, keeps the history
    test_records, test_bytes, line = run_test_notification(env, settings)
    test_shown = [e for e in dunst_history(dunst.env) if e not in cue_shown]

    # the same channels did the same things, with the same reasons
    assert what_channels_did(test_records) == what_channels_did(cue_records)
    got = what_channels_did(test_records)
    assert {"terminal", "desktop", "command"} <= set(got), got
    # one popup per cue, from the same side, both times
    desktop = [r["state"] for r in got["desktop"]]
    if popup == "desktop":
        assert desktop == ["requested", "delivered"], got
        assert len(cue_shown) == 1 and len(test_shown) == 1, (cue_shown, test_shown)
        assert test_shown[0]["body"] == "cuewrap config: test notification"
    else:
        assert desktop == ["off"], got
        assert cue_shown == [] and test_shown == []
    # the terminal's notification: written both times, or neither time
    assert len(osc(test_bytes)) == len(osc(cue_bytes)), (cue_bytes, test_bytes)
    assert bool(osc(cue_bytes)) == terminal_osc, cue_bytes
    # notify.command ran once each time, through the same runner (the same fields)
    ran = calls(out)
    assert len(ran) == 2, ran
    keys = [set(json.loads(r["stdin"])) for r in ran]
    assert keys[0] == keys[1]
    assert "desktop: " in line and "command: requested" in line and "terminal: " in line, line
