"""The real-terminal matrix: one scenario, every terminal of tests/termkinds.py, each a real
window under Xvfb with a private bus and dunst, real Pi under ``cuewrap pi`` with default
settings (docs/terminals.md).

The user sends a prompt and leaves (the X focus moves to another window); the model's answer
carries what a prompt injection can make it write (tests/test_realterm_guard.py's ATTACK, plus
OSC 9); the run finishes while away. Then, read where a desktop reads it:

- while the user looks, a run that ends gives nothing: no popup, no mark;
- exactly one popup for the cue, from the row's path (the terminal's own or cuewrap's),
  counted as dunst received it; none of the model's;
- the mark in the window's title (``_NET_WM_NAME``, as the terminal frames the program's title)
  while away, gone when back; the model's title never shown;
- the X clipboard unchanged (the model's OSC 52 never acts);
- ``/quit``: the title pushed before Pi back (where the terminal has a title stack), and no
  mode left on: a raw reader run after cuewrap sees no focus report when the focus moves, and
  the terminal does not say mode 1004 or 2004 is set (DECRQM, where it answers).

docs/terminals.md's table is made from the rows (``termkinds.table_lines``; tests/test_docs.py
keeps it equal), each cell what this test asserts. Each run also appends what it saw (version,
popup, reason, seconds) to ``$CUEWRAP_TERMINAL_FACTS`` when set.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session
from fakemodel import FakeModel, text, tool_call
from termkinds import MATRIX, ROWS, SCREEN, Row, installed_version, need_terminal
from termrig import Term, cuewrap_pi, notifications_now, ready, received, x
from termscan import FRAME_AGAIN, FRAME_END
from test_realterm_guard import ATTACK, MODEL_TITLE, SEED, SHOWN, Titles, clipboard
from test_realterm_guard import seeded as seeded  # the fixture
from waiting import absence_window, wait_until

pytestmark = [pytest.mark.realterm, pytest.mark.parametrize("pi_version", ["1.4.0"])]

OSC9 = FRAME_END + "\x1b]9;evil popup 9\x07" + FRAME_AGAIN
ANSWER = ATTACK.replace(SHOWN, OSC9 + SHOWN)
BEFORE = "before-pi"

#: after cuewrap: the tty raw, DECRQM for 1004 and 2004, then every byte the terminal sends
MODES = r"""
import os, select, sys, termios, time, tty
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
tty.setraw(0)
os.write(1, b"\x1b[?1004$p\x1b[?2004$p")
open(sys.argv[1] + ".ready", "w").close()
end = time.time() + 60
while time.time() < end:
    if select.select([0], [], [], 0.2)[0]:
        os.write(out, os.read(0, 4096))
