"""cuewrap as a user runs it: a real PTY around ``cuewrap -- <small python child>``."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from launch import default_signals
from procstat import wakeups
from shared import finish_in_shell, in_shell

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "ptychild.py")
PY = sys.executable


def cuewrap_argv(*child_args: str, log: Path | None = None) -> list[str]:
    argv = [PY, "-m", "cuewrap"]
    if log is not None:
        argv += ["--log", str(log)]
    return [*argv, "--", PY, CHILD, *child_args]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["TERM"] = "xterm-256color"
    e.pop("TMUX", None)
    e.pop("CUEWRAP_LOG", None)
    return e


def spawn(*child_args: str, log: Path | None = None, **kw: object) -> pexpect.spawn:
    argv = cuewrap_argv(*child_args, log=log)
    return pexpect.spawn(argv[0], argv[1:], env=env(), timeout=10, dimensions=(24, 80),
                         preexec_fn=default_signals, **kw)  # fmt: skip


def received(p: pexpect.spawn, enough: Callable[[bytes], bool]) -> bytes:
    """What the input-echoing child reported receiving (its ``R<hex>`` lines), read until
    ``enough`` of it came."""
    got = b""
    while not enough(got):
        p.expect(rb"R([0-9a-f]+)\r\n")
        got += bytes.fromhex(p.match.group(1).decode())
    return got


def in_cuewrap_shell(*child_args: str, log: Path | None = None) -> pexpect.spawn:
    """Run cuewrap inside sh, printing the tty settings before and after and the exit status."""
    return in_shell(cuewrap_argv(*child_args, log=log), env())


def test_version_and_help() -> None:
    out = subprocess.run([PY, "-m", "cuewrap", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and re.fullmatch(r"cuewrap \d+\.\d+\.\d+\n", out.stdout)
    out = subprocess.run([PY, "-m", "cuewrap", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "cuewrap [OPTIONS] pi" in out.stdout


def test_missing_command_is_127_with_one_line() -> None:
    r = subprocess.run(
        [PY, "-m", "cuewrap", "--", "no-such-command-xyz"], capture_output=True, text=True
    )
    assert r.returncode == 127
    assert r.stderr.count("\n") == 1 and "no-such-command-xyz" in r.stderr
    e = env()
    e["PATH"] = "/nonexistent"
    r = subprocess.run([PY, "-m", "cuewrap", "pi"], capture_output=True, text=True, env=e)
    assert r.returncode == 127
    assert "pi: command not found" in r.stderr and "npm install" in r.stderr


def test_a_file_that_cannot_run_is_126_like_a_shell(tmp_path: Path) -> None:
    """Found but not runnable: the shell's words and status 126, not "command not found"."""
    text = tmp_path / "notes.txt"
    text.write_text("not a program\n")
    for target, why in ((text, "Permission denied"), (tmp_path, "Is a directory")):
        for stdin in (subprocess.DEVNULL, None):  # with and without the PTY guard holding
            r = subprocess.run([PY, "-m", "cuewrap", "--", str(target)], capture_output=True,
                               text=True, stdin=stdin)  # fmt: skip
            assert r.returncode == 126, r.stderr
            assert r.stderr == f"cuewrap: {target}: {why}\n"


