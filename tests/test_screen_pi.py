"""Real Pi teed into a screen watcher: the screen source's facts follow Pi's own working and
idle, and a dialog is never read as idle."""

from __future__ import annotations

import threading
import time

import pytest
from fakemodel import text, tool_call
from waiting import absence_window, wait_until

from cuewrap.facts import Fact, ScreenActivity
from cuewrap.loop import Loop
from cuewrap.screen import ScreenWatcher

pytestmark = pytest.mark.pi


class Tee:
    """A ScreenWatcher on its own Loop in a thread, fed with everything a PiSession's
    terminal receives (the rig's reader thread keeps ``raw_output``; we forward what is new)."""

    def __init__(self, session, cols: int = 100, rows: int = 30) -> None:  # type: ignore[no-untyped-def]
        self.session = session
        self.cols, self.rows = cols, rows
        self.facts: list[tuple[float, Fact]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = Loop()
        w = ScreenWatcher(loop, self.cols, self.rows,
                          lambda f: self.facts.append((time.monotonic(), f)),
                          lambda where, e: self.errors.append(e))  # fmt: skip
        w.start()
        sent = 0
        try:
            while not self._stop.is_set():
                raw = self.session.raw_output
                if len(raw) > sent:
                    w.feed(raw[sent:])
                    sent = len(raw)
                loop.run_once(max_timeout=0.02)
        finally:
            w.stop()
            loop.close()

    def wait(self, n: int, timeout: float = 5.0) -> list[Fact]:
        """Wait for ``n`` facts; return all facts seen so far."""
        wait_until(lambda: len(self.facts) >= n, timeout, f"{n} screen fact(s)", interval=0.02,
                   detail=lambda: [f for _, f in self.facts])  # fmt: skip
        return [f for _, f in self.facts]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


IDLE, WORKING = ScreenActivity(working=False), ScreenActivity(working=True)


def test_real_pi_working_then_idle(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}))
    fakemodel.push(text("done"))
    s = pi_session(wrap=False, test_ext=False, dimensions=(30, 100))
    tee = Tee(s)
    try:
        assert tee.wait(1) == [IDLE]  # Pi is idle at start
        s.prompt("run sleep 2")
        s.wait_working()
        t_run = time.monotonic()
        assert tee.wait(2) == [IDLE, WORKING]
        assert tee.facts[1][0] - t_run < 1.0
        s.wait_for_screen(r"Took \d", 10)
        s.wait_idle()
        t_idle = time.monotonic()
        assert tee.wait(3) == [IDLE, WORKING, IDLE]
        assert tee.facts[2][0] - t_idle < 1.5
        assert tee.errors == []
    finally:
        tee.close()


def test_real_pi_dialog_is_not_idle(pi_session, fakemodel) -> None:  # type: ignore[no-untyped-def]
    # the model thinks for 1 s (spinner), then the dialog replaces the editor and the spinner
    fakemodel.push(tool_call("test_confirm", {"title": "Deploy", "message": "Ship it?"}, delay=1.0))
    fakemodel.push(text("done"))
    s = pi_session(wrap=False, dimensions=(30, 100))
    tee = Tee(s)
    try:
        assert tee.wait(1) == [IDLE]
        s.prompt("confirm please")
        s.wait_dialog()
        # the spinner is gone, the borders are plain: still no idle
        absence_window(1.5, "an idle fact while the dialog shows")
        assert [f for _, f in tee.facts] == [IDLE, WORKING]
        s.enter()  # → Yes
        s.wait_for_screen(r"confirmed: yes", 10)
        s.wait_idle()
        assert tee.wait(3) == [IDLE, WORKING, IDLE]
        assert tee.errors == []
    finally:
        tee.close()
