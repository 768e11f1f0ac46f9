"""Desktop notifications that are withdrawn, replaced and clicked (docs/design.md#follow-ups),
against a real notification server (dunst) on a private D-Bus, and a minimal server without
actions."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session
from launch import default_signals
from waiting import turning, wait_until

from cuewrap.deliver.dbus import MAX_ACTIONS, DBusNotifier
from cuewrap.engine.effects import Action
from cuewrap.loop import Loop

pytestmark = pytest.mark.desktop


class Records:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, **fields: Any) -> None:
        self.seen.append((kind, fields))

    def of(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        return [
            f
            for k, f in self.seen
            if k == kind and all(f.get(key) == value for key, value in match.items())
        ]


def dunstctl(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        ["dunstctl", *args], env=env, check=True, capture_output=True, text=True, timeout=5
    ).stdout


def displayed(env: dict[str, str]) -> int:
    return int(dunstctl(env, "count", "displayed").strip())


def history(env: dict[str, str]) -> list[dict[str, Any]]:
    entries = json.loads(dunstctl(env, "history"))["data"][0]
    return [{k: e[k]["data"] for k in ("id", "summary", "body")} for e in entries]


def shown(dunst: Session, cue: int, body: str, what: str) -> tuple[Loop, Records, DBusNotifier]:
    """A notifier on dunst's bus that sent ``cue`` (Pi's, saying ``body``), delivered."""
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=dunst.env)
    n.send(cue, "Pi — work", body, lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=cue, state="delivered"), what)
    return loop, records, n


def delivered_id(records: Records, cue: int) -> int:
    [rec] = records.of("delivery", cue=cue, state="delivered")
    return int(rec["reason"].removeprefix("notification id "))


def run_until(loop: Loop, pred: Any, what: str, timeout: float = 10) -> Any:
    return wait_until(pred, timeout, what, sleep=turning(loop))


def test_withdraw_closes_the_notification_with_its_server_id(dunst: Session) -> None:
    loop, records, n = shown(dunst, 1, "Waiting for you", "delivered")
    sid = delivered_id(records, 1)
    assert displayed(dunst.env) == 1
    n.withdraw(1, "user returned")
    run_until(loop, lambda: records.of("withdrawal", cue=1, state="withdrawn"), "withdrawn")
    assert displayed(dunst.env) == 0
    assert [h["id"] for h in history(dunst.env)] == [sid]  # closed, by its id
    n.withdraw(1, "again")  # nothing is withdrawn twice
    assert len(records.of("withdrawal", cue=1)) == 2  # requested, withdrawn
    n.close()


def test_a_later_cue_replaces_the_earlier(dunst: Session) -> None:
    loop, records, n = shown(dunst, 1, "Waiting for you", "first")
    n.send(2, "Pi — work", "Finished", lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=2, state="delivered"), "second")
    assert delivered_id(records, 1) == delivered_id(records, 2)
    assert records.of("withdrawal", cue=1, state="replaced") == [
        {"cue": 1, "channel": "desktop", "state": "replaced", "reason": "by cue 2"}
    ]
    assert displayed(dunst.env) == 1
    n.withdraw(1, "stale")  # replaced: nothing to close (it would close cue 2's)
    assert displayed(dunst.env) == 1
    dunstctl(dunst.env, "close-all")
    assert [(h["summary"], h["body"]) for h in history(dunst.env)] == [("Pi — work", "Finished")]
    n.close()


def test_stale_cue_replaced_in_the_same_step_is_not_closed(dunst: Session) -> None:
    """The engine gives the new cue, then withdraws the old (e.g. a dialog answered and the
    run settled while away): the new one takes the old one's place and stays shown."""
    loop, records, n = shown(dunst, 1, "Waiting for you", "first")
    n.send(2, "Pi — work", "Finished", lambda: True)
    n.withdraw(1, "wait ended")
    run_until(loop, lambda: records.of("delivery", cue=2, state="delivered"), "second")
    assert records.of("withdrawal", cue=1) == [
        {"cue": 1, "channel": "desktop", "state": "replaced", "reason": "by cue 2"}
    ]
    assert displayed(dunst.env) == 1
    dunstctl(dunst.env, "close-all")
    assert [h["body"] for h in history(dunst.env)] == ["Finished"]
    n.close()


def test_never_withdraws_what_was_not_sent(dunst: Session) -> None:
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=dunst.env)
    n.send(3, "Pi", "x", lambda: False)  # ineligible: not sent
    n.withdraw(3, "stale")
    n.withdraw(4, "stale")  # never even asked for
    assert records.of("withdrawal") == []
    assert records.of("delivery", cue=3) == [
        {
            "cue": 3,
            "channel": "desktop",
            "state": "dropped-ineligible",
            "reason": "no longer eligible before the call",
        }
    ]
    n.close()


