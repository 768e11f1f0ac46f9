"""``cuewrap doctor``: the report under controlled environments, inside a real private tmux
server, and the interactive ``--check`` driven through a real PTY."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from shared import finish_in_shell, in_shell
from waiting import wait_until

from cuewrap.doctor.check import CTRL_C, ESCAPE, _tokens

PY = sys.executable
ROOT = Path(__file__).resolve().parent.parent
TEST_TI = ROOT / "terminfo" / "cuewrap-test.ti"


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: no user config, no terminal markers, no session bus."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(ROOT),
    }


def doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cuewrap", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def line(out: str, start: str) -> str:
    """The report line that starts (after indentation) with ``start``."""
    for text in out.splitlines():
        if text.strip().startswith(start):
            return " ".join(text.split())
    raise AssertionError(f"no line starting with {start!r} in:\n{out}")


# -- the report -----------------------------------------------------------------------------------
@pytest.mark.pty
def test_kitty_is_identified_and_gets_osc99_with_the_reason(base_env: dict[str, str]) -> None:
    r = doctor(dict(base_env, KITTY_WINDOW_ID="7"), "doctor")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "KITTY_WINDOW_ID=7" in line(r.stdout, "environment markers:")
    assert "kitty (KITTY_WINDOW_ID is set)" in line(r.stdout, "identified:")
    channel = line(r.stdout, "terminal notification")
    assert channel.startswith("terminal notification yes osc99: kitty (KITTY_WINDOW_ID is set)")
    assert "OSC 99" in channel


@pytest.mark.pty
def test_ssh_turns_desktop_off_with_the_reason(base_env: dict[str, str]) -> None:
    env = dict(base_env, DISPLAY=":0", SSH_CONNECTION="10.0.0.1 50000 10.0.0.2 22")
    r = doctor(env, "doctor")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "desktop").startswith("desktop no over SSH (SSH_CONNECTION is set)")
    # the address itself is not printed (a report may be pasted into a bug report)
    assert "10.0.0.1" not in r.stdout
    r = doctor(dict(base_env, DISPLAY=":0"), "doctor")
    assert line(r.stdout, "desktop").startswith("desktop yes local graphical session (DISPLAY=:0)")


@pytest.mark.pty
def test_kitty_one_desktop_popup_its_own_with_the_reason(base_env: dict[str, str]) -> None:
    env = dict(base_env, DISPLAY=":0", TERM="xterm-kitty", KITTY_WINDOW_ID="1")
    r = doctor(env, "doctor")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "terminal notification").startswith("terminal notification yes osc99")
    assert line(r.stdout, "desktop").startswith("desktop no not sent: one popup per cue")
    popup = line(r.stdout, "desktop popup:")
    assert popup.startswith("desktop popup: the terminal's own (a click raises"), popup
    assert "kitty shows its own notifications on the desktop" in popup
    closing = line(r.stdout, "closing the terminal's notification")
    assert closing.startswith("closing the terminal's notification on return: no"), closing


@pytest.mark.pty
def test_xterm_one_desktop_popup_cuewraps_with_the_reason(base_env: dict[str, str]) -> None:
    env = dict(base_env, DISPLAY=":0", XTERM_VERSION="XTerm(379)")
    r = doctor(env, "doctor")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "terminal notification").startswith(
        "terminal notification no osc777 not sent: one popup per cue"
    )
    assert line(r.stdout, "desktop").startswith("desktop yes local graphical session")
    popup = line(r.stdout, "desktop popup:")
    assert popup.startswith("desktop popup: cuewrap's desktop notification:"), popup
    assert "xterm shows no desktop notification of its own" in popup


@pytest.mark.pty
def test_both_set_on_in_kitty_says_it_duplicates(base_env: dict[str, str]) -> None:
    env = dict(
        base_env,
        DISPLAY=":0",
        KITTY_WINDOW_ID="1",
        CUEWRAP_NOTIFY_TERMINAL="osc99",
        CUEWRAP_NOTIFY_DESKTOP="on",
    )
    r = doctor(env, "doctor")
    assert line(r.stdout, "desktop popup:").startswith("desktop popup: both")
    assert line(r.stdout, "duplicates:").startswith("duplicates: notify.terminal and notify")


@pytest.mark.pty
def test_env_var_origin_is_shown(base_env: dict[str, str]) -> None:
    r = doctor(dict(base_env, CUEWRAP_NOTIFY_TERMINAL="off"), "doctor")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "notify.terminal") == "notify.terminal off env CUEWRAP_NOTIFY_TERMINAL"
    assert line(r.stdout, "notify.desktop") == "notify.desktop auto default"
    assert line(r.stdout, "terminal notification") == (
        "terminal notification no notify.terminal is off"
    )


@pytest.mark.pty
def test_file_and_flag_origins(base_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[notify]\nbell = true\n[keep_awake]\ncommand = ["sleep", "9"]\n')
    r = doctor(base_env, "--no-cues", "--config", str(config), "doctor", "--keep-awake")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "notify.bell") == f"notify.bell true file {config}"
    assert line(r.stdout, "cues.enabled") == "cues.enabled false flag --no-cues"
    assert line(r.stdout, "keep_awake.enabled") == "keep_awake.enabled true flag --keep-awake"
    assert line(r.stdout, "keep_awake.command") == f"keep_awake.command sleep 9 file {config}"
    assert "cues.enabled = false" in line(r.stdout, "cues:")
    assert line(r.stdout, "bell").startswith("bell yes notify.bell = true")
    assert line(r.stdout, "keep-awake").startswith("keep-awake yes")
    assert f"Settings (config file: {config})" in r.stdout


@pytest.mark.pty
def test_default_channels_and_dumb_terminal(base_env: dict[str, str]) -> None:
    r = doctor(base_env, "doctor")
    assert line(r.stdout, "title marks").startswith("title marks yes notify.title_marks = true")
    assert line(r.stdout, "bell") == "bell no notify.bell = false (default)"
    assert line(r.stdout, "keep-awake").startswith("keep-awake no keep_awake.enabled = false")
    assert line(r.stdout, "desktop").startswith("desktop no no graphical session")
    # what `cuewrap config list` says: notify.command has no platform default
    assert line(r.stdout, "notify.command") == "notify.command (none) default"
    assert line(r.stdout, "keep_awake.command") == "keep_awake.command (platform default) default"
    assert not re.search(r"^tmux$", r.stdout, re.M)  # no tmux section outside tmux
    r = doctor(dict(base_env, TERM="dumb"), "doctor")
    assert r.returncode == 0
    assert "cues: off: TERM is dumb" in r.stdout
    assert "title marks" not in r.stdout


@pytest.mark.pty
@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"file": "[notify]\nbell = 3\n"}, "notify.bell must be true or false"),
        ({"file": "[nope]\n"}, "unknown section [nope]"),
        ({"CUEWRAP_NOTIFY_BELL": "maybe"}, "CUEWRAP_NOTIFY_BELL must be one of"),
        ({"CUEWRAP_NOTIFY_NOPE": "1"}, "unknown setting CUEWRAP_NOTIFY_NOPE"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(
    base_env: dict[str, str], tmp_path: Path, setup: dict[str, str], message: str
) -> None:
    env = dict(base_env)
    args = ["doctor"]
    if "file" in setup:
        config = tmp_path / "bad.toml"
        config.write_text(setup["file"])
        args = ["--config", str(config), "doctor"]
    else:
        env.update(setup)
    r = doctor(env, *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("cuewrap: config: "), r.stderr
    assert message in r.stderr


@pytest.mark.pty
def test_usage(base_env: dict[str, str]) -> None:
    r = doctor(base_env, "doctor", "--help")
    assert r.returncode == 0 and "--check" in r.stdout
    r = doctor(base_env, "doctor", "--bogus")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "--bogus" in r.stderr
    # --check without a terminal: one clear line, exit 2, no report
    r = doctor(base_env, "doctor", "--check")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "must both be a terminal" in r.stderr


@pytest.mark.pty
def test_terminfo_capabilities_are_reported(base_env: dict[str, str], tmp_path: Path) -> None:
    if shutil.which("tic") is None:
        pytest.skip("tic (ncurses) is not installed")
    db = tmp_path / "terminfo"
    subprocess.run(["tic", "-x", "-o", str(db), str(TEST_TI)], check=True, timeout=30)
    r = doctor(dict(base_env, TERMINFO=str(db), TERM="cuewrap-test"), "doctor")
    assert r.returncode == 0, r.stderr
    assert line(r.stdout, "terminfo cuewrap-test:") == (
        "terminfo cuewrap-test: focus fe/fd yes · focus keys kxIN/kxOUT yes"
        " · title tsl/hs yes · XT yes"
    )
    r = doctor(dict(base_env, TERMINFO=str(db), TERM="vt100"), "doctor")
    assert "focus fe/fd no" in line(r.stdout, "terminfo vt100:")
    r = doctor(dict(base_env, TERMINFO=str(db), TERM="no-such-term-xyz"), "doctor")
    assert r.returncode == 0
    assert "not available" in line(r.stdout, "terminfo no-such-term-xyz:")


# -- inside a real tmux ---------------------------------------------------------------------------
@pytest.fixture
def tmux(base_env: dict[str, str]) -> Iterator[list[str]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    base = ["tmux", "-L", f"cuewrap-doctor-{uuid.uuid4().hex[:10]}", "-f", "/dev/null"]
    subprocess.run(
        [*base, "new-session", "-d", "-s", "t", "-x", "200", "-y", "50", "sleep 120"],
        env=base_env,
        check=True,
        timeout=10,
    )
    try:
        yield base
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, timeout=10)


def doctor_in_tmux(base: list[str], out: Path, *args: str) -> str:
    doctor = shlex.join([PY, "-m", "cuewrap", "doctor", *args])
    cmd = f"{doctor} > {out} 2>&1; echo EXIT=$? >> {out}"
    subprocess.run([*base, "new-window", "-t", "t:", cmd], check=True, timeout=10)
    wait_until(lambda: out.exists() and "EXIT=" in out.read_text(), 20,
               "doctor to finish in tmux",
               detail=lambda: out.read_text() if out.exists() else "")  # fmt: skip
    return out.read_text()


@pytest.mark.tmux
@pytest.mark.parametrize("passthrough", ["on", "off"])
def test_tmux_passthrough_state_is_reported(
    tmux: list[str], tmp_path: Path, passthrough: str
) -> None:
    subprocess.run([*tmux, "set", "-g", "allow-passthrough", passthrough], check=True, timeout=10)
    subprocess.run([*tmux, "set", "-s", "focus-events", "on"], check=True, timeout=10)
    out = doctor_in_tmux(tmux, tmp_path / "out.txt")
    assert "EXIT=0" in out, out
    assert re.search(r"^tmux$", out, re.M), out
    assert re.search(r"version \d+\.\d+", line(out, "version")), out
    assert "client terminal: none attached" in out
    assert line(out, "focus-events:") == "focus-events: on"
    assert "set-titles: off" in out
    channel = line(out, "terminal notification")
    if passthrough == "on":
        assert line(out, "allow-passthrough:").startswith("allow-passthrough: on")
        assert channel.startswith("terminal notification yes osc777 in tmux passthrough")
        assert "allow-passthrough is on" in channel
    else:
        assert line(out, "allow-passthrough:") == (
            "allow-passthrough: off: tmux drops terminal notifications"
            " (tmux set -g allow-passthrough on)"
        )
        assert channel.startswith("terminal notification no inside tmux with allow-passthrough off")


@pytest.mark.tmux
def test_tmux_focus_events_off_is_explained(tmux: list[str], tmp_path: Path) -> None:
    subprocess.run([*tmux, "set", "-s", "focus-events", "off"], check=True, timeout=10)
    out = doctor_in_tmux(tmux, tmp_path / "out.txt")
    assert "focus-events: off: tmux sends no focus reports to the pane" in out, out


@pytest.mark.tmux
def test_tmux_advice_names_the_program_not_pi(tmux: list[str], tmp_path: Path) -> None:
    """doctor -- COMMAND in tmux: what to change is about that program's pane."""
    subprocess.run([*tmux, "set", "-s", "focus-events", "off"], check=True, timeout=10)
    subprocess.run([*tmux, "set", "-g", "allow-passthrough", "off"], check=True, timeout=10)
    out = doctor_in_tmux(tmux, tmp_path / "out.txt", "--", "codex")
    advice = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("to improve:")]
    assert len(advice) == 2, out
    assert "tmux does not tell Codex's pane when your terminal loses focus" in advice[0]
    assert advice[1].startswith("to improve: tmux drops terminal notifications from Codex's pane")
    out = doctor_in_tmux(tmux, tmp_path / "pi.txt")
    assert "tmux drops terminal notifications from Pi's pane" in out, out


