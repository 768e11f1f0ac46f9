"""The desktop's do-not-disturb counts as quiet hours (``quiet.follow_desktop``,
docs/attention.md): real Pi, real dunst on a private bus, paused and resumed with
``dunstctl set-paused`` as a user does. dunst keeps what it receives while paused and shows it
when resumed, so "nothing was sent" is read from dunst itself (``count waiting``, history)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session, _dunst, dunst_history
from fakemodel import FakeModel, text, tool_call
from pirig import TITLE, PiSession, ready_away
from termscan import last_title
from waiting import absence_window, wait_until

pytestmark = pytest.mark.desktop


def desktop_env(d: Session, follow: bool = True) -> dict[str, str]:
    env = {k: d.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")}
    env["CUEWRAP_QUIET_FOLLOW_DESKTOP"] = "true" if follow else "false"
    return env


def dunstctl(d: Session, *args: str) -> str:
    done = subprocess.run(["dunstctl", *args], env=d.env, capture_output=True, timeout=10)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


def dnd(s: PiSession, quiet: bool) -> None:
    s.wait_log(lambda r: r.get("kind") == "desktop_dnd" and r.get("quiet") is quiet, 10)


def desktop_deliveries(s: PiSession) -> list[dict[str, Any]]:
    return [d for d in s.log_records("delivery") if d.get("channel") == "desktop"]


def test_dunst_paused_holds_reminders_and_resumed_gives_them_back(
    pi_session: Any, fakemodel: FakeModel, dunst: Session
) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 0.5"}), text("one"))
    fakemodel.push(text("two"))
    s: PiSession = pi_session(env=desktop_env(dunst))
    dnd(s, False)
    [first] = [r for r in s.log_records("desktop_dnd") if "quiet" in r]
    assert "dunst paused" in first["readable"]
    dunstctl(dunst, "set-paused", "true")
    dnd(s, True)
    ready_away(s)
    s.prompt("first")
    wait_until(lambda: last_title(s.raw_output) == f"[✓] {TITLE}", 15, "the mark",
               detail=s.dump)  # fmt: skip
    absence_window(1.0, "a notification during do-not-disturb")
    assert desktop_deliveries(s) == []
    assert dunstctl(dunst, "count", "waiting") == "0"  # nothing queued behind the pause
    assert [(r["cue"], r["reason"]) for r in s.log_records("held")] == [
        ("finished", "desktop do-not-disturb")
    ]
    # do-not-disturb off, the user still away: one reminder of the outcome not yet seen
    dunstctl(dunst, "set-paused", "false")
    dnd(s, False)
    wait_until(lambda: [d for d in desktop_deliveries(s) if d["state"] == "delivered"], 10,
               "the reminder", detail=s.dump)  # fmt: skip
    # and reminders as usual again
    s.focus_in()
    ready_away(s)
    s.prompt("second")
    wait_until(lambda: len([d for d in desktop_deliveries(s) if d["state"] == "delivered"]) == 2,
               15, "the next notification", detail=s.dump)  # fmt: skip
    history = dunst_history(dunst.env)
    assert len(history) == 2, history


def test_not_followed_when_switched_off(
    pi_session: Any, fakemodel: FakeModel, dunst: Session
) -> None:
    fakemodel.push(text("one"))
    dunstctl(dunst, "set-paused", "true")
    s: PiSession = pi_session(env=desktop_env(dunst, follow=False))
    ready_away(s)
    s.prompt("first")
    wait_until(lambda: [d for d in desktop_deliveries(s) if d["state"] == "delivered"], 15,
               "the notification", detail=s.dump)  # fmt: skip
    assert s.log_records("held") == []
    assert [r for r in s.log_records("desktop_dnd")] == []


def test_doctor_says_what_it_reads(dunst: Session) -> None:
    import sys

    def doctor() -> str:
        env = dict(dunst.env, TERM="xterm-256color", CUEWRAP_QUIET_HOURS="22:00-07:00")
        done = subprocess.run([sys.executable, "-m", "cuewrap", "doctor"], env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = doctor()
    assert "quiet hours: 22:00-07:00:" in out
    [line] = [x for x in out.splitlines() if "desktop do-not-disturb" in x]
    assert (
        line.strip().startswith("desktop do-not-disturb: off; read from") and "dunst paused" in line
    )
    dunstctl(dunst, "set-paused", "true")
    [line] = [x for x in doctor().splitlines() if "desktop do-not-disturb" in x]
    assert "desktop do-not-disturb: on (dunst paused)" in line


@pytest.fixture
def dunst_unstacked(bus: Session) -> Iterator[Session]:
    """dunst that shows identical notifications each on its own (``stack_duplicates`` off;
    on, it would fold four identical popups into one and hide what is counted here)."""
    conf = Path(bus.env["XDG_CONFIG_HOME"]) / "dunst" / "dunstrc"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("[global]\n    stack_duplicates = false\n")
    with _dunst(bus) as session:
        yield session


def server_ids(sessions: list[PiSession]) -> set[str]:
    """The notification ids the server gave, over every session (one per popup seen)."""
    return {
        d["reason"].split()[-1]
        for s in sessions
        for d in desktop_deliveries(s)
        if d["state"] == "delivered"
    }


def test_four_sessions_settling_together_give_one_popup_naming_them_all(
    pi_session: Any, fakemodel: FakeModel, dunst_unstacked: Session
) -> None:
    """Measured: four Pi sessions away, their runs settling within 2 s of each other -> the
    popups dunst received (before this, one each: four)."""
    dunst = dunst_unstacked
    sessions: list[PiSession] = []
    for _ in range(4):
        fakemodel.push(text("done"))
        sessions.append(pi_session(env=desktop_env(dunst)))
    for s in sessions:
        ready_away(s)
    start = time.monotonic()
    for s in sessions:
        s.prompt("go")
    for s in sessions:
        s.wait_log(lambda r: r.get("kind") == "cue" and r.get("cue") == "finished", 15)
    settled = [
        next(r for r in s.log_records("fact") if r.get("type") == "AgentSettled") for s in sessions
    ]
    assert settled  # each run settled; within a couple of seconds of the first prompt
    spread = time.monotonic() - start
    absence_window(1.5, "a late popup")
    history = dunst_history(dunst.env)
    ids = server_ids(sessions)
    print(f"4 sessions settled within {spread:.1f} s: {len(history)} popup(s) in dunst, "
          f"{len(ids)} notification id(s)")  # fmt: skip
    assert len(history) == 1 and len(ids) == 1, (history, ids)
    [popup] = history
    assert popup["summary"] == "Pi — 4 sessions"
    assert sorted(popup["body"].splitlines()) == sorted(
        f"work ({s.pid}): Finished" for s in sessions
    ), popup


def test_the_shared_popup_leads_to_the_wait_and_outlives_a_member_who_came_back(
    pi_session: Any, fakemodel: FakeModel, dunst_unstacked: Session
) -> None:
    dunst = dunst_unstacked
    fakemodel.push(text("done"))
    a: PiSession = pi_session(env=desktop_env(dunst))
    b: PiSession = pi_session(env=desktop_env(dunst))
    ready_away(a)
    ready_away(b)
    a.prompt("go")
    a.wait_log(lambda r: r.get("kind") == "delivery" and r.get("state") == "delivered", 15)
    fakemodel.push(tool_call("test_confirm", {}), text("after"))
    b.prompt("confirm please")
    b.wait_dialog()
    # b needs input: b shows the popup naming both (the click goes to the one that shows it)
    b.wait_log(lambda r: r.get("kind") == "delivery" and r.get("state") == "delivered", 15)
    assert len(server_ids([a, b])) == 1
    [joined] = b.log_records("popup_batch")
    assert joined["lead"] == b.pid
    displayed = json.loads(dunstctl(dunst, "history") or "{}")  # nothing closed yet
    assert displayed["data"][0] == []
    # the user looks at a: a's reminder goes, the popup stays for b, without a
    a.focus_in()
    a.wait_log(lambda r: r.get("kind") == "withdrawal" and r.get("state") == "left", 10)
    wait_until(lambda: len([d for d in desktop_deliveries(b) if d["state"] == "delivered"]) == 2,
               10, "b shows the rest", detail=b.dump)  # fmt: skip
    assert dunstctl(dunst, "count", "displayed") == "1"
    dunstctl(dunst, "action", "0")  # a click on it
    b.wait_log(lambda r: r.get("kind") == "activated", 10)
    assert a.log_records("activated") == []
    [popup] = dunst_history(dunst.env)
    assert (popup["summary"], popup["body"]) == ("Pi — work", "Needs your input"), popup