def test_a_click_is_logged_as_activated(dunst: Session) -> None:
    loop, records, n = shown(dunst, 5, "Finished", "delivered")
    assert records.of("desktop_worker", state="ready") == [{"state": "ready", "actions": True}]
    dunstctl(dunst.env, "action", "0")  # dunst invokes the default action of the top one
    [act] = run_until(loop, lambda: records.of("activated", cue=5), "activated")
    assert act["action"] == "default"
    assert act["lead_back"].startswith("nothing to select")  # no tmux, no WINDOWID here
    n.close()


def test_escalation_raises_it_to_critical_in_place(dunst: Session) -> None:
    loop, records, n = shown(dunst, 6, "Waiting for you", "delivered")
    n.escalate(6, lambda: True)
    run_until(loop, lambda: len(records.of("delivery", cue=6, state="delivered")) == 2, "again")
    assert records.of("delivery", cue=6, state="requested")[-1]["reason"] == "critical"
    ids = {int(r["reason"].split()[-1]) for r in records.of("delivery", cue=6, state="delivered")}
    assert len(ids) == 1 and displayed(dunst.env) == 1
    n.close()


# -- a server without actions ---------------------------------------------------------------
FAKE_SERVER = textwrap.dedent(
    """
    import json, sys
    from jeepney import new_method_return, MessageType, HeaderFields
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection
    conn = open_dbus_connection(sys.argv[1])
    caps = json.loads(sys.argv[3]) if len(sys.argv) > 3 else ["body"]
    conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.Notifications"))
    print("ready", flush=True)
    next_id = 40
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        if member == "GetCapabilities":
            conn.send(new_method_return(msg, "as", (caps,)))
        elif member == "Notify":
            with open(sys.argv[2], "a") as fh:
                fh.write(json.dumps({"actions": list(msg.body[5])}) + "\\n")
            next_id += 1
            conn.send(new_method_return(msg, "u", (msg.body[1] or next_id,)))
        elif member == "CloseNotification":
            with open(sys.argv[2], "a") as fh:
                fh.write(json.dumps({"close": msg.body[0]}) + "\\n")
            conn.send(new_method_return(msg))
    """
)


def fake_server(bus: Session, tmp_path: Path, caps: list[str]) -> Iterator[Path]:
    calls = tmp_path / "server-calls.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE_SERVER, bus.address, str(calls), json.dumps(caps)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        yield calls
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def plain_server(bus: Session, tmp_path: Path) -> Iterator[Path]:
    yield from fake_server(bus, tmp_path, ["body"])


@pytest.fixture
def actions_server(bus: Session, tmp_path: Path) -> Iterator[Path]:
    yield from fake_server(bus, tmp_path, ["body", "actions"])


def test_a_notifications_buttons_follow_the_default_action_bounded(
    bus: Session, actions_server: Path
) -> None:
    """A notification's actions (``Notify.actions``) become buttons where the server shows
    actions: after the click's default action, one printable line each, never a second
    "default", at most MAX_ACTIONS."""
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=bus.env)
    many = tuple(Action(f"k{i}", f"Option {i}") for i in range(20))
    n.send(1, "Pi", "Needs your input", lambda: True,
           (Action("yes", "Yes\x1b[31m"), Action("default", "steal the click"), *many))  # fmt: skip
    run_until(loop, lambda: records.of("delivery", cue=1, state="delivered"), "delivered")
    n.send(2, "Pi", "Finished", lambda: True)  # none: the click's action only
    run_until(loop, lambda: records.of("delivery", cue=2, state="delivered"), "delivered")
    first, second = [
        json.loads(line)["actions"] for line in actions_server.read_text().splitlines()
    ]
    assert first[:4] == ["default", "Show Pi", "yes", "Yes [31m"]
    assert "steal the click" not in first and len(first) == 2 + 2 * MAX_ACTIONS - 2, first
    assert second == ["default", "Show Pi"]
    n.close()


def test_a_server_without_actions_still_works(bus: Session, plain_server: Path) -> None:
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=bus.env)
    n.send(1, "Pi", "Finished", lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=1, state="delivered"), "delivered")
    assert records.of("desktop_worker", state="ready") == [{"state": "ready", "actions": False}]
    n.withdraw(1, "user returned")
    run_until(loop, lambda: records.of("withdrawal", cue=1, state="withdrawn"), "withdrawn")
    got = [json.loads(line) for line in plain_server.read_text().splitlines()]
    assert got == [{"actions": []}, {"close": 41}]
    n.close()