def test_bad_usage_exits_2() -> None:
    r = subprocess.run([PY, "-m", "cuewrap", "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "--bogus" in r.stderr
    r = subprocess.run([PY, "-m", "cuewrap", "cat"], capture_output=True, text=True)
    assert r.returncode == 2 and "cuewrap -- cat" in r.stderr  # (ls is cuewrap's own now)
    r = subprocess.run([PY, "-m", "cuewrap", "ls", "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "--bogus" in r.stderr


def test_output_all_256_byte_values_unchanged() -> None:
    n = 400
    p = spawn("dump-bytes", str(n))
    p.expect(rb"\r\nEND\r\n")
    data = p.before
    # the host terminal sees cuewrap's own setup first (title push, focus on)
    start = data.index(bytes(range(256)))
    assert data[start:] == bytes(range(256)) * n
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


def test_streamed_output_gathered_arrives_intact_with_the_echo_between_frames() -> None:
    """A child streaming small frames (the relay lets them gather for a frame's time between
    relays) and a key typed meanwhile: every frame arrives, byte for byte and in order, and
    the child's echo of the key sits between two whole frames."""
    sys.path.insert(0, str(Path(CHILD).parent))
    from ptychild import stream_frame

    n = 600
    p = spawn("stream", str(n))
    p.logfile_read = io.BytesIO()
    p.expect("READY\r\n")
    p.expect(re.escape(stream_frame(100)))
    p.send(b"x")
    p.expect(rb"END\r\n", timeout=30)
    data = p.logfile_read.getvalue()
    body = data[data.index(b"READY\r\n") + 7 : data.rindex(b"END\r\n")]
    echo = b"E78\r\n"
    assert body.count(echo) == 1
    at = body.index(echo)
    rest = body[:at] + body[at + len(echo) :]
    assert rest == b"".join(stream_frame(i) for i in range(n))
    frame_len = len(stream_frame(0))
    assert at % frame_len == 0 and at >= 101 * frame_len  # between frames, after the key
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


@pytest.mark.performance
def test_streamed_output_gathers_longer_while_the_terminal_says_nobody_looks() -> None:
    """A performance test (docs/testing.md, "Performance tests").
    docs/design.md#unseen-output: a child streaming a frame every ~2 ms; per frame relayed,
    cuewrap wakes up far less often after the terminal reports its focus lost than before (a
    ratio within one run), and as often as before once the focus is back; every frame arrives
    intact and in order."""
    sys.path.insert(0, str(Path(CHILD).parent))
    from ptychild import stream_frame

    n = 2400
    p = spawn("stream", str(n))
    p.logfile_read = io.BytesIO()
    p.expect("READY\r\n")
    per_frame: list[float] = []
    marks = [(100, 700, b"\x1b[O"), (800, 1400, b"\x1b[I"), (1500, 2100, None)]
    for start, end, then in marks:
        p.expect(re.escape(stream_frame(start)), timeout=30)
        w0 = wakeups(p.pid)
        p.expect(re.escape(stream_frame(end)), timeout=30)
        per_frame.append((wakeups(p.pid) - w0) / (end - start))
        if then is not None:
            p.send(then)
    p.expect(rb"END\r\n", timeout=30)
    data = p.logfile_read.getvalue()
    body = data[data.index(b"READY\r\n") + 7 : data.rindex(b"END\r\n")]
    assert body == b"".join(stream_frame(i) for i in range(n))
    seen, unseen, back = per_frame
    assert unseen <= 0.6 * seen, per_frame
    assert back >= 1.5 * unseen, per_frame
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


def test_input_all_256_byte_values_unchanged() -> None:
    p = spawn("raw-echo")
    p.expect("READY")
    payload = bytes(b for b in range(256) if b != ord("q"))
    # ESC [ I / ESC [ O never occur here, so every byte must reach the child
    p.send(payload)
    # each report holds at least one byte
    assert received(p, lambda got: len(got) >= len(payload)) == payload
    p.send(b"q")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0


@pytest.mark.parametrize("code", [0, 3, 42])
def test_exit_status_propagated(code: int) -> None:
    p = in_cuewrap_shell("exit", str(code))
    p.expect("READY")
    p.sendline("")
    rc, _ = finish_in_shell(p)
    assert rc == code


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV, signal.SIGTERM])
def test_signal_death_is_128_plus_n(sig: int) -> None:
    p = in_cuewrap_shell("kill-self", str(int(sig)))
    p.expect("READY")
    p.sendline("")
    rc, out = finish_in_shell(p)
    assert rc == 128 + sig
    assert b"\x1b[?1004l" in out and b"\x1b[23;0t" in out


def test_resize_reaches_child() -> None:
    p = spawn("winch")
    p.expect(r"SIZE 24 80")
    p.setwinsize(30, 100)
    p.expect(r"SIZE 30 100")
    p.setwinsize(50, 200)
    p.expect(r"SIZE 50 200")
    p.terminate(force=True)


def test_focus_reports_swallowed_when_child_did_not_enable_1004(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    p = spawn("raw-echo", log=log)
    p.expect("READY")
    p.send(b"a\x1b[Ob\x1b[Ic")
    assert received(p, lambda got: b"c" in got) == b"abc"
    p.send(b"q")
    p.expect(pexpect.EOF)
    states = [
        r["presence"]
        for r in map(json.loads, log.read_text().splitlines())
        if r["kind"] == "presence"
    ]
    assert states == ["away", "focused"]


def test_focus_reports_delivered_in_one_write_when_child_enabled_1004() -> None:
    p = spawn("focus")
    p.expect("READY")
    p.send(b"\x1b[O")
    p.expect(rb"R([0-9a-f]+)\r\n")
    assert bytes.fromhex(p.match.group(1).decode()) == b"\x1b[O"
    p.send(b"\x1b[I")
    p.expect(rb"R([0-9a-f]+)\r\n")
    assert bytes.fromhex(p.match.group(1).decode()) == b"\x1b[I"
    p.send(b"q")
    p.expect(pexpect.EOF)


def test_lone_escape_reaches_child_promptly() -> None:
    p = spawn("raw-echo")
    p.expect("READY")
    t0 = time.monotonic()
    p.send(b"\x1b")
    p.expect(rb"R1b\r\n")
    assert time.monotonic() - t0 < 1.0
    p.send(b"q")
    p.expect(pexpect.EOF)


def test_focus_like_bytes_inside_bracketed_paste_are_data() -> None:
    p = spawn("raw-echo")
    p.expect("READY")
    pasted = b"\x1b[200~x\x1b[Oy\x1b[201~"
    p.send(pasted)
    assert received(p, lambda got: got.endswith(b"\x1b[201~")) == pasted
    p.send(b"q")
    p.expect(pexpect.EOF)


def test_child_dies_with_alt_screen_and_mouse_on_is_reset() -> None:
    p = in_cuewrap_shell("modes-die")
    p.expect("ALT")
    p.sendline("")
    rc, out = finish_in_shell(p)
    assert rc == 128 + signal.SIGKILL
    tail = out[out.index(b"ALT") :]
    for mode in (b"1049", b"1000", b"1002", b"1006", b"2004"):
        assert b"\x1b[?" + mode + b"l" in tail, mode
    assert b"\x1b[<" in tail  # kitty keyboard popped


def test_sigterm_to_cuewrap_is_forwarded_and_terminal_restored(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    cmd = shlex.join(cuewrap_argv("sleep"))
    # exec: the pid sh writes is cuewrap's own, and cuewrap owns the tty in the foreground
    script = f"echo $$ > {pidfile}; exec {cmd}"
    p = pexpect.spawn("sh", ["-c", script], env=env(), timeout=10, preexec_fn=default_signals)
    p.expect("READY")
    os.kill(int(pidfile.read_text()), signal.SIGTERM)
    p.expect(pexpect.EOF)
    p.close()
    assert p.signalstatus is None and p.exitstatus == 128 + signal.SIGTERM
    assert b"\x1b[?1004l" in p.before and b"\x1b[23;0t" in p.before


def test_sighup_and_sigint_to_cuewrap(tmp_path: Path) -> None:
    """The signal reaches the child, which dies of it (not of the SIGKILL after the grace):
    whatever dispositions the test run inherited, cuewrap starts with the defaults."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        pidfile, log = tmp_path / "pid", tmp_path / f"log-{sig}"
        script = f"echo $$ > {pidfile}; exec {shlex.join(cuewrap_argv('sleep', log=log))}"
        p = pexpect.spawn("sh", ["-c", script], env=env(), timeout=10, preexec_fn=default_signals)
        p.expect("READY")
        os.kill(int(pidfile.read_text()), sig)
        p.expect(pexpect.EOF)
        p.close()
        assert p.exitstatus == 128 + sig, sig
        exits = [r for r in map(json.loads, log.read_text().splitlines())
                 if r.get("type") == "ChildExit"]  # fmt: skip
        assert [r["signal"] for r in exits] == [sig], exits


def test_stdin_not_a_tty_is_plain_passthrough() -> None:
    r = subprocess.run(
        [PY, "-m", "cuewrap", "--", PY, "-c", "import sys; print(input().upper()); sys.exit(4)"],
        input=b"hello\n",
        capture_output=True,
        timeout=20,
    )
    assert r.returncode == 4
    assert b"HELLO" in r.stdout
    assert b"\x1b[?1004h" not in r.stdout and b"\x1b[22;0t" not in r.stdout
    with open(os.devnull, "rb") as devnull:
        r = subprocess.run(
            [PY, "-m", "cuewrap", "--", "sh", "-c", "cat; exit 7"],
            stdin=devnull,
            capture_output=True,
            timeout=20,
        )
    assert r.returncode == 7


def test_setup_and_restore_sequences_written_once() -> None:
    p = spawn("exit", "0")
    p.logfile_read = io.BytesIO()
    p.expect("READY")
    p.sendline("")
    p.expect(pexpect.EOF)
    out = p.logfile_read.getvalue()
    assert out.count(b"\x1b[22;0t") == 1 and out.count(b"\x1b[23;0t") == 1
    assert out.index(b"\x1b[?1004h") < out.index(b"READY") < out.index(b"\x1b[?1004l")


def test_internal_failure_fails_open(tmp_path: Path) -> None:
    """A bug in cuewrap's own event handling must not disturb the session."""
    log = tmp_path / "log.jsonl"
    argv = cuewrap_argv("raw-echo", log=log)
    e = env()
    e["CUEWRAP_DEBUG_FAULT"] = "sink,tracker,focus"
    p = pexpect.spawn(argv[0], argv[1:], env=e, timeout=10)
    p.expect("READY")
    p.send(b"xyz")
    assert received(p, lambda got: b"z" in got) == b"xyz"
    p.send(b"q")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines()]
    assert "internal_error" in kinds


@pytest.mark.parametrize("clipboard", ["user", "allow"])
def test_a_failed_tracker_leaves_the_fallback_guard(tmp_path: Path, clipboard: str) -> None:
    """The output tracker fails (``CUEWRAP_DEBUG_FAULT=tracker``): the child's output still
    passes through the fallback guard, which removes the notification and title sequences, and
    the clipboard write unless ``guard.clipboard = allow``; all else arrives as written."""
    log = tmp_path / "log.jsonl"
    out = (
        "printf 'A\\033]52;c;WQ==\\007B\\033]777;notify;t;b\\007C\\033]2;title\\033\\\\"
        "D\\033]8;;u\\033\\\\E\\n'; sleep 0.3"
    )
    argv = [PY, "-m", "cuewrap", "--log", str(log), "--", "sh", "-c", out]
    e = env()
    e["CUEWRAP_DEBUG_FAULT"] = "tracker"
    e["CUEWRAP_GUARD_CLIPBOARD"] = clipboard
    p = pexpect.spawn(argv[0], argv[1:], env=e, timeout=10, dimensions=(24, 80),
                      preexec_fn=default_signals)  # fmt: skip
    p.logfile_read = io.BytesIO()
    p.expect(pexpect.EOF)
    p.close()
    got = p.logfile_read.getvalue()
    kept = b"\x1b]52;c;WQ==\x07" if clipboard == "allow" else b"\x1b\x18"
    want = b"A" + kept + b"B\x1b\x18C\x1b\x18D\x1b]8;;u\x1b\\E"
    assert want in got, got
    records = [json.loads(line) for line in log.read_text().splitlines()]
    fell = [r for r in records if r["kind"] == "guard_fallback"]
    assert len(fell) == 1 and fell[0]["clipboard"] == (clipboard != "allow"), fell


@pytest.mark.parametrize("step", ["publisher", "delivery", "controller", "wired"])
def test_a_cue_side_that_failed_is_degraded_in_the_events_file(tmp_path: Path, step: str) -> None:
    """The cue side's build fails (``CUEWRAP_DEBUG_FAULT=build:<step>``, before or after the
    publisher made its first line, or once the controller was built): the session runs on, so
    the events file says ``degraded`` (not ``exited``) while it does, and ``exited`` last,
    once, when the program exits."""
    from waiting import wait_until

    events = tmp_path / "events.jsonl"
    argv = [PY, "-m", "cuewrap", "--events", str(events), "--", "sh", "-c",
            "printf 'ready\\n'; read x; printf 'bye\\n'"]  # fmt: skip
    e = env()
    e["CUEWRAP_DEBUG_FAULT"] = f"build:{step}"
    p = pexpect.spawn(argv[0], argv[1:], env=e, timeout=10, dimensions=(24, 80),
                      preexec_fn=default_signals)  # fmt: skip

    def states() -> list[str]:
        text = events.read_text() if events.exists() else ""
        return [json.loads(line)["state"] for line in text.splitlines()]

    p.expect("ready")
    wait_until(lambda: "degraded" in states(), 10, "the degraded line", detail=states)
    time.sleep(0.3)  # nothing else comes while the program runs
    running = states()
    assert running[-1] == "degraded" and "exited" not in running, running
    p.sendline("")
    p.expect("bye")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [r["state"] for r in lines] == [*running, "exited"], lines
    assert all(r["pid"] == lines[0]["pid"] and r["since"] > 0 for r in lines)
