"""The attention budget with real Pi under cuewrap (docs/attention.md): quiet hours covering now
(one crossing midnight), the urgent notify.command, the one reminder when quiet hours end,
``cuewrap mute`` / ``unmute`` from outside and ``/cue mute`` inside Pi, and no cue for a
resumed session's past.

Notifications are read where they would show: the OSC 777 sequences cuewrap writes to the
terminal (the rig's ``raw_output``) and the user's ``notify.command`` (a recorder), with the
bell on; title marks from the OSC 0/2 titles; the state from ``cuewrap ls --json``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import TITLE, PiSession, ready_away
from termscan import last_title, notifications
from test_notify_command import RECORDER, calls
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

WAITING, DONE = "[?]", "[✓]"


def hhmm(minute: int) -> str:
    minute %= 24 * 60
    return f"{minute // 60:02d}:{minute % 60:02d}"


def now_minute() -> tuple[int, int]:
    t = time.localtime()
    return t.tm_hour * 60 + t.tm_min, t.tm_sec


def env_with(tmp_path: Path, hours: str, **more: str) -> tuple[dict[str, str], Path]:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out = tmp_path / "calls.jsonl"
    env = {
        "CUEWRAP_NOTIFY_COMMAND": shlex.join([sys.executable, str(script), str(out)]),
        "CUEWRAP_NOTIFY_TERMINAL": "osc777",
        "CUEWRAP_NOTIFY_BELL": "true",
        "CUEWRAP_QUIET_HOURS": hours,
        **more,
    }
    return env, out


def cuewrap(env: dict[str, str], *args: str) -> tuple[int, str]:
    argv = [sys.executable, "-m", "cuewrap", *args]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, (done.stdout + done.stderr).strip()


def row(env: dict[str, str], pid: int) -> dict[str, Any]:
    code, out = cuewrap(env, "ls", "--json")
    assert code == 0, out
    [r] = [r for r in json.loads(out) if r["pid"] == pid]
    return r  # type: ignore[no-any-return]


def listed(env: dict[str, str], pid: int) -> None:
    """Wait until ``cuewrap ls`` lists the session (its cue side is built after Pi's first
    frame)."""

    def there() -> bool:
        code, out = cuewrap(env, "ls", "--json")
        return code == 0 and any(r["pid"] == pid for r in json.loads(out))

    wait_until(there, 10, "the session in cuewrap ls")


def popups(s: PiSession, out: Path) -> tuple[int, int, list[dict[str, Any]]]:
    """What popped up or sounded: OSC 777 notifications, terminal deliveries in the log (a
    BEL goes with each), notify.command runs."""
    terminal = [d for d in s.log_records("delivery") if d.get("channel") == "terminal"]
    return len(notifications(s.raw_output)), len(terminal), calls(out)


def wait_title(s: PiSession, title: str, timeout: float = 10.0) -> None:
    wait_until(lambda: last_title(s.raw_output) == title, timeout, f"title {title!r}",
               detail=s.dump)  # fmt: skip


def test_quiet_hours_across_midnight_hold_everything_but_marks_and_state(
    pi_session: Any, fakemodel: FakeModel, tmp_path: Path, pi_home: Any
) -> None:
    m, _ = now_minute()
    # covers every minute but the one two minutes from now: it crosses midnight
    hours = f"{hhmm(m + 3)}-{hhmm(m + 2)}"
    env, out = env_with(tmp_path, hours, CUEWRAP_QUIET_URGENT_AFTER="2")
    fakemodel.push(tool_call("test_confirm", {}), text("done"))
    s: PiSession = pi_session(env=env)
    s.wait_log(lambda r: r.get("kind") == "quiet" and r.get("state") == "on")
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    wait_title(s, f"{WAITING} {TITLE}")
    full_env = {**pi_home.env, **env}
    assert row(full_env, s.pid)["state"] == "needs-input"
    # past urgent_after: notify.command once, urgent, and nothing else
    [urgent] = wait_until(lambda: calls(out), 10, "the urgent notify.command", detail=s.dump)
    payload = json.loads(urgent["stdin"])
    assert payload["urgent"] is True and payload["event"] == "needs-input"
    assert urgent["env"]["CUEWRAP_CUE_URGENT"] == "true"
    absence_window(2.5, "a second urgent call")
    assert len(calls(out)) == 1
    s.send(b"\r")  # yes: the run goes on and finishes while away
    wait_title(s, f"{DONE} {TITLE}", 15)
    assert row(full_env, s.pid)["state"] == "finished"
    absence_window(1.0, "a late notification")
    shown, terminal, commands = popups(s, out)
    assert (shown, terminal, len(commands)) == (0, 0, 1)
    held = [(r["cue"], r["reason"]) for r in s.log_records("held")]
    assert held == [("needs-input", "quiet hours"), ("finished", "quiet hours")], held


def test_the_end_of_quiet_hours_reminds_once_of_the_open_wait(
    pi_session: Any, fakemodel: FakeModel, tmp_path: Path
) -> None:
    m, sec = now_minute()
    end = m + (1 if sec < 40 else 2)  # quiet ends at the next minute (or the one after)
    env, out = env_with(tmp_path, f"{hhmm(m - 5)}-{hhmm(end)}")
    fakemodel.push(tool_call("test_confirm", {}), text("done"))
    fakemodel.push(tool_call("test_confirm", {}), text("done again"))
    s: PiSession = pi_session(env=env)
    ready_away(s)
    # a wait answered during quiet hours: nothing to remind of later
    s.prompt("confirm please")
    s.wait_dialog()
    s.send(b"\r")
    s.wait_for_screen(r"^ done$", 15)
    s.wait_idle()
    ready_away(s)
    # a wait still open when quiet ends: one reminder
    s.prompt("confirm again")
    s.wait_dialog()
    wait_title(s, f"{WAITING} {TITLE}")
    assert popups(s, out) == (0, 0, [])
    left = (end * 60) - (now_minute()[0] * 60 + now_minute()[1])
    wait_until(lambda: notifications(s.raw_output), left + 15, "the reminder", detail=s.dump)
    absence_window(2.0, "a second reminder")
    shown, _terminal, commands = popups(s, out)
    assert shown == 1 and len(commands) == 1, (shown, commands)
    assert json.loads(commands[0]["stdin"])["event"] == "needs-input"
    [released] = s.log_records("released")
    assert released["cue"] == "needs-input" and released["reason"] == "quiet ended"
    assert [r["state"] for r in s.log_records("quiet")] == ["on", "off"]


def test_mute_from_outside_and_unmute(
    pi_session: Any, fakemodel: FakeModel, tmp_path: Path, pi_home: Any
) -> None:
    env, out = env_with(tmp_path, "")
    fakemodel.push(tool_call("bash", {"command": "sleep 0.5"}), text("one"))
    fakemodel.push(text("two"))
    events = tmp_path / "events.jsonl"
    s: PiSession = pi_session(env=env, cuewrap_args=("--events", str(events)))
    full_env = {**pi_home.env, **env}
    listed(full_env, s.pid)
    assert cuewrap(full_env, "mute", str(s.pid), "30m") == (0, "")
    r = row(full_env, s.pid)
    assert r["muted"] is True and r["muted_until"] == pytest.approx(time.time() + 1800, abs=30)
    ready_away(s)
    s.prompt("first")
    wait_title(s, f"{DONE} {TITLE}", 15)
    absence_window(1.0, "a notification while muted")
    assert popups(s, out) == (0, 0, [])
    assert [r["reason"] for r in s.log_records("held")] == ["muted"]
    assert cuewrap(full_env, "unmute", str(s.pid)) == (0, "")
    r = row(full_env, s.pid)
    assert (r["muted"], r["muted_until"]) == (False, None)
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    told = [(x["state"], x.get("muted")) for x in lines if "muted" in x]
    # the mute's own line, the run's lines while muted, the unmute's line
    assert told[0] == ("idle", True) and told[-1] == ("finished", False), told
    assert ("working", True) in told and ("finished", True) in told, told
    assert len(notifications(s.raw_output)) == 0  # unmuting replays nothing
    s.focus_in()
    ready_away(s)
    s.prompt("second")
    wait_until(lambda: notifications(s.raw_output), 15, "a notification again", detail=s.dump)
    # an unknown session: exit 1 and one line
    code, said = cuewrap(full_env, "mute", "999999999")
    assert code == 1 and said == "no such session"


def test_cue_mute_inside_pi(pi_session: Any, fakemodel: FakeModel, pi_home: Any) -> None:
    fakemodel.push(text("one"))
    s: PiSession = pi_session()
    s.submit("/cue mute 2h")
    s.wait_for_screen(r"muted until \d\d:\d\d")
    r = row(pi_home.env, s.pid)
    assert r["muted"] is True and r["muted_until"] == pytest.approx(time.time() + 7200, abs=30)
    ready_away(s)
    s.prompt("first")
    wait_title(s, f"{DONE} {TITLE}", 15)
    absence_window(1.0, "a notification while muted")
    assert notifications(s.raw_output) == []
    s.focus_in()
    s.submit("/cue unmute")
    s.wait_for_screen(r"reminders on again")
    assert row(pi_home.env, s.pid)["muted"] is False


def test_a_resumed_session_never_cues_for_its_past(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("test_confirm", {}), text("asked"))
    s: PiSession = pi_session()
    s.prompt("confirm please")  # focused: the wait and the run end with no cue
    s.wait_dialog()
    s.send(b"\r")
    s.wait_for_screen(r"^ asked$", 15)
    s.wait_idle()
    s.quit()
    assert s.wait_exit() == 0
    # the same session again, the user away from the start
    again: PiSession = pi_session("--continue", ready=False)
    again.focus_out()
    again.wait_ready()
    again.wait_for_screen(r"asked")  # its past is on the screen
    absence_window(3.0, "a cue for the past")
    assert notifications(again.raw_output) == []
    assert [r.get("cue") for r in again.log_records("cue")] == []
    # /reload while away: no cue either
    again.submit("/reload")
    again.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "SessionStart"
                   and r.get("reason") == "reload", 15)  # fmt: skip
    absence_window(2.0, "a cue after /reload")
    assert notifications(again.raw_output) == []
    assert again.log_records("cue") == []