def test_no_server_fails_cleanly(bus: Session) -> None:
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=bus.env)
    n.send(1, "Pi", "Finished", lambda: True)
    [rec] = run_until(loop, lambda: records.of("delivery", cue=1, state="failed"), "failed")
    assert "ServiceUnknown" in rec["reason"] or "did not answer" in rec["reason"], rec
    n.withdraw(1, "stale")
    assert records.of("withdrawal") == []
    n.close()


# -- real Pi under cuewrap ------------------------------------------------------------------
def dialog_while_away(pi_session: Any, fakemodel: Any, dunst: Session) -> Any:
    """Real Pi under cuewrap on dunst's bus, the user away, a confirm dialog open."""
    from fakemodel import text, tool_call
    from pirig import ready_away

    fakemodel.push(tool_call("test_confirm", {}), text("done"))
    s = pi_session(env=dunst.desktop())
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    return s


def desktop_deliveries(s: Any) -> list[dict[str, Any]]:
    return [
        r
        for r in s.log_records("delivery")
        if r.get("channel") == "desktop" and r.get("state") == "delivered"
    ]


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_pi_cue_on_the_desktop_is_closed_on_return(
    pi_session: Any, fakemodel: Any, dunst: Session
) -> None:
    s = dialog_while_away(pi_session, fakemodel, dunst)
    delivered = functools.partial(desktop_deliveries, s)

    [first] = wait_until(delivered, 15, "the [?] notification on the desktop")
    sid = int(first["reason"].split()[-1])
    assert displayed(dunst.env) == 1
    s.focus_in()  # return: the [?] notification goes
    wait_until(lambda: displayed(dunst.env) == 0, 10, "the notification closed")
    [w] = wait_until(
        lambda: [r for r in s.log_records("withdrawal") if r.get("state") == "withdrawn"],
        5,
        "the withdrawal record",
    )
    assert (w["cue"], w["channel"]) == (first["cue"], "desktop")
    assert [h["id"] for h in history(dunst.env)] == [sid]
    s.enter()
    s.wait_for_screen(r"^ done$")
    s.quit()
    assert s.wait_exit() == 0


def test_a_button_click_goes_to_on_action_with_its_cue_and_does_not_lead_back(
    dunst_menu: Session,
) -> None:
    """A notification's own button (its ``actions``; the answer buttons of docs/answering.md)
    comes back as ``on_action(cue, key)`` with no lead back; the notification itself (its
    default action) and a dismissal never reach ``on_action``."""
    loop, records = Loop(), Records()
    n = DBusNotifier(loop, records, env=dunst_menu.env)
    clicks: list[tuple[int, str]] = []
    n.on_action = lambda cue, key: clicks.append((cue, key))
    n.send(3, "Pi — work", "Needs your input", lambda: True,
           (Action("answer-1", "Yes"), Action("answer-2", "No")))  # fmt: skip
    run_until(loop, lambda: records.of("delivery", cue=3, state="delivered"), "delivered")
    sid = delivered_id(records, 3)
    (dunst_menu.tmp / "dunst-pick").write_text(f"[{sid},answer-2]\n")
    dunstctl(dunst_menu.env, "context")
    [act] = run_until(loop, lambda: records.of("activated", cue=3), "activated")
    assert act == {"cue": 3, "channel": "desktop", "action": "answer-2", "lead_back": ""}
    assert clicks == [(3, "answer-2")]
    n.send(4, "Pi — work", "Needs your input", lambda: True, (Action("answer-1", "Yes"),))
    run_until(loop, lambda: records.of("delivery", cue=4, state="delivered"), "delivered")
    dunstctl(dunst_menu.env, "action", "0")  # the notification itself: leads back
    [act] = run_until(loop, lambda: records.of("activated", cue=4), "activated")
    assert act["action"] == "default" and act["lead_back"].startswith("nothing to select")
    n.send(5, "Pi — work", "Needs your input", lambda: True, (Action("answer-1", "Yes"),))
    run_until(loop, lambda: records.of("delivery", cue=5, state="delivered"), "delivered")
    dunstctl(dunst_menu.env, "close")  # dismissed: never an action
    run_until(loop, lambda: records.of("desktop_closed", cue=5), "closed")
    assert clicks == [(3, "answer-2")]
    n.close()