# -- the interactive check ------------------------------------------------------------------------
def check_in_shell(env: dict[str, str], *args: str) -> pexpect.spawn:
    """``cuewrap doctor --check`` inside sh, with the tty settings before and after."""
    return in_shell([PY, "-m", "cuewrap", *args, "doctor", "--check"], env, (24, 200))


def check_ended(p: pexpect.spawn, rc: int, said: bytes) -> bytes:
    """The check ended with exit status ``rc``, having said ``said``, the terminal restored;
    all its output."""
    status, out = finish_in_shell(p)
    assert status == rc, out
    assert said in out
    assert_restored(out)
    return out


def check_waiting(env: dict[str, str]) -> pexpect.spawn:
    """``check_in_shell``, up to where the check waits for the user to leave and come back."""
    p = check_in_shell(env)
    p.expect("come back")
    return p


def assert_restored(out: bytes) -> None:
    """Focus reporting off, then the user's title popped, after everything else."""
    tail = out[out.rindex(b"\x1b[?1004h") :]
    assert b"\x1b[?1004l\x1b[23;0t" in tail, tail


@pytest.mark.pty
def test_check_focus_works_and_notification_seen(base_env: dict[str, str]) -> None:
    p = check_in_shell(dict(base_env, KITTY_WINDOW_ID="1"))
    p.expect("come back")
    p.send("\x1b[O")
    p.expect("CSI O arrived")
    p.send("\x1b[I")
    p.expect("focus reports work")
    p.expect(r"Did you see the test notification\? \[y/n\] ")
    p.send("y")
    p.expect(r"Did the title show '\[\?\] cuewrap doctor'\? \[y/n\] ")
    p.send("y")
    rc, out = finish_in_shell(p)
    assert rc == 0, out
    assert_restored(out)
    # the test notification went out over kitty's protocol, then the mark, then the title back
    assert re.search(
        rb"\x1b\]99;i=cuewrap-0:d=0:a=focus:p=title;Pi\x1b\\.*\x1b\]2;\[\?\] cuewrap doctor\x1b\\"
        rb"\x1b\[23;0t\x1b\[22;0t",
        out,
    ), out
    assert b"focus reports: working (CSI O and CSI I arrived)" in out
    assert b"terminal notification: seen (osc99)" in out