"""


def _command(tmp_path: Path) -> str:
    (tmp_path / "modes.py").write_text(MODES)
    modes = shlex.join([sys.executable, str(tmp_path / "modes.py"), str(tmp_path / "after")])
    return f"printf '\\033]2;{BEFORE}\\007'; {cuewrap_pi()}; {modes}; sleep 600"


def _record(row: Row, facts: dict[str, Any]) -> None:
    where = os.environ.get("CUEWRAP_TERMINAL_FACTS")
    if where:
        with open(where, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"terminal": row.name, **facts}) + "\n")


IDLE = 4.0  # presence.idle_after where the terminal reports no focus (the default is 60 s)


def _ready(t: Term, row: Row) -> dict[str, Any]:
    if row.focus:
        return ready(t)
    answers: dict[str, Any] = wait_until(
        lambda: next(iter(t.records("terminal_answers")), None), 30, "the terminal's answers"
    )
    wait_until(lambda: any(r.get("type") == "BridgeHello" for r in t.records("fact")),
               30, "Pi's bridge hello")  # fmt: skip
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    return answers


def _leave(t: Term, row: Row) -> None:
    if row.focus:
        t.focus(False)
        return
    # no report: away once IDLE s pass without a keystroke, seen at the run's end (the tool
    # runs longer than that: a run that ends before counts as seen, as designed)
    x(t.env, "xdotool", "windowfocus", "--sync", t.sink)


def _back(t: Term, row: Row) -> None:
    if row.focus:
        t.focus(True)
        return
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    t.key("Left")  # a keystroke is what says the user is back there


@pytest.mark.parametrize("terminal", MATRIX)
def test_one_popup_per_cue_the_mark_and_nothing_of_the_models(
    launch: Any, fakemodel: FakeModel, seeded: Session, tmp_path: Path, terminal: str
) -> None:
    row = ROWS[terminal]
    started = time.monotonic()
    version = installed_version(row)
    if version is not None:  # the table's version is the one proven
        assert version.startswith(row.version), (row.name, version, "update tests/termkinds.py")
    idle = {} if row.focus else {"CUEWRAP_PRESENCE_IDLE_AFTER": str(IDLE)}
    t: Term = launch(terminal, _command(tmp_path), env=idle)
    answers = _ready(t, row)
    wait_until(lambda: t.title() == row.shown.format("π - work"), 15, "Pi's title",
               detail=t.title)  # fmt: skip
    [channels] = t.records("channels")[-1:]
    titles = Titles(t)
    # while you look: a run ends, nothing (no popup, no mark)
    fakemodel.push(text("looked at, all done."))
    t.type("first")
    t.key("Return")
    wait_until(lambda: any(r.get("type") == "AgentSettled" for r in t.records("fact")), 20,
               "the first run to settle")  # fmt: skip
    absence_window(1.5, "a popup while the user looks")
    assert received(seeded.env) == 0, notifications_now(seeded.env)
    assert t.records("cue") == [] and t.title() == row.shown.format("π - work"), t.title()
    sleep = 2 if row.focus else IDLE + 3
    fakemodel.push(tool_call("bash", {"command": f"sleep {sleep:g}"}),
                   text(ANSWER, chunk_delay=0.05))  # fmt: skip
    t.type("summarise")
    t.key("Return")
    wait_until(lambda: len([r for r in t.records("run") if r.get("state") == "started"]) >= 2,
               15, "the second run started")  # fmt: skip
    _leave(t, row)
    wait_until(lambda: t.records("cue"), 60, "the finished cue",
               detail=lambda: str([r.get("kind") for r in t.records()][-30:]))  # fmt: skip
    wait_until(lambda: received(seeded.env) >= 1, 15, "the cue's popup")
    absence_window(2.0, "a second popup")
    assert received(seeded.env) == 1, notifications_now(seeded.env)
    if not row.focus:
        assert [r for r in t.records("presence") if r.get("via") == "idle"], t.records("presence")
    marked = row.shown.format("[✓] π - work")
    wait_until(lambda: t.title() == marked, 10, "the mark", detail=t.title)
    _back(t, row)
    wait_until(lambda: t.title() == row.shown.format("π - work"), 10, "the mark gone",
               detail=t.title)  # fmt: skip
    seen = titles.stop()
    assert not [s for s in seen if MODEL_TITLE in s], seen
    assert clipboard(seeded.env) == SEED
    assert [c["cue"] for c in t.records("cue")] == ["finished"]
    guarded = {r["sequence"] for r in t.records("guard")}
    assert {"osc777", "osc99", "osc9", "osc0", "osc2"} <= guarded, guarded

    t.type("/quit")
    t.key("Return")
    wait_until(lambda: t.records("child_exit"), 15, "Pi to exit")
    after = tmp_path / "after"
    wait_until(Path(f"{after}.ready").exists, 15, "the raw reader after cuewrap")
    x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    t.key("space")  # the user types at what follows (Konsole reads its tab format again)
    wait_until(lambda: after.exists() and b" " in after.read_bytes(), 10, "the key typed after")
    time.sleep(0.5)
    got = after.read_bytes()
    assert b"\x1b[I" not in got and b"\x1b[O" not in got, got
    assert b"?1004;1$y" not in got and b"?2004;1$y" not in got, got
    want = row.after or row.shown.format(BEFORE if row.restores else "π - work")
    title: str = wait_until(lambda: t.title() == want and want, 5, "the title after Pi",
                            detail=t.title)  # fmt: skip
    [popup] = notifications_now(seeded.env)
    assert popup["appname"] == row.popup, popup
    assert "evil" not in popup["summary"] + popup["body"], popup
    _record(row, {
        "version": answers.get("version", ""),
        "focus": "reports" if row.focus else f"none: idle rule ({IDLE:g} s here)",
        "popup": channels["popup"],
        "popup_app": popup["appname"],
        "why": channels["why"],
        "marked": marked,
        "restored": title,
        "decrqm": got.count(b"$y") > 0,
        "seconds": round(time.monotonic() - started, 1),
    })  # fmt: skip


@pytest.fixture
def xdesk(dunst_menu: Session) -> Session:
    """The matrix's desktop: dunst whose context menu picks a named action (a button click,
    ``tests/desktoprig.py``); otherwise the same as every real terminal's."""
    return dunst_menu


