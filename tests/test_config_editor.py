"""``cuewrap config`` (the interactive editor) driven as a user would, in a real PTY (80×24):
change a bool, a number and a command line, see an invalid value refused in place, save; the
file keeps the user's comment and other keys; Ctrl+C leaves the file and the terminal as they
were; an environment override is shown with its source."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pirig import PiSession
from waiting import wait_until

from cuewrap.config import KEYS, load_settings

pytestmark = pytest.mark.pty

BEFORE = """\
# my cuewrap settings: written by hand
[privacy]
body = "none"  # never more than the status
"""
ROW = {spec.name: i for i, spec in enumerate(KEYS)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".config" / "cuewrap").mkdir(parents=True)
    (h / ".config" / "cuewrap" / "config.toml").write_text(BEFORE)
    return h


def cfg(home: Path) -> Path:
    return home / ".config" / "cuewrap" / "config.toml"


def start(home: Path, tmp_path: Path) -> PiSession:
    """The editor inside a shell that records ``stty -g`` before and after it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "XDG_", "TMUX"))}
    env.pop("DISPLAY", None)
    env.update(HOME=str(home), TERM="xterm-256color", CUEWRAP_NOTIFY_TERMINAL="osc9")
    script = (
        f"stty -g > {tmp_path}/stty.before; {sys.executable} -m cuewrap config;"
        f" echo editor-exit=$?; stty -g > {tmp_path}/stty.after"
    )
    s = PiSession(["bash", "--norc", "-c", script], env=env, cwd=tmp_path, dimensions=(24, 80))
    s.wait_for_screen(r"cuewrap config — ")
    return s


def wait_text(s: PiSession, text: str, timeout: float = 10.0) -> None:
    """Wait for ``text`` on the screen, also when it wraps from one row to the next."""
    wait_until(lambda: text in s.screen_text.replace("\n", ""), timeout,
               f"{text!r} on the screen", detail=lambda: s.screen_text)  # fmt: skip


def go(s: PiSession, name: str, at: list[int]) -> None:
    """Move the selection from row ``at[0]`` to ``name``'s row."""
    step = ROW[name] - at[0]
    s.send(("\x1b[B" if step > 0 else "\x1b[A") * abs(step))
    at[0] = ROW[name]
    s.wait_for_screen(rf"^ {name}: ")  # the help line follows the selection


def test_edit_refuse_save_keeps_comments_and_restores_the_terminal(
    home: Path, tmp_path: Path
) -> None:
    s = start(home, tmp_path)
    at = [0]
    # the environment override, shown with its source
    s.wait_for_screen(r"notify\.terminal\s+osc9\s+env CUEWRAP_NOTIFY_TERMINAL")
    go(s, "notify.bell", at)
    s.send("\r")
    s.wait_for_screen(r"notify\.bell\s+true\s+file\*")
    go(s, "presence.idle_after", at)
    s.send("\r")
    s.wait_for_screen(r"^presence\.idle_after = 60")
    s.send("\x15soon")  # Ctrl+U clears the line
    s.wait_for_screen(r"presence\.idle_after must be a number of seconds")
    s.send("\r")  # refused in place: the line stays open
    s.wait_for_screen(r"refused: presence\.idle_after must be a number")
    assert "presence.idle_after = soon" in s.screen_text
    s.send("\x15120")
    s.wait_for_screen(r"ok: Enter keeps it")
    s.send("\r")
    s.wait_for_screen(r"presence\.idle_after\s+120\s+file\*")
    go(s, "keep_awake.command", at)
    s.send("\r")
    s.wait_for_screen(r"^keep_awake\.command =")
    s.send("\x15systemd-inhibit --what=idle sleep 'inf'")
    s.wait_for_screen(r"ok: Enter keeps it")
    s.send("\r")
    s.wait_for_screen(r"keep_awake\.command\s+systemd-inhibit -…\s+file\*")
    assert cfg(home).read_text() == BEFORE  # nothing written before s
    s.send("s")
    s.wait_for_screen(r"saved to ")
    s.send("q")
    s.wait_for_output(rb"settings saved to ")
    s.wait_for_output(rb"editor-exit=0")
    assert s.wait_exit() == 0
    text = cfg(home).read_text()
    assert text.startswith(BEFORE)  # the comment, the unrelated key and its comment
    settings = load_settings(str(cfg(home)), {}, {})
    assert settings.notify.bell is True
    assert settings.presence.idle_after == 120.0
    assert settings.keep_awake.command == ("systemd-inhibit", "--what=idle", "sleep", "inf")
    assert "terminal" not in text  # the environment's value is not written to the file
    assert (tmp_path / "stty.before").read_text() == (tmp_path / "stty.after").read_text()
    assert b"\x1b[?1049l" in s.raw_output  # the alternate screen was left


