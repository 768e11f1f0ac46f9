"""Real terminal emulators (xterm, kitty) under Xvfb, with real Pi under cuewrap inside them.

What a user sees, read where a user's desktop reads it: focus moved by the X server
(``xdotool windowfocus --sync``: the terminal itself then sends ``CSI I`` / ``CSI O``), the
window title from the window property (``xprop _NET_WM_NAME``), notifications as the
notification daemon (dunst, on a private session bus) receives them. The terminal answers
cuewrap's start-up query itself.

- kitty (Debian's 0.26.5, software GL): with default settings exactly one desktop popup per
  cue, kitty's own (app name "kitty"; cuewrap's D-Bus notification is not sent as well); no
  ``p=close`` (0.26.5 rejects it) and the log says ``unsupported``.
- xterm: exactly one popup per cue, cuewrap's D-Bus notification, closed on return; the
  ``[✓]`` mark in the window title; Ctrl-Z / ``fg`` from an interactive bash; a stream of
  frames reaches it intact (xterm's own log of what it read) while the focus leaves and comes
  back; and a performance test: cuewrap, with the focus reported lost, wakes markedly less
  often per frame.
- foot (Debian's 1.13, a Wayland terminal, inside weston's X11 backend): one popup per cue,
  foot's own (it runs ``notify-send`` for OSC 777); OSC 777 cannot be closed: ``unsupported``.
- ``cuewrap doctor`` inside each names the desktop path and why.

``scripts/install-test-deps`` installs xterm, kitty, foot, weston, xdotool, x11-utils and
Mesa; under CI a missing one fails the run (``conftest.py``), elsewhere these tests skip
saying which.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session, stop
from fakemodel import FakeModel, text, tool_call
from pirig import TEST_EXT
from procstat import wakeups
from termrig import (
    Term,
    cuewrap_pi,
    displayed,
    notifications_now,
    quit_pi,
    ready,
    received,
    run_one_cue,
    title_of,
    x,
)
from waiting import absence_window, wait_until

pytestmark = [pytest.mark.realterm, pytest.mark.parametrize("pi_version", ["1.4.0"])]


def test_kitty_one_popup_per_cue_its_own_and_no_close(
    launch: Any, fakemodel: FakeModel, xdesk: Session
) -> None:
    t: Term = launch("kitty", cuewrap_pi())
    answers = ready(t)
    assert answers["version"].startswith("kitty("), answers
    [channels] = t.records("channels")[-1:]
    assert (channels["popup"], channels["terminal_osc"], channels["desktop_notification"]) == (
        "terminal",
        True,
        False,
    ), channels
    cue = run_one_cue(t, fakemodel)
    assert cue["cue"] == "finished"
    wait_until(lambda: received(xdesk.env) >= 1, 15, "kitty's desktop notification")
    absence_window(2.0, "a second popup for the same cue")
    assert (received(xdesk.env), displayed(xdesk.env)) == (1, 1)
    assert "[✓]" in t.title(), t.title()
    t.focus(True)
    [w] = wait_until(lambda: t.records("withdrawal"), 10, "the withdrawal record")
    assert (w["channel"], w["state"]) == ("terminal", "unsupported"), w
    assert "0.36" in w["reason"]
    wait_until(lambda: "[✓]" not in t.title(), 10, "the mark cleared on return")
    quit_pi(t)
    # kitty 0.26.5 cannot close it: it stays (the user dismisses it); it was kitty's own
    assert displayed(xdesk.env) == 1
    got = notifications_now(xdesk.env)
    assert [n["appname"] for n in got] == ["kitty"], got
    stderr = (t.log.parent / "cwkitty1.stderr").read_text(errors="replace")
    # no p=close was sent: kitty 0.26.5 would say "unknown payload type: close". The start-up
    # query p=? is the one thing it does not know (a line on kitty's own stderr, not on screen)
    rejected = [line for line in stderr.splitlines() if "Malformed OSC 99" in line]
    assert [line.split("]", 1)[1] for line in rejected] == [
        " Malformed OSC 99: unknown payload type: ?"
    ], stderr


def test_xterm_one_popup_per_cue_cuewraps_closed_on_return(
    launch: Any, fakemodel: FakeModel, xdesk: Session
) -> None:
    t: Term = launch("xterm", cuewrap_pi())
    answers = ready(t)
    assert answers["version"].startswith("XTerm("), answers
    [channels] = t.records("channels")[-1:]
    assert (channels["popup"], channels["terminal_osc"], channels["desktop_notification"]) == (
        "desktop",
        False,
        True,
    ), channels
    run_one_cue(t, fakemodel)
    wait_until(lambda: received(xdesk.env) >= 1, 15, "cuewrap's desktop notification")
    absence_window(2.0, "a second popup for the same cue")
    assert (received(xdesk.env), displayed(xdesk.env)) == (1, 1)
    assert "[✓]" in t.title(), t.title()
    t.focus(True)
    wait_until(lambda: displayed(xdesk.env) == 0, 10, "the notification closed on return")
    done = wait_until(
        lambda: [r for r in t.records("withdrawal") if r["state"] != "requested"], 10,
        "the withdrawal's outcome")  # fmt: skip
    assert [(w["channel"], w["state"]) for w in done] == [("desktop", "withdrawn")], done
    wait_until(lambda: "[✓]" not in t.title(), 10, "the mark cleared on return")
    quit_pi(t)
    got = notifications_now(xdesk.env)
    assert [n["appname"] for n in got] == ["Pi"], got


@pytest.mark.parametrize(
    ("terminal", "popup", "why"),
    [
        ("kitty", "the terminal's own", "kitty shows its own notifications"),
        ("xterm", "cuewrap's desktop notification", "xterm shows no desktop notification"),
        ("foot", "the terminal's own", "foot shows its own notifications"),
    ],
)
def test_doctor_in_the_terminal_names_the_desktop_path_and_why(
    launch: Any, tmp_path: Path, terminal: str, popup: str, why: str
) -> None:
    """``cuewrap doctor`` on the terminal itself (``script`` records what it printed; the
    terminal's answers go through ``script``'s PTY to doctor, as they would to cuewrap)."""
    out = tmp_path / f"doctor-{terminal}.txt"
    doctor = shlex.join([sys.executable, "-m", "cuewrap", "doctor"])
    t: Term = launch(terminal, shlex.join(["script", "-q", "-e", "-c", doctor, str(out)])
                     + "; sleep 60")  # fmt: skip

    def report() -> str:
        text = out.read_text(errors="replace") if out.exists() else ""
        return text.replace("\r\n", "\n") if "Where cuewrap runs" in text else ""

    text: str = wait_until(report, 30, "doctor's report")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    asked = next(line for line in lines if line.startswith("asked:"))
    version = {"kitty": "kitty(", "xterm": "XTerm(", "foot": "foot("}[terminal]
    assert asked.startswith("asked: XTVERSION " + version), asked
    found = next(line for line in lines if line.startswith("desktop popup:"))
    assert found.startswith(f"desktop popup: {popup}") and why in found, found
    assert t.proc.poll() is None


def test_xterm_ctrl_z_and_fg_from_an_interactive_bash(
    launch: Any, fakemodel: FakeModel, xdesk: Session, tmp_path: Path
) -> None:
    """Ctrl-Z gives the shell the terminal as it was (the title it had), fg gives Pi back with
    cuewrap's modes (focus reports, marks), and a cue after that still pops up once."""
    t: Term = launch("xterm", "PS1='$ ' exec bash --norc --noprofile -i")
    t.log = tmp_path / "cuewrap-bash.log"
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    command = cuewrap_pi().replace("{LOG}", str(t.log))
    t.type(f"printf '\\033]2;my-shell\\007'; {command}")
    t.key("Return")
    ready(t)
    wait_until(lambda: t.title().startswith("π"), 10, "Pi's title")
    t.key("ctrl+z")
    wait_until(lambda: [r["state"] for r in t.records("job")] == ["stopped"], 10, "the stop")
    wait_until(lambda: t.title() == "my-shell", 10, "the shell's own title back at the prompt",
               detail=t.title)  # fmt: skip
    t.type("fg")
    t.key("Return")
    wait_until(lambda: [r["state"] for r in t.records("job")] == ["stopped", "continued"], 10,
               "the continue")  # fmt: skip
    wait_until(lambda: t.title().startswith("π"), 10, "Pi's title again", detail=t.title)
    n = len(t.presence())
    run_one_cue(t, fakemodel)  # the focus reports work again: away is seen
    assert len(t.presence()) > n
    wait_until(lambda: received(xdesk.env) >= 1, 15, "cuewrap's desktop notification")
    absence_window(1.5, "a second popup for the same cue")
    assert received(xdesk.env) == 1
    assert "[✓]" in t.title(), t.title()
    t.focus(True)
    wait_until(lambda: displayed(xdesk.env) == 0, 10, "the notification closed on return")
    quit_pi(t)
    wait_until(lambda: t.title() == "my-shell", 10, "the shell's title after Pi exits",
               detail=t.title)  # fmt: skip


