"""docs/design.md#real-environments job control with real Pi: the host terminal is an interactive
``bash -i`` (job control on), cuewrap runs Pi in it, and the pair is stopped and continued the ways
a user does: Ctrl-Z in Pi, ``kill -TSTP`` of cuewrap and of Pi, SIGSTOP of cuewrap. Each time:
"Stopped" and the prompt within 3 s, the terminal settings as before (``stty -g``), focus reporting
off and the title restored; ``fg`` brings Pi's screen back, and a prompt typed then reaches the
model and a cue still fires while the user is away.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import waiting
from fakemodel import MODEL_ID, FakeModel, text, tool_call
from pirig import PiHome, PiSession, _descendants, _proc_stat, pi_argv, ready_away
from procstat import cmdline
from waiting import wait_until

pytestmark = pytest.mark.pi

PROMPT = "PROMPT$"
STOP_LIMIT = 3.0  # seconds from the stop to the shell's prompt (issue 7)


class Shell:
    """``bash -i`` in a PTY (a PiSession around bash: screen, raw output, log records)."""

    def __init__(self, pi_home: PiHome, tmp_path: Path, **extra_env: str) -> None:
        env = dict(pi_home.env)
        env.update(PS1=f"{PROMPT} ", HISTFILE="/dev/null", PROMPT_COMMAND="", **extra_env)
        self.before = tmp_path / "stty-before"
        self.log = tmp_path / "cuewrap.log"
        self.s = PiSession(["bash", "--norc", "--noprofile", "-i"], env=env, cwd=pi_home.cwd,
                           log_path=self.log, dimensions=(40, 120))  # fmt: skip
        self.checks = 0
        self.wait_prompt()

    def last_line(self) -> str:
        lines = [ln for ln in self.s.screen_lines if ln.strip()]
        return lines[-1].strip() if lines else ""

    def at_prompt(self) -> bool:
        """The cursor's line is the shell's prompt, nothing typed after it (a program stopped
        without clearing its screen leaves its lines around the prompt)."""
        screen = self.s._screen  # the rig's pyte screen (read under its lock)
        with self.s._cond:
            line = screen.display[screen.cursor.y][: screen.cursor.x]
        return line.rstrip() == PROMPT

    def wait_prompt(self, timeout: float = 10.0) -> None:
        wait_until(self.at_prompt, timeout, "the shell's prompt", detail=self.s.dump)

    def command(self, line: str, timeout: float = 10.0) -> bytes:
        """Type ``line`` + Enter and wait for the NEXT prompt: one printed after it, not the
        one the line was typed at (its echo may not be back yet when a wait starts; and the
        cursor may have left the new prompt already, for a job report). Returns what the
        shell wrote up to that prompt."""
        mark = len(self.s.raw_output)
        self.s.send(f"{line}\r")
        prompt = PROMPT.encode()
        wait_until(lambda: prompt in self.s.raw_output[mark:], timeout,
                   f"the prompt after {line!r}", detail=self.s.dump)  # fmt: skip
        out = self.s.raw_output[mark:]
        return out[: out.index(prompt)]

    def start_pi(self) -> None:
        cmd = shlex.join(pi_argv([], wrap=True, log_path=self.log))
        self.s.send(f"stty -g > {shlex.quote(str(self.before))}; {cmd}\r")
        self.s.wait_ready(timeout=30)

    def start_run(self, fakemodel: FakeModel, command: str) -> PiSession:
        """Pi started; a run whose tool runs ``command`` (then says "all done") begun."""
        self.start_pi()
        fakemodel.push(tool_call("bash", {"command": command}), text("all done"))
        self.s.prompt("run it")
        return self.s

    def stopped(self, stop: Callable[[], None]) -> float:
        """Stop the pair with ``stop``; wait for "Stopped" and the prompt; check the terminal
        is as before. Returns the seconds from the stop to the prompt."""
        mark = len(self.s.raw_output)
        count = self.s.raw_output.count(b"Stopped")
        t0 = time.monotonic()
        stop()
        wait_until(lambda: self.s.raw_output.count(b"Stopped") > count and self.at_prompt(),
                   10, "Stopped and the prompt", detail=self.s.dump)  # fmt: skip
        took = time.monotonic() - t0
        after = self.s.raw_output[mark:]
        assert b"\x1b[?1004l" in after and b"\x1b[23;0t" in after, after[-300:]
        self.checks += 1
        tag = f"STTY{self.checks}"
        self.s.send(f"stty -g | cmp -s - {shlex.quote(str(self.before))}; echo {tag}=$?\r")
        m = self.s.wait_for_screen(rf"{tag}=(\d+)")  # the typed line has "=$?", not a digit
        assert m.group(1) == "0", f"stty -g differs from before\n{self.s.dump()}"
        # The prompt after the echo too: a command typed before it is out would take that
        # prompt for its own and return nothing of its own output.
        answer = f"{tag}={m.group(1)}".encode()
        prompt = PROMPT.encode()
        wait_until(lambda: _after(self.s.raw_output, mark, answer, prompt), 10,
                   f"the prompt after {tag}", detail=self.s.dump)  # fmt: skip
        return took

    def fg(self) -> None:
        """``fg``: Pi's screen comes back (its footer is the last line again), focus
        reporting is on again."""
        mark = len(self.s.raw_output)
        self.s.send("fg\r")
        wait_until(lambda: MODEL_ID in self.last_line(), 10, "Pi's screen back after fg",
                   detail=self.s.dump)  # fmt: skip
        wait_until(lambda: b"\x1b[?1004h" in self.s.raw_output[mark:], 5, "focus reporting on")

    def pi_pid(self) -> int:
        """Pi itself: cuewrap's grandchild, under cuewrap's session leader."""
        tree = _descendants(self.s.pid)
        cuewraps = [p for p, _ in tree if "cuewrap" in cmdline(p) and _parent(p) == self.s.pid]
        assert len(cuewraps) == 1, [(p, cmdline(p)) for p, _ in tree]
        leaders = {p for p, _ in tree if _parent(p) == cuewraps[0]}
        pis = [p for p, _ in tree if _parent(p) in leaders and cmdline(p).startswith("pi")]
        assert len(pis) == 1, [(p, cmdline(p)) for p, _ in tree]
        return pis[0]

    def cuewrap_pid(self) -> int:
        tree = _descendants(self.s.pid)
        [pid] = [p for p, _ in tree if "cuewrap" in cmdline(p) and _parent(p) == self.s.pid]
        return pid

    def close(self) -> None:
        self.s.close()


def _after(raw: bytes, start: int, first: bytes, then: bytes) -> bool:
    """``first`` occurs in ``raw`` from ``start`` on, and ``then`` after it."""
    at = raw.find(first, start)
    return at >= 0 and raw.find(then, at + len(first)) >= 0


def _parent(pid: int) -> int | None:
    st = _proc_stat(pid)
    return st[0] if st else None


def _notifications(raw: bytes) -> int:
    return len(re.findall(rb"\x1b\]777;notify;", raw))


def prompt_reaches_model_and_cue_fires(sh: Shell, fakemodel: FakeModel, word: str) -> None:
    s = sh.s
    n_req = len(fakemodel.requests)
    n_note = _notifications(s.raw_output)
    fakemodel.push(text(f"answer {word}"))
    ready_away(s)  # the user leaves: a cue is due when the run ends
    s.prompt(f"question {word}")
    fakemodel.wait_requests(n_req + 1)
    assert f"question {word}" in str(fakemodel.requests[-1]), fakemodel.requests[-1]
    s.wait_for_screen(rf"answer {word}")
    wait_until(lambda: _notifications(s.raw_output) > n_note, 10, "a cue while away",
               detail=s.dump)  # fmt: skip
    s.focus_in()


@pytest.fixture
def shell(pi_home: PiHome, tmp_path: Path) -> Shell:
    sh = Shell(pi_home, tmp_path)
    yield sh  # type: ignore[misc]
    sh.close()


@pytest.mark.alone  # times it in real time (docs/testing.md, Parallel)
def test_ctrl_z_in_pi_suspends_the_pair_and_fg_resumes(shell: Shell, fakemodel: FakeModel) -> None:
    shell.start_pi()
    pi = shell.pi_pid()
    hello = shell.s.wait_log(lambda r: r.get("type") == "BridgeHello", timeout=15)
    assert hello["pid"] == pi  # the bridge accepted exactly Pi, not the leader or cuewrap
    took = shell.stopped(lambda: shell.s.send(b"\x1a"))
    assert took < STOP_LIMIT, took
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "one")
    # twice in a row works as well
    assert shell.stopped(lambda: shell.s.send(b"\x1a")) < STOP_LIMIT
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "two")
    jobs = [r["state"] for r in shell.s.log_records("job")]
    assert jobs == ["stopped", "continued"] * 2, jobs


@pytest.mark.alone  # times it in real time (docs/testing.md, Parallel)
def test_kill_tstp_of_cuewrap_and_of_pi(shell: Shell, fakemodel: FakeModel) -> None:
    shell.start_pi()
    took = shell.stopped(lambda: os.kill(shell.cuewrap_pid(), signal.SIGTSTP))
    assert took < STOP_LIMIT, took
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "one")
    took = shell.stopped(lambda: os.kill(shell.pi_pid(), signal.SIGTSTP))
    assert took < STOP_LIMIT, took
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "two")


def test_sigstop_of_cuewrap_then_fg(shell: Shell, fakemodel: FakeModel) -> None:
    """SIGSTOP cannot be caught: the shell gets the terminal as cuewrap left it (bash puts
    back its own settings); on ``fg`` cuewrap sees the change, takes raw mode and focus
    reporting back and has Pi redraw."""
    shell.start_pi()
    cw = shell.cuewrap_pid()
    count = shell.s.raw_output.count(b"Stopped")
    os.kill(cw, signal.SIGSTOP)
    wait_until(lambda: shell.s.raw_output.count(b"Stopped") > count and shell.at_prompt(),
               10, "Stopped and the prompt", detail=shell.s.dump)  # fmt: skip
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "one")


def test_bg_then_fg_gives_pi_back_with_the_terminal_raw(shell: Shell, fakemodel: FakeModel) -> None:
    """``bg`` after Ctrl-Z: a program that needs the terminal stops again ("Stopped (tty
    output)") instead of taking it from the background; ``fg`` then works as after a stop."""
    shell.start_pi()
    assert shell.stopped(lambda: shell.s.send(b"\x1a")) < STOP_LIMIT
    # ``set -b``: bash reports a job's change of state as soon as it learns of it. The test
    # waits for that report before asking ``jobs -l`` for the reason: asked right after the
    # stop is seen in /proc, bash may not have handled its SIGCHLD yet and still say
    # "Running" (and then never print the reason).
    shell.command("set -b")
    mark = len(shell.s.raw_output)
    out = shell.command("bg")  # bash has sent SIGCONT once its next prompt is out
    assert b"&" in out, out
    wait_until(lambda: b"Stopped" in shell.s.raw_output[mark:], 10,
               "bash's report that the job stopped again", detail=shell.s.dump)  # fmt: skip
    assert b"Stopped (tty output)" in shell.command("jobs -l")  # as a full-screen program
    shell.wait_prompt()
    shell.fg()
    prompt_reaches_model_and_cue_fires(shell, fakemodel, "after bg")