ANSWERABLE = [name for name in MATRIX if ROWS[name].popup == "Pi" and ROWS[name].focus]


@pytest.mark.parametrize("terminal", ANSWERABLE)
def test_a_wait_answered_from_the_popups_button(
    launch: Any, fakemodel: FakeModel, xdesk: Session, terminal: str
) -> None:
    """Away, Pi asks (the test extension's confirm dialog): cuewrap's popup carries Yes / No;
    a click on Yes answers the dialog in the terminal, the run goes on and finishes: one popup
    per cue, the marks in turn. Where the
    popup is the terminal's own (kitty, Konsole) it has no buttons: `cuewrap answer` there."""
    row = ROWS[terminal]
    t: Term = launch(terminal, cuewrap_pi() + "; sleep 600")
    ready(t)
    fakemodel.push(tool_call("test_confirm", {"title": "Deploy", "message": "Now?"}),
                   text("after the dialog"))  # fmt: skip
    t.type("deploy")
    t.key("Return")
    wait_until(lambda: t.records("run"), 15, "the run started")
    t.focus(False)
    wait_until(lambda: [c for c in t.records("cue") if c.get("cue") == "needs-input"], 30,
               "the needs-input cue",
               detail=lambda: str([r.get("kind") for r in t.records()]))  # fmt: skip
    sent = wait_until(
        lambda: next((r for r in t.records("delivery") if r.get("channel") == "desktop"
                      and r.get("state") == "delivered"), None), 15, "cuewrap's popup")  # fmt: skip
    wait_until(lambda: t.title() == row.shown.format("[?] π - work"), 10, "the [?] mark",
               detail=t.title)  # fmt: skip
    sid = int(sent["reason"].split()[-1])
    (xdesk.tmp / "dunst-pick").write_text(f"[{sid},answer-1]\n")
    x(xdesk.env, "dunstctl", "context")
    answered = wait_until(lambda: [r for r in t.records("answer") if "result" in r], 15,
                          "the answer", detail=lambda: str(t.records("answer")))  # fmt: skip
    assert [(a["source"], a["option"], a["result"]) for a in answered] == [
        ("desktop", 1, "answered")
    ], answered
    wait_until(lambda: fakemodel.tool_results(), 15, "the dialog's result")
    assert fakemodel.content_text(fakemodel.tool_results()[-1]) == "confirmed: yes"
    # the run goes on and finishes while the user is still away: the [?] mark gives way to
    # the finished one, and that cue is the second popup (one per cue)
    wait_until(lambda: t.title() == row.shown.format("[✓] π - work"), 15, "the finished mark",
               detail=t.title)  # fmt: skip
    wait_until(lambda: received(xdesk.env) >= 2, 10, "the finished popup")
    absence_window(1.0, "a third popup")
    assert [c["cue"] for c in t.records("cue")] == ["needs-input", "finished"], t.records("cue")
    bodies = sorted(n["body"] for n in notifications_now(xdesk.env))
    assert bodies == ["Finished", "Needs your input"], notifications_now(xdesk.env)