@pytest.mark.parametrize("terminal", ["kitty", "xterm"])
def test_a_click_on_the_popup_brings_the_user_back_to_pi(
    launch: Any, fakemodel: FakeModel, xdesk: Session, terminal: str
) -> None:
    """kitty's own popup: kitty focuses its window. cuewrap's (xterm): its D-Bus worker gives
    the terminal window the focus (``xdotool``; here with no window manager to activate it).
    Either way the terminal reports the focus and cuewrap counts the user as back."""
    t: Term = launch(terminal, cuewrap_pi())
    ready(t)
    run_one_cue(t, fakemodel)
    wait_until(lambda: displayed(xdesk.env) == 1, 15, "the popup")
    x(xdesk.env, "dunstctl", "action", "0")  # the popup's default action: a click
    wait_until(lambda: t.presence()[-1:] == ["focused"], 10, "the user back in the terminal",
               detail=lambda: str(t.records()[-10:]))  # fmt: skip
    if terminal == "xterm":
        [clicked] = wait_until(lambda: t.records("activated"), 10, "the activated record")
        assert "xdotool" in clicked["lead_back"] and "ok" in clicked["lead_back"], clicked
    else:
        assert t.records("activated") == []  # kitty's popup: cuewrap sent none of its own


def test_kitty_with_pi_in_tmux_one_popup_cuewraps_its_click_selects_the_pane(
    launch: Any, fakemodel: FakeModel, xdesk: Session, tmp_path: Path
) -> None:
    """Inside tmux the popup is cuewrap's (its click selects Pi's pane), not kitty's: still
    one per cue."""
    sock, conf = tmp_path / "tmux.sock", tmp_path / "tmux.conf"
    # passthrough on: kitty's own popup could be reached, and is still not used
    conf.write_text("set -g allow-passthrough on\nset -s focus-events on\n")
    inner = cuewrap_pi().replace("{LOG}", str(tmp_path / "cuewrap-tmux.log"))
    t: Term = launch("kitty", shlex.join(["tmux", "-S", str(sock), "-f", str(conf),
                                          "new-session", inner]))  # fmt: skip
    try:
        t.log = tmp_path / "cuewrap-tmux.log"
        wait_until(lambda: t.records("channels"), 30, "cuewrap's channels record")
        channels = t.records("channels")[-1]
        assert (channels["popup"], channels["terminal_osc"], channels["desktop_notification"]) == (
            "desktop",
            False,
            True,
        ), channels
        assert "tmux pane" in channels["why"]
        wait_until(lambda: any(r.get("type") == "BridgeHello" for r in t.records("fact")),
                   30, "Pi's bridge hello")  # fmt: skip
        x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
        x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
        wait_until(lambda: t.presence()[-1:] == ["focused"], 10, "focus through tmux",
                   detail=lambda: f"presence facts: {t.presence()}")  # fmt: skip
        run_one_cue(t, fakemodel)
        wait_until(lambda: received(xdesk.env) >= 1, 15, "the desktop notification")
        absence_window(2.0, "a second popup for the same cue")
        assert (received(xdesk.env), displayed(xdesk.env)) == (1, 1)
        t.focus(True)
        wait_until(lambda: displayed(xdesk.env) == 0, 10, "the notification closed on return")
        got = notifications_now(xdesk.env)
        assert [n["appname"] for n in got] == ["Pi"], got
    finally:  # tmux's server outlives kitty and its client: it, cuewrap and Pi end here
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=10)