# -- the progress indicator (notify.progress) across a stop -----------------------------------
OURS_ON = b"\x1b]9;4;3\x1b\\"
OURS_OFF = b"\x1b]9;4;0\x1b\\"


def last_progress(raw: bytes) -> bytes | None:
    found = [m.group() for m in re.finditer(rb"\x1b\]9;4;[0-4]\x1b\\", raw)]
    return found[-1] if found else None


def test_fg_turns_progress_back_on_only_for_a_run_still_active(
    pi_home: PiHome, tmp_path: Path, fakemodel: FakeModel
) -> None:
    """Ctrl-Z clears cuewrap's progress indicator (the shell has the terminal); ``fg`` turns
    it on again while the run is still active, and not once the run has ended."""
    sh = Shell(pi_home, tmp_path, CUEWRAP_NOTIFY_PROGRESS="true")
    try:
        s = sh.start_run(fakemodel, "sleep 6")
        wait_until(lambda: last_progress(s.raw_output) == OURS_ON, 10, "progress on", detail=s.dump)
        sh.stopped(lambda: s.send(b"\x1a"))
        assert last_progress(s.raw_output) == OURS_OFF  # cleared for the shell
        mark = len(s.raw_output)
        sh.fg()
        wait_until(lambda: last_progress(s.raw_output[mark:]) == OURS_ON, 5,
                   "progress on again after fg", detail=s.dump)  # fmt: skip
        s.wait_for_screen(r"all done", timeout=20)
        wait_until(
            lambda: last_progress(s.raw_output) == OURS_OFF, 10, "progress off", detail=s.dump
        )
        sh.stopped(lambda: s.send(b"\x1a"))
        mark = len(s.raw_output)
        sh.fg()
        waiting.absence_window(1.0, "progress turned on after fg with no run active")
        assert OURS_ON not in s.raw_output[mark:]
    finally:
        sh.close()


def test_fg_never_turns_progress_on_over_pis_own(
    pi_home: PiHome, tmp_path: Path, fakemodel: FakeModel
) -> None:
    """Pi shows its own progress (``terminal.showTerminalProgress``): cuewrap's stays off, and
    ``fg`` in the middle of the run does not turn it on either."""
    pi_home.write_settings(terminal={"showTerminalProgress": True})
    sh = Shell(pi_home, tmp_path, CUEWRAP_NOTIFY_PROGRESS="true")
    try:
        s = sh.start_run(fakemodel, "sleep 5")
        wait_until(lambda: b"\x1b]9;4;3\x07" in s.raw_output, 10, "Pi's own progress")
        waiting.absence_window(2.0, "cuewrap's progress (due 1.5 s into a run)")
        sh.stopped(lambda: s.send(b"\x1a"))
        sh.fg()
        s.wait_for_screen(r"all done", timeout=20)
        assert OURS_ON not in s.raw_output
    finally:
        sh.close()