def test_ctrl_c_leaves_the_file_and_the_terminal_unchanged(home: Path, tmp_path: Path) -> None:
    before = cfg(home).read_bytes()
    s = start(home, tmp_path)
    at = [0]
    go(s, "notify.bell", at)
    s.send(" ")
    s.wait_for_screen(r"notify\.bell\s+true\s+file\*")
    go(s, "presence.idle_after", at)
    s.send("\r\x1590")  # Ctrl+C in the middle of an edit
    s.wait_for_screen(r"^presence\.idle_after = 90")
    s.send("\x03")
    s.wait_for_output(rb"interrupted, the file is unchanged")
    s.wait_for_output(rb"editor-exit=130")
    assert s.wait_exit() == 0
    assert cfg(home).read_bytes() == before
    assert (tmp_path / "stty.before").read_text() == (tmp_path / "stty.after").read_text()
    tail = s.raw_output.rsplit(b"interrupted", 1)[0]
    assert tail.rfind(b"\x1b[?1049l") > tail.rfind(b"\x1b[?1049h")  # main screen back
    assert tail.rfind(b"\x1b[?25h") > tail.rfind(b"\x1b[?25l")  # cursor shown


def test_quit_with_unsaved_changes_asks_once(home: Path, tmp_path: Path) -> None:
    s = start(home, tmp_path)
    s.send("\r")  # cues.enabled: true -> false
    s.wait_for_screen(r"cues\.enabled\s+false\s+file\*")
    s.send("q")
    s.wait_for_screen(r"unsaved changes: s saves them, q again leaves without saving")
    s.send("q")
    s.wait_for_output(rb"changes discarded, the file is unchanged")
    assert s.wait_exit() == 0
    assert cfg(home).read_text() == BEFORE


def test_test_notification_says_what_happened(home: Path, tmp_path: Path) -> None:
    s = start(home, tmp_path)
    s.send("t")
    s.wait_for_output(rb"\x1b]9;Pi")  # the notification itself, over the chosen protocol
    # what each channel did, as a reminder's delivery records say it
    wait_text(s, "test: terminal: requested (osc9) → unconfirmable (terminal OSC")
    # the whole outcome is readable in 80x24, and every key is still listed
    wait_text(s, "desktop: off (no graphical session (neither DISPLAY nor WAYLAND_DISPLAY")
    wait_text(s, "WAYLAND_DISPLAY is set))")
    # every key is still there: on the screen, or a few rows down as the cursor goes
    shown = {spec.name for spec in KEYS if f" {spec.name} " in s.screen_text}
    assert len(shown) >= 14, s.screen_text  # a screenful (the phone's keys further down)
    s.send("\x1b[B" * len(KEYS))
    for spec in KEYS[len(shown) :]:
        wait_text(s, f" {spec.name} ")
    s.send("q")
    assert s.wait_exit() == 0


def test_refused_without_a_terminal(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUEWRAP_")}
    env["HOME"] = str(home)
    r = subprocess.run(
        [sys.executable, "-m", "cuewrap", "config"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=30,
    )  # fmt: skip
    assert r.returncode == 2
    assert r.stderr == (
        "cuewrap: config: the editor needs a terminal on stdin and stdout"
        " (scripted: cuewrap config list|get|set|unset|path)\n"
    )


def test_sigterm_leaves_like_ctrl_c(home: Path, tmp_path: Path) -> None:
    before = cfg(home).read_bytes()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "XDG_", "TMUX"))}
    env.update(HOME=str(home), TERM="xterm-256color")
    s = PiSession([sys.executable, "-m", "cuewrap", "config"], env=env, cwd=tmp_path,
                  dimensions=(24, 80))  # fmt: skip
    s.wait_for_screen(r"cuewrap config — ")
    s.send(" ")  # an unsaved change
    s.wait_for_screen(r"cues\.enabled\s+false\s+file\*")
    os.kill(s.pid, signal.SIGTERM)
    s.wait_for_output(rb"interrupted, the file is unchanged")
    assert s.wait_exit() == 130
    assert cfg(home).read_bytes() == before
    tail = s.raw_output.rsplit(b"interrupted", 1)[0]
    assert tail.rfind(b"\x1b[?1049l") > tail.rfind(b"\x1b[?1049h")
