"""xterm.js (its headless build, ``@xterm/headless`` from the npm registry) as the host
terminal of a session: the terminal of VS Code and of most web terminals, run in Node by
``tests/xtermhost.js``.

:class:`XtermJs` plays the part :class:`pirig.AnsweringTerminal` plays for a bare PTY: the
session's reader hands it every chunk of output (``feed``), xterm.js parses it, and what
xterm.js answers (DA1, DECRQM, …) goes back to the program as a terminal's answers do. What
the user would see is read back with ``state``: the title, every title set, the OSC
notifications and clipboard writes xterm.js received, bells, modes, the screen. A focus change
is sent as xterm.js's browser part sends it: only while the program set mode 1004.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from pirig import REPO, _installed, under_ci

XTERMJS_VERSION = "6.0.0"
HOST = Path(__file__).with_name("xtermhost.js")


@functools.cache
def install_xtermjs(version: str = XTERMJS_VERSION) -> Path:
    """Run scripts/install-xtermjs once: the directory whose node_modules holds it."""
    return _installed("install-xtermjs", version)


def xtermjs_dir() -> Path:
    """The installed package, or a failure in CI (a skip, with its reason, elsewhere)."""
    env = os.environ.get("CUEWRAP_XTERMJS_DIR")
    if env:
        return Path(env)
    try:
        return install_xtermjs()
    except RuntimeError as e:
        msg = f"xterm.js {XTERMJS_VERSION} not installable here (scripts/install-xtermjs): {e}"
        if under_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


class XtermJs:
    """One xterm.js terminal of ``rows`` × ``cols``, in a Node process of its own."""

    delay = 0.0  # answers arrive at once (AnsweringTerminal's interface)

    def __init__(self, rows: int = 40, cols: int = 120) -> None:
        env = dict(os.environ, CUEWRAP_XTERMJS_DIR=str(xtermjs_dir()),
                   XTERMJS_ROWS=str(rows), XTERMJS_COLS=str(cols))  # fmt: skip
        self._proc = subprocess.Popen(
            ["node", str(HOST)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        self._lock = threading.Lock()
        self._closed = False

    def _ask(self, req: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(req).encode() + b"\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise AssertionError(f"xterm.js's host ended (status {self._proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def feed(self, data: bytes) -> bytes:
        """The program wrote ``data``: parsed by xterm.js; what it answers (nothing once
        closed: the session's reader may outlive the test)."""
        if self._closed:
            return b""
        got = self._ask({"op": "write", "data": base64.b64encode(data).decode()})
        return base64.b64decode(got["replies"])

    def focus(self, focused: bool) -> bytes:
        """The window gains or loses focus: what xterm.js sends the program (nothing while
        the program did not ask for focus reports)."""
        got = self._ask({"op": "focus", "in": focused})
        return base64.b64decode(got["replies"])

    def state(self) -> dict[str, Any]:
        return self._ask({"op": "state"})

    def notifications(self, number: int) -> list[str]:
        """The payloads of every OSC ``number`` xterm.js received, in order."""
        return [data for n, data in self.state()["osc"] if n == number]

    def close(self) -> None:
        with self._lock:
            self._closed = True
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