def test_kitty_with_both_set_on_gets_both_as_asked(
    launch: Any, fakemodel: FakeModel, xdesk: Session
) -> None:
    """notify.terminal and notify.desktop set on explicitly: both popups (the user asked), and
    the channels record says it duplicates."""
    both = {"CUEWRAP_NOTIFY_TERMINAL": "osc99", "CUEWRAP_NOTIFY_DESKTOP": "on"}
    t: Term = launch("kitty", cuewrap_pi(), env=both)
    ready(t)
    channels = t.records("channels")[-1]
    assert (channels["popup"], channels["duplicates"]) == ("both", True), channels
    run_one_cue(t, fakemodel)
    wait_until(lambda: received(xdesk.env) >= 2, 15, "both popups")
    absence_window(1.5, "a third popup")
    assert received(xdesk.env) == 2
    t.focus(True)
    wait_until(lambda: displayed(xdesk.env) == 1, 10, "cuewrap's own closed (kitty's stays)")
    got = notifications_now(xdesk.env)
    assert sorted(n["appname"] for n in got) == ["Pi", "kitty"], got


def test_foot_one_popup_per_cue_its_own(launch: Any, fakemodel: FakeModel, xdesk: Session) -> None:
    """foot (in weston) runs notify-send for OSC 777 itself: that is the one popup."""
    t: Term = launch("foot", cuewrap_pi())
    answers = ready(t)
    assert answers["version"].startswith("foot("), answers
    channels = t.records("channels")[-1]
    assert (channels["popup"], channels["terminal_osc"], channels["desktop_notification"]) == (
        "terminal",
        True,
        False,
    ), channels
    run_one_cue(t, fakemodel)
    wait_until(lambda: received(xdesk.env) >= 1, 15, "foot's desktop notification")
    absence_window(2.0, "a second popup for the same cue")
    assert received(xdesk.env) == 1
    t.focus(True)
    [w] = wait_until(lambda: t.records("withdrawal"), 10, "the withdrawal record")
    assert (w["channel"], w["state"]) == ("terminal", "unsupported"), w
    quit_pi(t)
    got = notifications_now(xdesk.env)
    # foot's own notify-send names foot's app-id (set to the window's name here), not "Pi"
    assert [n["appname"] for n in got] == ["cwfoot1"], got


