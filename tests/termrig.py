"""Real-terminal rig: terminal emulators (xterm, kitty, foot in weston) on the test's Xvfb
display and private bus (``dunst``), running a command in Pi's working directory.

Fixtures (registered by tests/conftest.py):

    xdesk   Session: ``dunst``'s display and bus, once every terminal tool is there
    launch  ``launch(terminal, shell_command, env=..., options=...) -> Term``

Helpers: ``x`` (run an X tool), ``title_of``, ``notifications_now``, ``displayed``,
``received`` (what dunst has), ``cuewrap_pi``, ``ready``, ``run_one_cue``, ``quit_pi``.
Used by tests/test_realterm.py and tests/test_realterm_guard.py.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from desktoprig import Session, need, stop
from fakemodel import FakeModel, text, tool_call
from pirig import TEST_EXT, PiHome
from termkinds import ROWS, need_terminal
from waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent


def x(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, f"{args}: {done.stderr}"
    return done.stdout


def title_of(env: dict[str, str], wid: str) -> str:
    out = x(env, "xprop", "-id", wid, "_NET_WM_NAME")
    m = re.search(r'= "(.*)"$', out.strip())
    return m.group(1) if m else ""


def notifications_now(env: dict[str, str]) -> list[dict[str, str]]:
    """Every notification dunst received so far (they are closed to be read: call last)."""
    x(env, "dunstctl", "close-all")
    entries = json.loads(x(env, "dunstctl", "history"))["data"][0]
    return [{k: e[k]["data"] for k in ("summary", "body", "appname")} for e in entries]


def displayed(env: dict[str, str]) -> int:
    return int(x(env, "dunstctl", "count", "displayed").strip())


def received(env: dict[str, str]) -> int:
    """Notifications dunst received: shown now plus in its history (closed or expired)."""
    shown = int(x(env, "dunstctl", "count", "displayed").strip())
    waiting = int(x(env, "dunstctl", "count", "waiting").strip())
    history = int(x(env, "dunstctl", "count", "history").strip())
    return shown + waiting + history


@dataclass
class Term:
    """One terminal window running a command, on the test's X display."""

    env: dict[str, str]
    proc: subprocess.Popen[bytes]
    wid: str
    log: Path
    sink: str  # another window, to move the focus away to
    wayland: bool = False  # foot in weston: ``wid`` is weston's window

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if kind is None or rec.get("kind") == kind:
                out.append(rec)
        return out

    def presence(self) -> list[str]:
        return [r["state"] for r in self.records("fact") if r.get("type") == "Presence"]

    def focus(self, here: bool) -> None:
        n = len(self.presence())
        want = "focused" if here else "away"
        tries = 0

        def moved() -> bool:
            nonlocal tries
            facts = self.presence()
            if len(facts) > n and facts[-1] == want:
                return True
            if tries:
                # weston gives its keyboard to the surface clicked, and may not have taken
                # X's focus change for foot's surface yet: click into it again
                x(self.env, "xdotool", "mousemove", "--window", self.wid, "200", "200",
                  "click", "1")  # fmt: skip
            tries += 1
            return False

        x(self.env, "xdotool", "windowfocus", "--sync", self.wid if here else self.sink)
        if not (here and self.wayland):
            wait_until(
                lambda: len(self.presence()) > n and self.presence()[-1] == want,
                10,
                f"cuewrap's Presence {want} from the terminal's own focus report",
                detail=lambda: f"presence facts: {self.presence()}",
            )
            return
        wait_until(moved, 15, f"cuewrap's Presence {want} from the terminal's own focus report",
                   interval=1.0, detail=lambda: f"presence facts: {self.presence()}")  # fmt: skip

    def type(self, text: str) -> None:
        """Typed through the X server into the focused window (XTEST)."""
        x(self.env, "xdotool", "type", "--delay", "30", text)

    def key(self, *keys: str) -> None:
        x(self.env, "xdotool", "key", *keys)

    def title(self) -> str:
        return title_of(self.env, self.wid)


def _on_bus(env: dict[str, str], name: str) -> bool:
    done = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                           "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                           f"string:{name}"], env=env, capture_output=True, text=True,
                          timeout=10)  # fmt: skip
    return "boolean true" in done.stdout


def _window(env: dict[str, str], cls: str, proc: subprocess.Popen[bytes]) -> str:
    def find() -> str | None:
        assert proc.poll() is None, f"the terminal exited ({proc.returncode})"
        done = subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", cls], env=env,
                              capture_output=True, text=True, timeout=10)  # fmt: skip
        ids = done.stdout.split()
        return ids[0] if ids else None

    found: str = wait_until(find, 30, f"the {cls} window")
    return found


@pytest.fixture
def xdesk(dunst: Session) -> Session:
    need("xterm", "kitty", "foot", "weston", "xdotool", "xprop", "script")
    return dunst