def _vte_check(env: dict[str, str], seen: str, use: str | None) -> bytes:
    """``doctor --check`` in a VTE terminal (``VTE_VERSION``: shows OSC 777 only when patched):
    away and back, the test notification ``seen`` (y/n), its own popup chosen or not."""
    p = check_in_shell(dict(env, VTE_VERSION="7006"))
    p.expect("come back")
    p.send("\x1b[O")
    p.expect("you left")
    p.send("\x1b[I")
    p.expect("focus reports work")
    p.expect(r"Sending a test notification \(osc777\)")
    p.expect(r"Did you see the test notification\? \[y/n\] ")
    p.send(seen)
    if use is not None:
        p.expect(r"use its popup instead of cuewrap's from now on .*\[y/n\] ")
        p.send(use)
    p.expect(r"Did the title show .*\[y/n\] ")
    p.send("y")
    rc, out = finish_in_shell(p)
    assert_restored(out)
    assert rc == 0, out
    return out


def _config(env: dict[str, str]) -> str:
    path = Path(env["HOME"]) / ".config" / "cuewrap" / "config.toml"
    return path.read_text() if path.exists() else ""


@pytest.mark.pty
def test_check_settles_a_patched_vte_with_one_key(base_env: dict[str, str]) -> None:
    """A VTE that showed the test notification (a patched one): one key makes its popup the
    one a cue gives, saved; the next session's plan then sends OSC 777 and no D-Bus popup."""
    out = _vte_check(base_env, "y", "y")
    assert b"its own popup from now on: saved notify.terminal = osc777" in out, out
    text = _config(base_env)
    assert 'terminal = "osc777"' in text and 'desktop = "off"' in text, text
    r = doctor(dict(base_env, VTE_VERSION="7006"), "doctor")
    assert r.returncode == 0, r.stderr
    assert "osc777" in r.stdout, r.stdout