STREAM = r"""
import os, sys, time
from pathlib import Path
here = Path(sys.argv[1])
leader = os.getppid()  # cuewrap's session leader; cuewrap is its parent
cuewrap = int(Path(f"/proc/{leader}/stat").read_text().rsplit(")", 1)[1].split()[1])
(here / "cuewrap.pid").write_text(str(cuewrap))
out = sys.stdout.buffer
count = os.open(here / "count", os.O_RDWR | os.O_CREAT)  # frames drawn so far, for the test
n = 0
while not (here / "stop").exists():
    os.pwrite(count, b"%012d" % n, 0)
    body = b"%06d " % n + bytes(range(0x41, 0x5b)) * 5
    out.write(b"\x1b[?2026h\x1b[H\x1b[2Kframe " + body + b"\x1b[?2026l")
    out.flush()
    n += 1
    time.sleep(1 / 60)
(here / "frames").write_text(str(n))
out.write(b"\r\nEND-OF-STREAM\r\n")
out.flush()
time.sleep(60)
"""


@dataclass
class Stream:
    """The stream child under cuewrap in real xterm, which logs every byte it read."""

    term: Term
    here: Path
    got: Path  # xterm's log
    cuewrap: int  # cuewrap's pid

    def drawn(self) -> int:
        """Frames the child has drawn so far (it counts them in a file)."""
        return int((self.here / "count").read_bytes() or b"0")

    def more_frames(self, n: int) -> None:
        start = self.drawn()
        wait_until(lambda: self.drawn() >= start + n, 30, f"{n} more frames drawn")

    def stop(self) -> int:
        """End the stream; every frame reached xterm whole and in order. Returns how many."""
        (self.here / "stop").touch()
        wait_until(lambda: self.got.exists() and b"END-OF-STREAM" in self.got.read_bytes(), 20,
                   "the end of the stream in xterm")  # fmt: skip
        frames = int((self.here / "frames").read_text())
        data = self.got.read_bytes()
        body = bytes(range(0x41, 0x5B)) * 5
        shown = re.findall(
            rb"\x1b\[\?2026h\x1b\[H\x1b\[2Kframe (\d{6}) ([A-Z]*)\x1b\[\?2026l", data
        )
        assert [int(n) for n, _ in shown] == list(range(frames)), (frames, len(shown))
        assert all(b == body for _, b in shown)
        return frames


def stream_in_xterm(launch: Any, tmp_path: Path) -> Stream:
    """A child drawing ~60 numbered frames a second under cuewrap in real xterm, focused."""
    (tmp_path / "stream.py").write_text(STREAM)
    got = tmp_path / "xterm-received.log"
    child = [sys.executable, str(tmp_path / "stream.py"), str(tmp_path)]
    cmd = shlex.join([sys.executable, "-m", "cuewrap", "--log", "{LOG}", "--", *child])
    cmd = cmd.replace("'{LOG}'", "{LOG}")
    t: Term = launch("xterm", cmd, options=["-l", "-lf", str(got)])
    wait_until(lambda: t.records("terminal_answers"), 30, "the terminal's answers")

    def focused() -> bool:
        if t.presence()[-1:] == ["focused"]:
            return True
        x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
        x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
        return False

    wait_until(focused, 15, "the terminal's focus report", interval=1.0,
               detail=lambda: f"presence facts: {t.presence()}")  # fmt: skip
    pid = int(wait_until(lambda: (tmp_path / "cuewrap.pid").exists(), 10, "the stream")
              and (tmp_path / "cuewrap.pid").read_text())  # fmt: skip
    return Stream(t, tmp_path, got, pid)