@pytest.fixture
def launch(xdesk: Session, pi_home: PiHome, tmp_path: Path) -> Iterator[Any]:
    """``launch(terminal, shell_command, env=...) -> Term``: the terminal on the test's
    display and bus, running ``shell_command`` in Pi's working directory."""
    started: list[subprocess.Popen[bytes]] = []
    sink_env = dict(xdesk.env)
    sink = subprocess.Popen(["xterm", "-name", "cwsink", "-e", "sleep", "600"], env=sink_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    started.append(sink)
    sink_wid = _window(sink_env, "cwsink", sink)

    def make(
        terminal: str,
        command: str,
        env: dict[str, str] | None = None,
        options: list[str] | None = None,  # the terminal's own (xterm, kitty)
    ) -> Term:
        full = {k: v for k, v in pi_home.env.items() if k not in ("TERM", "COLUMNS", "LINES")}
        full.update(
            DISPLAY=xdesk.env["DISPLAY"],
            DBUS_SESSION_BUS_ADDRESS=xdesk.env["DBUS_SESSION_BUS_ADDRESS"],
            PYTHONPATH=str(ROOT),
        )
        full.update(env or {})
        log = tmp_path / f"cuewrap-{terminal}-{len(started)}.log"
        inner = f"cd {shlex.quote(str(pi_home.cwd))} && " + command.replace("{LOG}", str(log))
        name = f"cw{terminal}{len(started)}"
        row = ROWS.get(terminal)
        if terminal == "foot":  # a Wayland terminal: in weston, a window of the X display
            runtime = tmp_path / "xdg-runtime"
            runtime.mkdir(mode=0o700, exist_ok=True)
            full.update(XDG_RUNTIME_DIR=str(runtime), WAYLAND_DISPLAY="wl-cuewrap")
            weston = subprocess.Popen(
                ["weston", "--backend=x11-backend.so", "--shell=kiosk-shell.so",
                 "--socket=wl-cuewrap", "--idle-time=0",
                 "--width=1000", "--height=700"],
                env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            started.append(weston)
            wait_until((runtime / "wl-cuewrap").exists, 20, "weston's socket")
            argv = ["foot", "--app-id", name, "bash", "-c", inner]
            wid = _window(full, "weston-1", weston)
        else:
            assert row is not None, f"no row for {terminal} in tests/termkinds.py"
            need_terminal(row)
            full.update(row.env)
            argv = row.argv(name, inner)
            if terminal in ("xterm", "kitty") and options:  # their own options, before -e
                argv = [argv[0], *options, *argv[1:]]
            if row.server:  # e.g. gnome-terminal-server, on the private bus
                with open(tmp_path / f"{name}-server.stderr", "wb") as err:
                    server = subprocess.Popen(row.server, env=full, stdout=subprocess.DEVNULL,
                                              stderr=err)  # fmt: skip
                started.append(server)
                wait_until(lambda: _on_bus(full, row.server[-1]), 20, f"{row.server[0]} on the bus")
        with open(tmp_path / f"{name}.stderr", "wb") as err:  # the terminal's own messages
            proc = subprocess.Popen(argv, env=full, stdout=subprocess.DEVNULL, stderr=err)
        started.append(proc)
        if terminal != "foot":
            wid = _window(full, (row.instance if row else "") or name, proc)
        return Term(full, proc, wid, log, sink_wid, wayland=terminal == "foot")

    yield make
    for p in reversed(started):
        stop(p)


def cuewrap_pi(*args: str) -> str:
    cmd = [sys.executable, "-m", "cuewrap", *args, "--log", "{LOG}", "pi", "-e", str(TEST_EXT)]
    return shlex.join(cmd).replace("'{LOG}'", "{LOG}")


def ready(t: Term) -> dict[str, Any]:
    """Pi is up under cuewrap and the terminal's answers are in: the answers record."""
    answers: dict[str, Any] = wait_until(
        lambda: next(iter(t.records("terminal_answers")), None), 30, "the terminal's answers",
        detail=lambda: str([r.get("kind") for r in t.records()]))  # fmt: skip
    wait_until(lambda: any(r.get("type") == "BridgeHello" for r in t.records("fact")),
               30, "Pi's bridge hello")  # fmt: skip

    # a new window may have the focus already (no window manager): away, then back, so the
    # terminal reports a change whichever it was (again each second until it has: weston may
    # take a quick away-and-back as no change)
    def focused() -> bool:
        if t.presence()[-1:] == ["focused"]:
            return True
        x(t.env, "xdotool", "windowfocus", "--sync", t.sink)
        x(t.env, "xdotool", "windowfocus", "--sync", t.wid)
        if t.wayland:  # weston gives its keyboard to the surface clicked
            x(t.env, "xdotool", "mousemove", "--window", t.wid, "200", "200", "click", "1")
        return False

    wait_until(focused, 15, "the terminal's focus report", interval=1.0,
               detail=lambda: f"presence facts: {t.presence()}")  # fmt: skip
    return answers


def run_one_cue(t: Term, fakemodel: FakeModel) -> dict[str, Any]:
    """The user sends a prompt in the focused window, leaves while it runs; it finishes
    while away: the cue record."""
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}), text("all done"))
    t.type("run the tool")
    t.key("Return")
    wait_until(lambda: t.records("run"), 15, "the run started")
    t.focus(False)
    cue: dict[str, Any] = wait_until(
        lambda: next(iter(t.records("cue")), None), 30, "the finished cue",
        detail=lambda: str([r.get("kind") for r in t.records()][-30:]))  # fmt: skip
    return cue


def quit_pi(t: Term) -> None:
    """``/quit`` typed into the focused terminal."""
    assert t.presence()[-1:] == ["focused"]
    t.type("/quit")
    t.key("Return")
    # generous: a loaded machine (the suite's other workers) slows the window's key events
    wait_until(lambda: t.records("child_exit"), 30, "Pi to exit")