@pytest.mark.pty
@pytest.mark.parametrize(("seen", "use"), [("n", None), ("y", "n")])
def test_check_leaves_an_unpatched_vte_on_cuewraps_popup(
    base_env: dict[str, str], seen: str, use: str | None
) -> None:
    """Not seen (upstream VTE ignores OSC 777), or seen but not chosen: nothing is saved,
    cuewrap's own popup stays the one; the summary says which."""
    out = _vte_check(base_env, seen, use)
    assert _config(base_env) == ""
    if seen == "n":
        assert b"does not show its own; cuewrap's popup is the one a cue gives" in out, out
    else:
        assert b"its own popup: not chosen; cuewrap's own stays" in out, out


@pytest.mark.pty
def test_check_no_notification_protocol_and_answer_no(base_env: dict[str, str]) -> None:
    env = dict(base_env, CUEWRAP_NOTIFY_TERMINAL="off")
    p = check_in_shell(env)
    p.expect("come back")
    # an initial CSI I (the terminal's state when reporting is turned on) is not "back"
    p.send("\x1b[I")
    p.expect(r"CSI I arrived \(focused\)")
    p.send("\x1b[O")
    p.expect("you left")
    p.send("\x1b[I")
    p.expect("focus reports work")
    p.expect(r"No terminal notification \(notify.terminal is off\)")
    p.expect(r"Did the title show .*\[y/n\] ")
    p.send("n")
    rc, out = finish_in_shell(p)
    assert rc == 1, out
    assert b"Did you see the test notification" not in out
    assert b"terminal notification: not sent (notify.terminal is off)" in out
    assert b"title mark: not seen" in out
    assert_restored(out)