def test_xterm_gets_a_stream_intact_while_the_focus_leaves_and_comes_back(
    launch: Any, tmp_path: Path
) -> None:
    """docs/design.md#unseen-output, where users see it: a child draws ~60 frames a second in
    real xterm; every frame reaches xterm intact and in order (xterm's own log of what it
    read) before, while and after xterm reports its focus lost (cuewrap gathers the output
    longer then)."""
    s = stream_in_xterm(launch, tmp_path)
    s.more_frames(120)
    s.term.focus(False)
    s.more_frames(120)
    s.term.focus(True)
    s.more_frames(120)
    assert s.stop() >= 360


@pytest.mark.performance
def test_performance_cuewrap_wakes_less_per_frame_while_xterm_reports_the_focus_lost(
    launch: Any, tmp_path: Path
) -> None:
    """A performance test (docs/testing.md, "Performance tests"): the gathering while nobody
    looks (docs/design.md#unseen-output) is there to wake cuewrap less often, so this asserts
    that, as a ratio measured side by side in one run: cuewrap's wake-ups per frame the child
    drew drop well below the watched figure while xterm reports the focus lost (measured ~1.0
    -> 0.36-0.38 -> ~1.0, also with both cores kept busy; with the gathering switched off 1.01
    -> 1.03 -> 1.13, and this fails). Per frame, not per second: a loaded machine that slows
    the child slows both sides alike."""
    s = stream_in_xterm(launch, tmp_path)

    def rate() -> float:
        """cuewrap's wake-ups per frame the child drew over 2 s."""
        woke, frames = wakeups(s.cuewrap), s.drawn()
        time.sleep(2.0)
        return (wakeups(s.cuewrap) - woke) / max(1, s.drawn() - frames)

    watched = rate()
    s.term.focus(False)
    away = rate()
    s.term.focus(True)
    back = rate()
    s.stop()
    assert away < 0.6 * min(watched, back), (watched, away, back)


def test_kitty_shows_none_of_an_answers_notifications_or_titles(
    launch: Any, fakemodel: FakeModel, xdesk: Session
) -> None:
    """docs/terminal-guard.md, guard.sequences: an answer carrying a notification in each
    protocol, a status report and titles. Pi alone in kitty: popups from the model and a window
    title the model chose, as the user's desktop shows them. Under cuewrap: the one popup is
    the cue's, the title Pi's with cuewrap's mark."""
    from test_sequence_guard_pi import ANSWER

    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    alone = launch("kitty", shlex.join(["pi", "-e", str(TEST_EXT)]))
    wait_until(lambda: title_of(alone.env, alone.wid) == "π - work", 30, "Pi's own title")
    alone.type("summarise")
    alone.key("Return")
    wait_until(lambda: received(xdesk.env) >= 2, 20, "the model's popups through Pi alone")
    wait_until(lambda: title_of(alone.env, alone.wid) == "owned by the model", 10,
               "the model's title through Pi alone")  # fmt: skip
    last = -1

    def settled() -> bool:  # the answer has streamed: no new popup for 2 s
        nonlocal last
        now, last = last, received(xdesk.env)
        return now == last

    wait_until(settled, 30, "the end of the model's popups", interval=2.0)
    stop(alone.proc)
    forged = notifications_now(xdesk.env)
    assert len(forged) >= 2 and all(n["appname"] == "kitty" for n in forged), forged

    t: Term = launch("kitty", cuewrap_pi())
    ready(t)
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}), text(ANSWER, chunk_delay=0.05))
    t.type("summarise")
    t.key("Return")
    wait_until(lambda: t.records("run"), 15, "the run started")
    t.focus(False)
    wait_until(lambda: t.records("cue"), 30, "the finished cue")
    wait_until(lambda: received(xdesk.env) >= 1, 15, "the cue's popup")
    absence_window(2.0, "another popup")
    after = Counter(tuple(sorted(n.items())) for n in notifications_now(xdesk.env))
    after.subtract(tuple(sorted(n.items())) for n in forged)  # dunst keeps its history
    new = [dict(n) for n, k in after.items() for _ in range(k)]
    assert len(new) == 1, (new, t.records("guard")[-3:])
    [popup] = new
    assert "evil.example" not in popup["body"] and "Needs your input" not in popup["body"], popup
    assert t.title() == "[✓] π - work", t.title()
    assert {r["sequence"] for r in t.records("guard")} >= {"osc777", "osc99", "osc0", "osc2"}
    assert [c["cue"] for c in t.records("cue")] == ["finished"]
    t.focus(True)
    quit_pi(t)
