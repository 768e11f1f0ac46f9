"""Cues inside a real tmux (docs/design.md#real-environments): real Pi under ``python -m cuewrap``
in window 0 of a private tmux server (``tmux -L … -f /dev/null``), a user's client attached through
a pexpect PTY that plays the outer terminal (tests/tmuxrig.py).

What the user sees is read back from tmux itself: ``show-messages`` (status-line messages per
client), ``list-windows`` (the bell flag), the client's screen (pyte over the client's PTY)
against ``capture-pane``, and the outer terminal's raw bytes (the OSC notification that tmux
passes through).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from fakemodel import FakeModel, text, tool_call
from procstat import cpu_ticks, wakeups
from tmuxrig import SESSION, Scene
from waiting import absence_window

from cuewrap.tmux import side

pytestmark = pytest.mark.tmux

_OSC777 = re.compile(rb"\x1b\]777;notify;([^;\x07\x1b]*);([^\x07\x1b]*)(?:\x07|\x1b\\)")


def osc_notifications(raw: bytes) -> list[tuple[str, str]]:
    return [(m.group(1).decode(), m.group(2).decode()) for m in _OSC777.finditer(raw)]


def run_steps(fakemodel: FakeModel, seconds: int, answer: str) -> None:
    fakemodel.push(tool_call("bash", {"command": f"sleep {seconds}"}), text(answer))


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_default_options_window_switch(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """tmux's defaults (no focus-events, no passthrough): a run that settles while the user is
    in window 1 gives a status-line message on their client naming the session, and window 0's
    bell flag; a run that settles with window 0 active gives no cue."""
    sc = tmux_scene()
    c = sc.client
    # window 0 active: no cue
    run_steps(fakemodel, 1, "first done")
    c.prompt("first task")
    c.wait_for_screen(r"^ first done$")
    sc.settled(1)
    absence_window(0.5, "a cue for a run that settled in front of the user")
    assert sc.cues() == [], sc.why()
    assert sc.rig.cue_messages() == []
    assert not sc.rig.window_flags()["0"][0]
    # window 1 during a run: away through tmux, then the cue in tmux at settle
    run_steps(fakemodel, 2, "second done")
    c.prompt("second task")
    c.wait_working()
    t0 = time.time()
    sc.select(1)
    away = sc.presence("away")
    assert away["via"] == "tmux"
    latency = away["t"] - t0
    sc.settled(2)
    [cue] = sc.wait(lambda: sc.cues() or None, "a cue")
    assert cue["cue"] == "finished"
    [client_name] = sc.rig.user_clients()
    msg = sc.wait(lambda: sc.rig.cue_messages(), "a tmux message")
    assert len(msg) == 1, msg
    assert f"{client_name} message: Pi — work: Finished (session {SESSION}, window 0" in msg[0]
    _, shown = sc.wait(lambda: sc.rig.window_flags()["0"][0] and sc.rig.window_flags()["0"], "flag")
    assert "!" in shown
    # the message was drawn on the client's status line (it stands a few seconds, or until a
    # key); then the window list shows window 0 flagged ("0:name!")
    c.wait_for_output(re.escape("Pi — work: Finished (session work".encode()))
    c.send("x")  # to window 1's sleep, which ignores it
    sc.wait(lambda: re.search(r"\b0:\S+!", c.screen_lines[-1]), "flag in the status line")
    # no terminal notification: passthrough is off and the pane is hidden
    assert osc_notifications(c.raw_output) == []
    # back to window 0: presence returns (unknown: keys and idle; seen while the mark stands),
    # the cue is over
    sc.select(0)
    sc.presence("unknown")
    # tmux is asked when the run settles (the fact waits for the answer), not at the switch
    print(f"away told (select-window -> log, the run settling 2 s later): {latency * 1000:.0f} ms")


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_a_cue_message_does_not_freeze_the_clients_screen(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """While a status-line message stands, tmux draws none of the panes' output on that client.
    The user in window 1 watching a program's output gets the cue's message, and without
    pressing any key sees that output move on again once the message has stood its time
    (a message "until the next key" froze their view until they typed)."""
    ticker = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo TICK$i; sleep 0.1; done"]
    sc = tmux_scene(window1=ticker)
    c = sc.client

    def last_tick() -> int:
        ticks = re.findall(r"TICK(\d+)", c.screen_text)
        return int(ticks[-1]) if ticks else 0

    run_steps(fakemodel, 1, "done while away")
    c.prompt("a task")
    c.wait_working()
    sc.select(1)
    sc.wait(lambda: last_tick() > 0, "window 1's output on the client")
    sc.settled(1)
    sc.wait(lambda: sc.rig.cue_messages(), "the cue's tmux message")
    # the ticker's own count in tmux's pane, read after the message was shown: the client
    # must come to show a later one without a key
    shown_at = max(
        int(t) for t in re.findall(r"TICK(\d+)", "\n".join(sc.rig.capture(f"{SESSION}:1")))
    )
    sc.wait(lambda: last_tick() > shown_at + 5, "window 1's output moving on the client", 20)
    assert sc.rig.cue_messages(), "the message was shown"


def screens_match(sc: Scene, target: str) -> bool:
    """The client's screen (status line left out) is what tmux holds for ``target``."""
    return sc.client.screen_lines[: sc.rig.rows - 1] == sc.rig.capture(target)


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_focus_events_and_passthrough(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """``focus-events on`` and ``allow-passthrough on``: with window 0 active and the outer
    terminal unfocused, one OSC notification reaches the outer terminal through tmux; with
    window 1 active instead, the tmux message and flag, no OSC, and tmux's screen intact."""
    sc = tmux_scene({"focus-events": "on"}, {"allow-passthrough": "on"})
    c = sc.client
    # A: window 0 active, the outer terminal loses focus during the run
    run_steps(fakemodel, 2, "first done")
    c.prompt("first task")
    c.wait_working()
    c.focus_out()
    away = sc.presence("away")
    assert away["via"] == "focus"
    sc.settled(1)
    notes = sc.wait(lambda: osc_notifications(c.raw_output), "an OSC notification")
    absence_window(0.5, "a second OSC notification")
    assert osc_notifications(c.raw_output) == notes
    [(title, body)] = notes
    assert (title, body) == ("Pi — work", "Finished")
    assert sc.rig.cue_messages() == []  # Pi's pane is in front: no tmux message
    assert [d["state"] for d in sc.deliveries("terminal")] == ["unconfirmable"]
    c.focus_in()
    sc.presence("focused")
    # B: window 1 active during the run
    run_steps(fakemodel, 2, "second done")
    c.prompt("second task")
    c.wait_working()
    sc.select(1)
    sc.presence("away", after=1)
    sc.settled(2)
    msg = sc.wait(lambda: sc.rig.cue_messages(), "a tmux message")
    assert len(msg) == 1 and f"(session {SESSION}, window 0" in msg[0], msg
    sc.wait(lambda: sc.rig.window_flags()["0"][0], "window 0 flagged")
    absence_window(0.5, "an OSC notification from the hidden pane")
    assert len(osc_notifications(c.raw_output)) == 1  # none from the hidden pane
    assert sc.deliveries("terminal")[-1]["state"] == "off"
    # the client shows window 1 exactly as tmux holds it (nothing of Pi's or cuewrap's)
    sc.wait(lambda: screens_match(sc, f"{SESSION}:1"), "client screen == window 1")
    c.send("x")  # the message goes with a key (to window 1's sleep)
    sc.select(0)
    sc.wait(lambda: screens_match(sc, f"{SESSION}:0"), "client screen == window 0")
    sc.presence("focused", after=1)


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_detach_during_run_then_attach(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """The client detaches during a run: the cue waits in tmux and is shown on the client
    that attaches next."""
    sc = tmux_scene()
    c = sc.client
    run_steps(fakemodel, 2, "done while detached")
    c.prompt("a task")
    c.wait_working()
    sc.rig.tmux("detach-client", "-s", SESSION)
    sc.presence("away")  # tmux also sends the pane a focus-out here, which may come first
    sc.settled(1)
    sc.wait(
        lambda: [d for d in sc.deliveries("tmux") if d["state"] == "waiting"],
        "the tmux message waiting for a client",
    )
    assert sc.rig.cue_messages() == []
    again = sc.rig.attach()
    [name] = sc.rig.wait_clients(1)
    msg = sc.wait(lambda: sc.rig.cue_messages(), "the waiting message")
    assert msg[0].split(" message: ")[0].endswith(name), msg
    assert "Pi — work: Finished" in msg[0]
    again.wait_for_screen(r"Pi — work: Finished", timeout=10)
    sc.returned()  # Pi's pane is in front again


@pytest.mark.alone  # times it in real time (docs/testing.md, Parallel)
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_idle_cpu_inside_tmux(tmux_scene: Callable[..., Scene]) -> None:
    """Inside tmux cuewrap costs nothing while nothing happens: window switches while nothing
    waits on the user are not asked about (no question to tmux, no record), and over 10 s not
    one wake-up of any of cuewrap's threads (exact; CPU ticks alone are sampled), so no CPU
    either."""
    sc = tmux_scene()
    pid = sc.rig.pane_pid(f"{SESSION}:0")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        assert b"cuewrap" in f.read()
    views = len(sc.log("tmux_view"))
    sc.select(1)
    absence_window(1.5, "a question to tmux while nothing waits")
    sc.select(0)
    sc.client.wait_idle()
    assert len(sc.log("tmux_view")) == views, sc.why()
    absence_window(1.0, "output after the last frame")
    woke, ticks = wakeups(pid, threads=True), cpu_ticks(pid)
    absence_window(10.0, "a wake-up of an idle cuewrap inside tmux")
    assert wakeups(pid, threads=True) - woke == 0
    assert cpu_ticks(pid) - ticks == 0


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_cue_page_names_the_missing_tmux_settings(tmux_scene: Callable[..., Scene]) -> None:
    """tmux's defaults: /cue says what tmux tells cuewrap and names both settings."""
    sc = tmux_scene()
    c = sc.client
    c.submit("/cue")
    c.wait_for_screen(
        r"tmux \d+\.\d+\w*: Pi's pane is active \(1 client attached, asked just now\)"
    )
    c.wait_for_screen(re.compile(r"to improve:.*?set -g\s+focus-events\s+on", re.S))
    c.wait_for_screen(re.compile(r"to improve:.*?set -g\s+allow-passthrough\s+on", re.S))


@pytest.mark.parametrize("pi_version", ["1.4.0"])
@pytest.mark.parametrize("focus_events", ["off", "on"])
def test_pane_and_session_switches_count_as_leaving(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel, focus_events: str
) -> None:
    """Another pane of Pi's window, another session: a run that settles meanwhile gives its
    cue (tmux asked at the settle); back to Pi's pane: returned (seen while the mark stands:
    tmux's focus reports with focus-events on, a question a second without) — with tmux's
    default options and with focus-events on."""
    sc = tmux_scene({"focus-events": focus_events})
    rig, c = sc.rig, sc.client
    [name] = rig.user_clients()
    rig.tmux("split-window", "-d", "-t", f"{SESSION}:0", "sleep", "100000")
    rig.tmux("new-session", "-d", "-s", "other", "sleep", "100000")
    leave = {
        "pane": (("select-pane", "-t", f"{SESSION}:0.1"), ("select-pane", "-t", f"{SESSION}:0.0")),
        "session": (("switch-client", "-c", name, "-t", "other"),
                    ("switch-client", "-c", name, "-t", SESSION)),
    }  # fmt: skip
    for n, (where, (away, back)) in enumerate(leave.items()):
        run_steps(fakemodel, 2, f"done while in another {where}")
        c.prompt(f"task {n}")
        c.wait_working()
        rig.tmux(*away)
        sc.settled(n + 1)
        cue = sc.wait(lambda n=n: sc.cues()[n:] or None, f"the cue of the run ({where})")[0]
        assert cue["cue"] == "finished", sc.why()
        sc.presence("away", after=n)  # tmux's answer at the settle, or its focus report
        rig.tmux(*back)
        sc.returned(after=n)


def doctor_advice(sc: Scene) -> list[str]:
    """``cuewrap doctor`` as run from a shell in Pi's tmux session (the pane's own TMUX and
    TMUX_PANE): the tmux commands it advises, as ``tmux set …`` argument lists."""
    fmt = "#{socket_path},#{pid},#{session_id}\t#{pane_id}"
    tmux_var, pane = sc.rig.tmux("display-message", "-p", "-t", f"{SESSION}:0", fmt).split("\t")
    env = {k: v for k, v in sc.rig.env.items() if not k.startswith("TMUX")}
    env.update(TMUX=tmux_var.replace(",$", ","), TMUX_PANE=pane.strip())
    done = subprocess.run(
        [sys.executable, "-m", "cuewrap", "doctor"],
        env=env,
        cwd=sc.rig.home.cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return re.findall(r"\(tmux (set -g [\w-]+ on)\)", done.stdout)


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_allow_passthrough_changed_while_pi_runs_counts_at_the_next_cue(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """tmux's ``allow-passthrough`` starts off (tmux's default), is turned on as
    ``cuewrap doctor`` advises while Pi runs, then off and on again; after each change a run
    settles while the user's terminal has lost focus with Pi's pane in front. The terminal
    notification reaches the outer terminal exactly while the option is on: it is read at each
    cue, not kept from the start."""
    sc = tmux_scene({"focus-events": "on"})
    c = sc.client
    runs = 0

    def away_run(passes: bool) -> None:
        nonlocal runs
        runs += 1
        before = len(osc_notifications(c.raw_output))
        aways = len([r for r in sc.log("presence") if r.get("presence") == "away"])
        cues = len(sc.cues())
        run_steps(fakemodel, 1, f"run {runs} done")
        c.prompt(f"task {runs}")
        c.wait_working()
        c.focus_out()
        sc.presence("away", after=aways)
        sc.settled(runs)
        [*_, cue] = sc.wait(lambda: len(sc.cues()) > cues and sc.cues(), f"cue of run {runs}")
        terminal = sc.wait(
            lambda: [d for d in sc.deliveries("terminal") if d.get("cue") == cue["cue_id"]],
            f"the terminal's delivery record for run {runs}",
        )
        if passes:
            sc.wait(lambda: len(osc_notifications(c.raw_output)) > before, "an OSC notification")
            assert [d["state"] for d in terminal] == ["unconfirmable"], terminal
        else:
            absence_window(1.0, "an OSC notification while allow-passthrough is off")
            assert [d["state"] for d in terminal] == ["off"], terminal
            assert "allow-passthrough on" in terminal[0]["reason"], terminal
        assert len(osc_notifications(c.raw_output)) == before + (1 if passes else 0)
        focused = len([r for r in sc.log("presence") if r.get("presence") == "focused"])
        c.focus_in()
        sc.presence("focused", after=focused)

    away_run(passes=False)
    advice = doctor_advice(sc)
    assert "set -g allow-passthrough on" in advice, advice
    sc.rig.tmux(*"set -g allow-passthrough on".split())  # the advice, followed while Pi runs
    away_run(passes=True)
    sc.rig.tmux("set", "-g", "allow-passthrough", "off")
    away_run(passes=False)
    sc.rig.tmux("set", "-g", "allow-passthrough", "on")
    away_run(passes=True)
    assert doctor_advice(sc) == []


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_focus_events_turned_off_while_pi_runs_leaves_no_stale_focus(
    tmux_scene: Callable[..., Scene],
) -> None:
    """The terminal lost focus (tmux reported it to the pane), then ``focus-events`` is turned
    off: tmux reports nothing more, so that last report must not stand for ever (the user
    counted as away while typing in front of Pi: keys say nothing while focus reports rule).
    Once cuewrap reads the option off, keys and the idle rule decide again."""
    sc = tmux_scene({"focus-events": "on"})
    c = sc.client
    c.focus_out()
    sc.presence("away")

    def count(state: str) -> int:
        return len([r for r in sc.log("presence") if r.get("presence") == state])

    unknown = count("unknown")
    sc.rig.tmux("set", "-s", "focus-events", "off")
    # a key typed into Pi's pane when tmux's last answer is old: cuewrap asks again, and reads
    # the option off
    time.sleep(side.KEY_STALE + 0.2)
    c.send("x")
    # unknown: the engine goes back to keys and the idle rule (and counts the user as back)
    sc.wait(lambda: count("unknown") > unknown, "presence unknown: the report no longer holds")
    assert sc.log("presence")[-1].get("presence") == "unknown", sc.why()
    assert "focus reports off" in [r.get("state") for r in sc.log("tmux")], sc.why()


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_leaving_while_a_dialog_waits_is_seen_without_focus_events(
    tmux_scene: Callable[..., Scene], fakemodel: FakeModel
) -> None:
    """tmux's defaults (no focus reports): Pi asks while the user is in front (no cue); the
    user switches to window 1 — nothing tells cuewrap, but a needs-input wait stands, so it asks
    tmux every second and the leave gives the wait's cue (rule 2) within a few seconds: a
    status-line message. Back in window 0, the return is seen the same way."""
    sc = tmux_scene()
    c = sc.client
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed"))
    c.prompt("confirm please")
    c.wait_dialog()
    absence_window(1.0, "a cue for a dialog opened in front of the user")
    assert sc.cues() == [], sc.why()
    t0 = time.monotonic()
    sc.select(1)
    [cue] = sc.wait(lambda: sc.cues() or None, "the wait's cue after the leave", 10)
    seen = time.monotonic() - t0
    assert cue["cue"] == "needs-input", sc.why()
    msg = sc.wait(lambda: sc.rig.cue_messages(), "the tmux message")
    assert "Needs your input" in msg[0], msg
    aways = len([r for r in sc.log("invalidated") if r.get("reason") == "user returned"])
    sc.select(0)
    sc.returned(after=aways)
    c.enter()  # the dialog answered: the run goes on and settles in front of the user
    c.wait_for_screen(r"^ deployed$")
    sc.settled(1)
    absence_window(1.0, "a cue for the run that settled in front of the user")
    assert [r["cue"] for r in sc.cues()] == ["needs-input"], sc.why()
    print(f"the leave seen {seen:.2f} s after the switch (polled once a second)")