@pytest.mark.pty
@pytest.mark.parametrize("when", ["focus", "question"])
def test_check_ctrl_c_restores_the_terminal(base_env: dict[str, str], when: str) -> None:
    p = check_waiting(base_env)
    if when == "question":
        p.send("\x1b[O")
        p.expect("you left")
        p.send("\x1b[I")
        p.expect(r"\[y/n\] ")
    p.send("\x03")
    check_ended(p, 130, b"check interrupted (terminal restored)")


@pytest.mark.pty
@pytest.mark.parametrize("key", ["q", "\x1b"])
def test_check_q_or_escape_aborts(base_env: dict[str, str], key: str) -> None:
    p = check_waiting(base_env)
    p.send(key)
    check_ended(p, 1, b"check aborted (terminal restored)")


@pytest.mark.pty
def test_check_sigterm_restores_the_terminal(base_env: dict[str, str]) -> None:
    p = check_waiting(base_env)
    children = Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()
    assert len(children) == 1
    os.kill(int(children[0]), signal.SIGTERM)  # the doctor process this test started
    rc, out = finish_in_shell(p)
    assert rc == 128 + signal.SIGTERM, out
    assert_restored(out)


@pytest.mark.pty
def test_check_internal_error_restores_the_terminal(base_env: dict[str, str]) -> None:
    """An exception inside the check: one line, exit 1, terminal restored."""
    code = (
        "import sys, cuewrap.doctor.check as d\n"
        "def boom(self, timeout): raise RuntimeError('boom')\n"
        "d._Keys.poll = boom\n"
        "from cuewrap.cli import main\n"
        "sys.exit(main(['doctor', '--check']))\n"
    )
    script = (
        f'echo "B=$(stty -g)"; {shlex.join([PY, "-c", code])}; echo "RC=$?"; echo "A=$(stty -g)"'
    )
    p = pexpect.spawn("sh", ["-c", script], env=base_env, timeout=10, dimensions=(24, 200))
    p.logfile_read = io.BytesIO()
    check_ended(p, 1, b"cuewrap: doctor: check failed: RuntimeError: boom (terminal restored)")