@pytest.mark.parametrize(
    ("terminal", "focus"),
    [
        ("xterm", "focus reports: working (CSI O and CSI I arrived)"),
        ("qterminal", "focus reports: not confirmed (got nothing); this terminal may not report"),
    ],
)
def test_doctor_check_says_whether_the_terminal_reports_focus(
    launch: Any, tmp_path: Path, terminal: str, focus: str
) -> None:
    """``cuewrap doctor --check`` turns mode 1004 on and asks the user to look away and back:
    the X focus moves away and back; a terminal that sends no report (QTerminal) is said to
    be one, with the idle rule that then applies."""
    out = tmp_path / "check.txt"
    check = shlex.join([sys.executable, "-m", "cuewrap", "doctor", "--check"])
    t: Term = launch(terminal, shlex.join(["script", "-q", "-f", "-e", "-c", check, str(out)])
                     + "; sleep 60")  # fmt: skip

    def shown(text: str) -> bool:
        return out.exists() and text in out.read_text(errors="replace")

    wait_until(lambda: shown("1. Switch to another window"), 30, "the check's first step")
    x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
    time.sleep(0.5)
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    wait_until(lambda: shown("[y/n]"), 30, "the first question")
    if shown("Did you see the test notification?"):
        t.type("n")
        wait_until(lambda: shown("Did the title show"), 15, "the title question")
    t.type("y")
    wait_until(lambda: shown("Check results"), 15, "the summary")
    text = " ".join(out.read_text(errors="replace").split())
    assert focus in text, text
    if terminal == "qterminal":
        assert "presence.idle_after" in text, text


def test_gnu_screen_in_xterm_away_by_idle_one_popup_and_a_mangled_mark(
    launch: Any, fakemodel: FakeModel, xdesk: Session, tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    """GNU screen 4.9 between xterm and cuewrap: what it lets cuewrap know (docs/terminals.md).
    It answers no XTVERSION and passes no focus report, so the user counts as away by the idle
    rule only; the outer terminal is named from the environment (xterm here): one popup,
    cuewrap's; the title mark reaches xterm's window, but screen re-encodes the title it
    forwards (``✓`` and ``π`` arrive mangled); gone at the user's next keystroke."""
    need_terminal(SCREEN)
    version = installed_version(SCREEN)
    assert version is None or version.startswith(SCREEN.version), version
    (tmp_path / "screen").mkdir(mode=0o700)

    def quit_screen() -> None:  # screen's server outlives xterm: end it, and Pi inside it
        subprocess.run(["screen", "-X", "quit"], capture_output=True, timeout=10,
                       env=dict(os.environ, SCREENDIR=str(tmp_path / "screen")))  # fmt: skip

    request.addfinalizer(quit_screen)
    conf = tmp_path / "screenrc"
    conf.write_text("startup_message off\n")
    log = tmp_path / "cuewrap-screen.log"
    inner = cuewrap_pi().replace("{LOG}", str(log))
    env = {"SCREENDIR": str(tmp_path / "screen"), "LANG": "C.UTF-8",
           "CUEWRAP_PRESENCE_IDLE_AFTER": str(IDLE)}  # fmt: skip
    t: Term = launch("xterm", shlex.join(["screen", "-U", "-c", str(conf), "bash", "-c", inner]),
                     env=env)  # fmt: skip
    t.log = log
    answers = _ready(t, ROWS["qterminal"])  # the path of a terminal without focus reports
    assert answers["version"] == "", answers  # screen answers no XTVERSION
    [channels] = t.records("channels")[-1:]
    assert (channels["terminal"], channels["popup"]) == ("xterm", "desktop"), channels
    before = t.title()
    fakemodel.push(tool_call("bash", {"command": f"sleep {IDLE + 3:g}"}), text("all done"))
    t.type("go")
    t.key("Return")
    wait_until(lambda: t.records("run"), 15, "the run started")
    x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
    time.sleep(1.0)
    assert t.presence() == []  # no focus report came through screen
    wait_until(lambda: t.records("cue"), 30, "the finished cue")
    assert [r for r in t.records("presence") if r.get("via") == "idle"], t.records("presence")
    wait_until(lambda: received(xdesk.env) >= 1, 15, "the cue's popup")
    absence_window(2.0, "a second popup")
    assert received(xdesk.env) == 1
    marked: str = wait_until(lambda: t.title() != before and t.title(), 10, "the mark")
    assert marked.startswith("[") and marked.endswith("] " + before), (marked, before)
    assert "✓" not in marked and "π" not in before, (marked, before)  # screen's re-encoding
    x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
    t.key("Left")  # back: a keystroke
    wait_until(lambda: t.title() == before, 10, "the mark gone", detail=t.title)
    [popup] = notifications_now(xdesk.env)
    assert popup["appname"] == "Pi", popup