def test_a_click_selects_pis_tmux_window_and_pane(dunst: Session, tmp_path: Path) -> None:
    """The lead back inside tmux: Pi's pane (window 0) while the user looks at window 1."""
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/install-test-deps)")
    base = ["tmux", "-L", f"cuewrap-click-{tmp_path.name[-8:]}", "-f", "/dev/null"]
    env = dict(dunst.env)

    def tmux(*args: str) -> str:
        return subprocess.run(
            [*base, *args], env=env, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    tmux("new-session", "-d", "-s", "work", "sleep", "100000")
    try:
        tmux("new-window", "-t", "work:1", "sleep", "100000")
        pane = tmux("display", "-p", "-t", "work:0", "#{pane_id}")
        socket = tmux("display", "-p", "#{socket_path}")
        pid = tmux("display", "-p", "#{pid}")
        assert tmux("display", "-p", "-t", "work", "#{window_index}") == "1"
        pi_env = {**env, "TMUX": f"{socket},{pid},0", "TMUX_PANE": pane}
        loop, records = Loop(), Records()
        n = DBusNotifier(loop, records, env=pi_env)
        n.send(7, "Pi — work", "Waiting for you", lambda: True)
        run_until(loop, lambda: records.of("delivery", cue=7, state="delivered"), "delivered")
        dunstctl(dunst.env, "action", "0")
        [act] = run_until(loop, lambda: records.of("activated", cue=7), "activated")
        assert "tmux select-window ok" in act["lead_back"], act
        assert "tmux select-pane ok" in act["lead_back"], act
        assert tmux("display", "-p", "-t", "work", "#{window_index}") == "0"
        n.close()
    finally:
        subprocess.run([*base, "kill-server"], env=env, capture_output=True, timeout=10)


def test_generic_mode_names_its_program_not_pi(dunst: Session, tmp_path: Path) -> None:
    """cuewrap -- COMMAND: the desktop notification's application name is the program's
    (here the aider preset's), never "Pi" (docs/design.md#generic-mode)."""
    import pexpect

    child = str(Path(__file__).parent / "children" / "signals.py")
    log = tmp_path / "log.jsonl"
    env = dict(
        dunst.env,
        TERM="xterm-256color",
        CUEWRAP_NOTIFY_DESKTOP="on",
        CUEWRAP_NOTIFY_TERMINAL="off",
        CUEWRAP_GENERIC_PRESET="aider",
        CUEWRAP_PRESENCE_IDLE_AFTER="600",
    )
    argv = ["-m", "cuewrap", "--log", str(log), "--", sys.executable, child, "ready", "wait"]
    p = pexpect.spawn(sys.executable, [*argv, "bell", "hold"], env=env, timeout=10,
                      preexec_fn=default_signals)  # fmt: skip
    try:
        p.expect("READY")
        p.send(b"\x1b[O")  # away
        wait_until(lambda: '"state": "away"' in log.read_text(), 5, "cuewrap to see away")
        p.send(b"g")

        def appnames() -> list[str]:
            entries = json.loads(dunstctl(dunst.env, "history"))["data"][0]
            return [e["appname"]["data"] for e in entries]

        def shown() -> list[str]:
            dunstctl(dunst.env, "close-all")
            return appnames()

        assert wait_until(shown, 10, "the desktop notification") == ["aider"]
    finally:
        p.terminate(force=True)


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_pi_killed_while_waiting_leaves_only_the_exited_cue(
    pi_session: Any, fakemodel: Any, dunst: Session
) -> None:
    """A dialog waits while away ([?] on the desktop) and Pi dies: the [?] notification goes
    (its wait ended with Pi's bridge), the exited one stays — one notification visible."""
    import os
    import signal

    from pirig import pi_child

    s = dialog_while_away(pi_session, fakemodel, dunst)
    delivered = functools.partial(desktop_deliveries, s)

    wait_until(delivered, 15, "the [?] notification on the desktop")
    os.kill(pi_child(s.pid), signal.SIGKILL)
    s.wait_exit(timeout=15)
    first, second = delivered()
    assert (first["cue"], second["cue"]) == (1, 2)
    wait_until(lambda: displayed(dunst.env) == 1, 5, "one notification shown")
    first_id = int(first["reason"].split()[-1])
    closed = history(dunst.env)  # what is no longer displayed
    assert [h["id"] for h in closed] == [first_id], closed
    dunstctl(dunst.env, "close-all")
    assert "Was killed (signal 9)" in [h["body"] for h in history(dunst.env)]


# -- one worker for the notifications and the do-not-disturb watch ---------------------------
class Log:
    """What DesktopWatch writes to the decision log."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, kind: str, **fields: Any) -> None:
        self.records.append({"kind": kind, **fields})


def desktop_workers() -> dict[int, list[str]]:
    """This process's live children that run a worker of cuewrap.deliver: pid -> argv."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().decode(errors="replace").split("\0")
        except (OSError, IndexError):
            continue
        ours = any("cuewrap.deliver." in a for a in argv)
        if ours and int(stat[1]) == os.getpid() and stat[0] != "Z":
            found[int(pid)] = argv
    return found


def test_the_watch_and_the_notifications_share_one_lean_worker(dunst: Session) -> None:
    """The do-not-disturb watch and the notifications of one session are one process
    (``python -S``: the footprint, docs/benchmarks.md); the watch's reads neither hold up a
    notification nor swallow a click; a pause of dunst is read through it; the last user out
    ends it."""
    from cuewrap.deliver.dnd import DesktopWatch

    loop, records, log, changes = Loop(), Records(), Log(), []
    watch = DesktopWatch(loop, dunst.env, log, changes.append)  # type: ignore[arg-type]
    run_until(loop, lambda: [r for r in log.records if r.get("readable")], "the first reading")
    n = DBusNotifier(loop, records, env=dunst.env)
    n.send(1, "Pi — work", "Finished", lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=1, state="delivered"), "delivered")
    [worker] = desktop_workers().values()
    assert worker[1:3] == ["-S", "-P"] and "cuewrap.deliver.dbus_worker" in worker[4], worker
    dunstctl(dunst.env, "action", "0")
    run_until(loop, lambda: records.of("activated", cue=1), "the click")
    dunstctl(dunst.env, "set-paused", "true")
    run_until(loop, lambda: changes == [True], "do-not-disturb read")
    dunstctl(dunst.env, "set-paused", "false")
    run_until(loop, lambda: changes == [True, False], "do-not-disturb over")
    assert "dunst paused" in log.records[-1]["readable"]
    n.close()
    assert len(desktop_workers()) == 1  # the watch still uses it
    watch.close()
    assert desktop_workers() == {}