@pytest.mark.pty
def test_report_into_a_closed_pipe(base_env: dict[str, str]) -> None:
    r = subprocess.run(
        # the reader is gone before the report is written (EPIPE)
        f"({shlex.join([PY, '-m', 'cuewrap', 'doctor'])}; echo rc=$? >&2) | true",
        shell=True,
        executable="/bin/sh",
        env=base_env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.stderr == "rc=0\n"


@pytest.mark.unit
def test_tokens() -> None:
    assert _tokens(b"yN\x03") == ["y", "n", CTRL_C]
    assert _tokens(b"\x1b") == [ESCAPE]
    # arrow keys (CSI and SS3) and Alt+q are not Escape, nor q
    assert _tokens(b"\x1b[A\x1bOB\x1bq\x1b[1;5Cy") == ["y"]


@pytest.mark.tmux
def test_ssh_and_tmux_combination_says_what_happens_and_what_to_change(
    tmux: list[str], tmp_path: Path
) -> None:
    """Over SSH, inside tmux with its defaults: what happens at each layer, and the two tmux
    settings that would help, each named once."""
    subprocess.run(
        [*tmux, "set-environment", "-t", "t", "SSH_CONNECTION", "192.0.2.1 5 192.0.2.2 22"],
        check=True,
        timeout=10,
    )
    out = doctor_in_tmux(tmux, tmp_path / "out.txt")
    assert "EXIT=0" in out, out
    where = out.split("\nWhere cuewrap runs\n", 1)[1]
    assert "over SSH: terminal notifications travel in-band" in where
    assert "desktop notifications are off" in where
    assert re.search(r"inside tmux \d+\.\d+\w*: cuewrap watches window, pane and session", where)
    improve = [ln.strip() for ln in where.splitlines() if ln.strip().startswith("to improve:")]
    assert len(improve) == 2, where
    assert improve[0].endswith(": set -g focus-events on (in ~/.tmux.conf)")
    assert improve[1].endswith(": set -g allow-passthrough on (in ~/.tmux.conf)")
    # with both set, nothing left to change
    subprocess.run([*tmux, "set", "-s", "focus-events", "on"], check=True, timeout=10)
    subprocess.run([*tmux, "set", "-g", "allow-passthrough", "on"], check=True, timeout=10)
    out = doctor_in_tmux(tmux, tmp_path / "out2.txt")
    where = out.split("\nWhere cuewrap runs\n", 1)[1]
    assert "to improve" not in where and "nothing to change here" in where, where


@pytest.mark.pty
@pytest.mark.parametrize(
    ("key", "default", "other"),
    [("guard.clipboard", "user", "block"), ("guard.sequences", "own", "allow")],
)
def test_guard_settings_are_shown(
    base_env: dict[str, str], key: str, default: str, other: str
) -> None:
    var = "CUEWRAP_" + key.replace(".", "_").upper()
    r = doctor(base_env, "doctor")
    assert line(r.stdout, key) == f"{key} {default} default"
    r = doctor(dict(base_env, **{var: other}), "doctor")
    assert line(r.stdout, key) == f"{key} {other} env {var}"
