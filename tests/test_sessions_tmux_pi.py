"""Two real Pi sessions in a real tmux with a user's client attached (docs/sessions.md).

Window 0 and window 1 each run ``cuewrap pi`` (real Pi against the fake model); window 2 a
shell where the user types ``cuewrap go PID``. What is checked is read back from tmux itself
(the client's window, ``@cuewrap_state`` of each window) and from ``cuewrap ls --json``:

- both sessions listed with their pane, ``session:window.pane`` and tty; the window option of
  each window follows its session's state;
- a dialog in the hidden window: ``needs-input`` first in ``ls``; ``go`` switches the client
  there (session, window, pane); the answer, the run's end while looked at: ``idle``;
- a run that ends in the window the user does not look at: ``finished``; coming back: ``idle``;
- ``/quit``: the entry and the window option go; SIGKILL: never listed again, and the reader
  that removed the entry unsets the window option the killed cuewrap left.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import TEST_EXT, PiHome, pi_argv
from tmuxrig import SESSION, TmuxRig
from waiting import wait_until

pytestmark = pytest.mark.tmux  # real Pi inside a real tmux


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


class Scene:
    def __init__(self, rig: TmuxRig, env: dict[str, str], root: Path) -> None:
        self.rig = rig
        self.root = root
        self.env = env  # the user's environment outside tmux (for `cuewrap ls`)

    def ls(self) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "cuewrap", "ls", "--json"],
            env=self.env,
            capture_output=True,
            timeout=20,
        )
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    def option(self, window: int) -> str:
        """``@cuewrap_state`` of the window ("" when unset)."""
        out = self.rig.tmux(
            "show-options", "-w", "-v", "-t", f"{SESSION}:{window}", "@cuewrap_state", check=False
        )
        return out.strip()

    def states(self) -> dict[str, str]:
        return {r["where"]: r["state"] for r in self.ls()}

    def why(self) -> str:
        return (
            f"ls: {self.ls()}\noptions: {[self.option(w) for w in (0, 1, 2)]}\n"
            f"client window: {self.client_window()}"
        )

    def wait(self, check: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
        return wait_until(check, timeout, what, detail=self.why)

    def wait_state(self, window: int, state: str) -> None:
        """The session of ``window`` in ``state`` in ls AND in the window option."""
        where = f"{SESSION}:{window}.0"
        self.wait(
            lambda: self.states().get(where) == state and self.option(window) == state,
            f"window {window} {state}",
        )

    def client_window(self) -> str:
        out = self.rig.tmux(
            "list-clients", "-F", "#{client_control_mode} #{window_index}.#{pane_index}"
        )
        return " ".join(line.split()[1] for line in out.splitlines() if line.startswith("0 "))

    def type_into(self, window: int, words: str) -> None:
        """Type into Pi in ``window``, then Enter once the words show (not one paste)."""
        target = f"{SESSION}:{window}"
        self.rig.tmux("send-keys", "-t", target, "-l", words)
        self.wait(lambda: words in "\n".join(self.rig.capture(target)), f"'{words}' typed")
        self.rig.tmux("send-keys", "-t", target, "Enter")

    def watching(self, log: str) -> bool:
        path = self.root / log
        lines = path.read_text().splitlines() if path.exists() else []
        return any('"state": "watching"' in line for line in lines)

    def pane_text(self, window: int) -> str:
        return "\n".join(self.rig.capture(f"{SESSION}:{window}"))


@pytest.fixture(params=[{}, {"focus-events": "on"}], ids=["defaults", "focus-events"])
def scene(pi_home: PiHome, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Scene]:
    run, tmp = tmp_path / "run", tmp_path / "tmp"
    run.mkdir(mode=0o700)
    tmp.mkdir()
    # this test's own registry (ls reads the runtime directory's and the temp directory's)
    pi_home.env.update(XDG_RUNTIME_DIR=str(run), TMPDIR=str(tmp), CUEWRAP_NOTIFY_DESKTOP="off")
    # tmux's defaults (cuewrap's control clients attach to the session) or focus-events on
    # (they only listen): with both, two cuewraps leave the user's current window alone
    rig = TmuxRig(pi_home, server_options=request.param)
    exts = ["-e", str(TEST_EXT)]
    # each under a shell that stays: the windows outlive the sessions (their options go)
    a_argv, b_argv = (pi_argv(exts, wrap=True, log_path=pi_home.root / f"{n}.log") for n in "ab")
    rig.start(
        ["/bin/sh", "-c", shlex.join(a_argv) + "; exec sleep 100000"],
        window1=["/bin/sh", "-c", shlex.join(b_argv) + "; exec sleep 100000"],
    )
    rig.tmux("new-window", "-d", "-t", f"{SESSION}:2", "-c", str(pi_home.cwd), "/bin/sh")
    client = rig.attach()
    client.wait_ready(timeout=30)  # window 0's Pi on the client's screen
    env = {k: v for k, v in pi_home.env.items() if not k.startswith("TMUX")}
    try:
        yield Scene(rig, env, pi_home.root)
    finally:
        rig.close()


def test_two_pi_sessions_ls_go_and_window_state(scene: Scene, fakemodel: FakeModel) -> None:
    sc = scene
    sc.wait(lambda: len(sc.ls()) == 2, "two sessions listed")
    sc.wait_state(0, "idle")
    sc.wait_state(1, "idle")
    for log in ("a.log", "b.log"):  # both watch tmux (their control clients are up) ...
        sc.wait(lambda log=log: sc.watching(log), f"{log}: cuewrap watching tmux")
    assert sc.client_window() == "0.0"  # ... and the user's client still shows window 0
    rows = {r["where"]: r for r in sc.ls()}
    a, b = rows[f"{SESSION}:0.0"], rows[f"{SESSION}:1.0"]
    for row, window in ((a, 0), (b, 1)):
        pane = sc.rig.tmux("display-message", "-p", "-t", f"{SESSION}:{window}", "#{pane_id}")
        tty = sc.rig.tmux("display-message", "-p", "-t", f"{SESSION}:{window}", "#{pane_tty}")
        assert row["tmux_pane"] == pane.strip()
        assert row["tty"] == tty.strip()  # cuewrap's own terminal: the pane's, not Pi's PTY
        assert row["program"] == "pi"
        pane_pid = sc.rig.pane_pid(f"{SESSION}:{window}")
        assert pane_pid in (row["pid"], parent_of(row["pid"]))  # cuewrap's own pid
    assert sc.option(2) == ""  # no cuewrap in window 2: nothing set there

    # a dialog in window 1, which nobody looks at: needs-input, listed first
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed B"))
    sc.type_into(1, "confirm please")
    sc.wait_state(1, "needs-input")
    assert sc.ls()[0]["pid"] == b["pid"]
    assert sc.option(0) == "idle"

    # `cuewrap go` typed in window 2's shell: the client goes to window 1's pane
    sc.rig.tmux("select-window", "-t", f"{SESSION}:2")
    sc.wait(lambda: sc.client_window() == "2.0", "the client on window 2")
    cmd = f"{sys.executable} -m cuewrap go {b['pid']}; echo GO-STATUS=$?"
    sc.rig.tmux("send-keys", "-t", f"{SESSION}:2", "-l", cmd)
    sc.rig.tmux("send-keys", "-t", f"{SESSION}:2", "Enter")
    sc.wait(lambda: sc.client_window() == "1.0", "go to switch the client to window 1")
    sc.wait(lambda: "GO-STATUS=0" in sc.pane_text(2), "go's exit status")
    # the dialog answered while looked at: the run ends, finished then idle at once
    sc.rig.tmux("send-keys", "-t", f"{SESSION}:1", "Enter")
    sc.wait(lambda: "deployed B" in sc.pane_text(1), "B's answer")
    sc.wait_state(1, "idle")

    # a run in window 0 while the client shows window 1: it ends unseen, finished
    fakemodel.push(text("done A"))
    sc.type_into(0, "task for A")
    sc.wait_state(0, "finished")
    row_a = next(r for r in sc.ls() if r["pid"] == a["pid"])
    assert row_a["outcome"] == "completed" and row_a["presence"] == "away"
    # the user comes back to window 0: idle
    sc.rig.tmux("select-window", "-t", f"{SESSION}:0")
    sc.wait_state(0, "idle")

    # B quits: its entry and its window option go
    sc.type_into(1, "/quit")
    sc.wait(lambda: [r["pid"] for r in sc.ls()] == [a["pid"]], "B gone from ls")
    sc.wait(lambda: sc.option(1) == "", "window 1's option unset")
    assert sc.option(0) == "idle"

    # A killed with SIGKILL: it could not unset its window's option; the next reader (ls)
    # removes its entry, never lists it, and unsets the option
    os.kill(a["pid"], signal.SIGKILL)
    sc.wait(lambda: not Path(f"/proc/{a['pid']}").exists(), "A gone")
    assert sc.option(0) == "idle"
    assert sc.ls() == []
    assert sc.option(0) == ""