def test_a_worker_that_dies_fails_both_users_and_the_next_notification_starts_another(
    dunst: Session,
) -> None:
    """Failure isolation of the shared worker: killed, it fails what waits on it, the watch
    says it ended (the desktop counts as not quiet), and the next notification starts a new
    worker without taking the loop down."""
    from cuewrap.deliver.dnd import DesktopWatch

    loop, records, log = Loop(), Records(), Log()
    watch = DesktopWatch(loop, dunst.env, log, lambda quiet: None)  # type: ignore[arg-type]
    n = DBusNotifier(loop, records, env=dunst.env)
    n.send(1, "Pi — work", "Finished", lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=1, state="delivered"), "delivered")
    [first] = desktop_workers()
    os.kill(first, signal.SIGKILL)
    run_until(loop, lambda: records.of("desktop_worker", state="failed"), "the failure")
    run_until(loop, lambda: [r for r in log.records if r.get("state") == "ended"], "the end")
    n.send(2, "Pi — work", "Waiting for you", lambda: True)
    run_until(loop, lambda: records.of("delivery", cue=2, state="delivered"), "a new worker")
    [second] = desktop_workers()
    assert second != first
    n.close()
    watch.close()
    assert desktop_workers() == {}


def test_a_server_that_never_answers_blocks_neither_the_loop_nor_the_watch(bus: Session) -> None:
    """A service owns the name and never replies: the loop goes on turning (it only writes to
    the shared worker's pipe and reads it when told), the notification fails after the reply
    timeout, and the watch still gives its reading (nothing readable: not quiet)."""
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    from cuewrap.deliver.dnd import DesktopWatch

    conn = open_dbus_connection(bus.address)
    conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.Notifications"))
    try:
        loop, records, log, turned = Loop(), Records(), Log(), []
        watch = DesktopWatch(loop, bus.env, log, lambda quiet: None)  # type: ignore[arg-type]
        n = DBusNotifier(loop, records, env=bus.env)
        n.send(1, "Pi", "Finished", lambda: True)
        loop.call_later(0.1, lambda: turned.append(len(records.of("delivery", state="failed"))))
        [failed] = run_until(loop, lambda: records.of("delivery", cue=1, state="failed"), "fail")
        assert "did not answer" in failed["reason"], failed
        assert turned == [0]  # the loop turned while the call hung
        run_until(loop, lambda: [r for r in log.records if "quiet" in r], "the reading")
        assert [r for r in log.records if "quiet" in r] == [
            {"kind": "desktop_dnd", "quiet": False, "via": [], "readable": []}
        ]
        n.close()
        watch.close()
    finally:
        conn.close()
