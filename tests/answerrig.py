"""Answering a real agent's own dialogs from elsewhere (tests/agentrig.py's sessions, the user
away): ``AnswerRig`` runs one with a private registry directory and ``cuewrap`` beside it, and
reads its answerable wait (``ls --json``), its attempts (the decision log) and its timings.
Used by tests/test_answer_claude.py, tests/test_answer_codex.py, tests/test_answer_gemini.py.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from agentrig import AWAY, PY, AgentSession
from waiting import absence_window, wait_until

from cuewrap.answer.book import took_line

WIDENS = (
    "that option lets the program do more without asking: "
    "only its exact label with the session's pid chooses it"
)

S = TypeVar("S", bound=AgentSession)


def typed(option: int) -> str:
    """What ``cuewrap answer`` prints once a program's dialog closed (generic mode: it does not
    say which option it took)."""
    return took_line(option, None, "the program")


class AnswerRig(Generic[S]):
    """A session of ``session`` (its class: the program's rig's, built with ``steps`` and
    ``env``) kept in ``sessions``, ready, the user away; ``program``: its name in ``ls``;
    ``shows``: what its permission dialog shows."""

    program = ""
    shows = ""
    session: Callable[..., S]

    def __init__(
        self,
        sessions: list[S],
        tmp_path: Path,
        steps: list[Any],
        env: dict[str, str] | None = None,
    ) -> None:
        runtime = tmp_path / "run"
        runtime.mkdir(mode=0o700)
        self.private = {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp_path)}
        self.private.update(env or {})
        self.s = type(self).session(tmp_path, steps, env=self.private)
        sessions.append(self.s)
        self.s.ready()
        self.s.presence(AWAY, "away")
        self.pid = self.s.p.pid

    def cuewrap(self, *args: str) -> tuple[int, str]:
        """``cuewrap ARGS`` beside the session, its output read meanwhile (a terminal reads
        all the time: a program that redraws a lot, Gemini CLI, would else fill the PTY and
        hold cuewrap's writes)."""
        env = {**os.environ, **self.private}
        proc = subprocess.Popen(
            [PY, "-m", "cuewrap", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        end = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < end:
            self.s.out()
            time.sleep(0.02)
        out, _ = proc.communicate(timeout=5)
        return proc.returncode, out.strip()

    def wait(self) -> dict[str, Any] | None:
        code, out = self.cuewrap("ls", "--json")
        assert code == 0, out
        (row,) = json.loads(out)
        assert row["program"] == self.program
        self.pid = row["pid"]
        w = row["wait"]
        return w if isinstance(w, dict) else None

    def token(self, old: str | None = None) -> dict[str, Any]:
        def fresh() -> dict[str, Any] | None:
            w = self.wait()
            return w if w is not None and w["token"] != old else None

        got: dict[str, Any] = wait_until(
            fresh, 15, "an answerable wait", detail=lambda: self.s.records("answer")
        )
        return got

    def prompt(self, words: str, shows: str = "") -> int:
        mark = self.s.type(words)
        self.s.wait_text(shows or self.shows, mark)
        return mark

    def approved_by_number(self, title: bytes, finished: bytes) -> None:
        """The prompt "make a file" (the steps: a command making "made.txt", then "The tool
        ran."): the wait answerable (kind permission, 3 options, labels kept inside), ``cuewrap
        answer PID 1`` runs the command, the Finished (``finished``) follows the Needs your
        input, once (both titled ``title``), and the token is spent."""
        self.prompt("make a file")
        w = self.token()
        assert w["kind"] == "permission" and w["count"] == 3 and w["options"] is None
        assert not (self.s.cwd / "made.txt").exists()
        assert self.cuewrap("answer", str(self.pid), "1") == (0, typed(1))
        self.s.wait_text("The tool ran")
        assert (self.s.cwd / "made.txt").exists()
        wait_until(lambda: len(self.s.notifications()) == 2, 15, "the Finished after the answer")
        absence_window(1.0, "a third notification")
        assert self.s.notifications() == [(title, b"Needs your input"), (title, finished)]
        assert self.wait() is None
        assert [(a["source"], a["option"], a["result"]) for a in self.attempts()] == [
            ("command line", 1, "answered")
        ]
        assert self.cuewrap("answer", "--token", w["token"], "1") == (1, "stale token")
        assert self.cuewrap("answer", str(self.pid), "1") == (1, "nothing to answer")

    def desktop_click(self, dunst: Any, option: int) -> int:
        """Once the needs-input notification reached dunst (``dunst_menu``'s) and the token
        is there, a click on its button for ``option`` (dunst's context menu picks it, in its
        own time: its menu is in ``dunst.tmp / "dunst-menu"`` once the click had effect): the
        notification's id."""

        def delivered() -> dict[str, Any] | None:
            # the needs-input cue's own notification (on a loaded machine the program may
            # have given an earlier cue a notification of its own first)
            asks = {c["cue_id"] for c in self.s.records("cue") if c.get("cue") == "needs-input"}
            return next((x for x in self.s.records("delivery") if x.get("cue") in asks
                         and x.get("channel") == "desktop" and x.get("state") == "delivered"),
                        None)  # fmt: skip

        sid = int(wait_until(delivered, 15, "the desktop notification")["reason"].split()[-1])
        self.token()
        (dunst.tmp / "dunst-pick").write_text(f"[{sid},answer-{option}]\n")
        subprocess.run(["dunstctl", "context"], env=dunst.env, check=True, timeout=10)
        return sid

    def users_key_first(self, made: str, done: str, approve: bytes) -> None:
        """With the dialog answerable, the user moves the selection down and back up: the
        token dies, an answer by it and by the pid is refused, nothing is typed (``made`` is
        not made); then they approve with ``approve`` and the program shows ``done``."""
        w = self.token()
        self.s.p.send(b"\x1b[B")
        self.s.p.send(b"\x1b[A")
        wait_until(
            lambda: any(a.get("state") == "token dead" for a in self.s.records("answer")),
            5,
            "the token to die",
        )
        assert self.cuewrap("answer", "--token", w["token"], "1") == (1, "stale token")
        assert self.cuewrap("answer", str(self.pid), "1") == (1, "nothing to answer")
        absence_window(1.0, "the command to run")
        assert not (self.s.cwd / made).exists()
        # (a dead token names no session: refused by the client, the pid's by the session)
        assert [(a["source"], a["why"]) for a in self.attempts()] == [
            ("command line", "nothing to answer")
        ]
        self.s.p.send(approve)
        self.s.wait_text(done)
        assert (self.s.cwd / made).exists()

    def answer_each(self, n: int, choice: str = "1") -> None:
        """``n`` prompts "make file I", each answered ``choice`` by its token at once: the
        program makes "made-I.txt" and shows "Made number I." (the steps' doing)."""
        old: str | None = None
        for i in range(n):
            mark = self.prompt(f"make file {i}")
            w = self.token(old)
            old = w["token"]
            assert self.cuewrap("answer", "--token", w["token"], choice) == (0, typed(1))
            self.s.wait_text(f"Made number {i}.", mark)
            assert (self.s.cwd / f"made-{i}.txt").exists()

    def attempts(self) -> list[dict[str, Any]]:
        return [r for r in self.s.records("answer") if "result" in r]

    def timings(self, n: int) -> str:
        """From each ``blocked`` report to its token (the log's times), from each claim and
        from its keys to the dialog closed (the attempts' ``ms``, ``keys_ms``), for the ``n``
        answered waits: p50 and max, one line."""
        facts = self.s.records("fact")
        blocked = [
            f["t"] for f in facts if f.get("type") == "ProgramStatus" and f["state"] == "blocked"
        ]
        tokens = [a["t"] for a in self.s.records("answer") if a.get("state") == "answerable"]
        assert len(blocked) == len(tokens) == n, (len(blocked), len(tokens))
        ready = [(t - b) * 1000 for b, t in zip(blocked, tokens, strict=True)]
        closed = [float(a["ms"]) for a in self.attempts()]
        keys = [float(a["keys_ms"]) for a in self.attempts()]
        assert len(closed) == n and all(a["result"] == "answered" for a in self.attempts())
        return (
            f"report -> token ms: p50 {statistics.median(ready):.0f} max {max(ready):.0f};"
            f" claim -> closed ms: p50 {statistics.median(closed):.1f} max {max(closed):.1f};"
            f" keys -> closed ms: p50 {statistics.median(keys):.1f} max {max(keys):.1f}"
        )
