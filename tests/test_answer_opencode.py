"""Answering real opencode's permission dialog from elsewhere (docs/answering.md, "opencode"):
the pinned opencode on the fake chat API, a Bash call it must ask for (``permission.bash =
"ask"``), the user away. Its own words ("Permission needs input", which cuewrap hears once it
answered opencode's queries: tests/test_generic_opencode.py) and its dialog on the screen make
the wait answerable; ``cuewrap answer`` allows once (the command runs, the Finished follows)
or rejects (it does not run); "Allow always" is refused by number and through a token and
chosen by its exact label with the pid; a stale token and an answer after the user's own key
are refused, nothing typed.
"""

from __future__ import annotations

import statistics
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentrig import AWAY, run_cuewrap
from fakemodel import text, tool_call
from opencoderig import OpencodeSession
from test_generic_opencode import ASK_BASH, TITLE, script
from waiting import absence_window, wait_until

from cuewrap.answer.generic import WIDENS

RUN = {"command": "echo RAN > ran.txt", "description": "Write a file"}


class Rig:
    """An opencode session asking for a Bash call while the user is away, a private registry
    directory, and ``cuewrap`` beside it."""

    def __init__(
        self,
        sessions: list[OpencodeSession],
        tmp_path: Path,
        calls: int = 1,
        env: dict[str, str] | None = None,
    ) -> None:
        runtime = tmp_path / "run"
        runtime.mkdir(mode=0o700)
        self.private = {"XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(tmp_path)}
        steps = []
        for i in range(calls):
            steps += [tool_call("bash", RUN), text(f"The tool ran {i}.")]
        env = {**self.private, **(env or {})}
        self.s = OpencodeSession(tmp_path, script(*steps), env=env, config=ASK_BASH)
        sessions.append(self.s)
        self.s.ready()
        self.s.presence(AWAY, "away")
        self.ran = self.s.cwd / "ran.txt"

    def cuewrap(self, *args: str) -> tuple[int, str]:
        return run_cuewrap(self.private, *args)

    def wait(self) -> dict[str, Any] | None:
        """``ls --json``'s ``wait`` of the session (its pid kept)."""
        (row,) = self.s.ls(self.private)
        self.pid = row["pid"]
        return row["wait"] if isinstance(row["wait"], dict) else None

    def asked(self, old: str | None = None) -> dict[str, Any]:
        """Type a prompt; its dialog shows; an answerable wait (a token other than ``old``)."""
        mark = self.s.type("make a file")
        self.s.wait_text("Permission required", mark, timeout=60)

        def fresh() -> dict[str, Any] | None:
            w = self.wait()
            return w if w is not None and w["token"] != old else None

        got: dict[str, Any] = wait_until(
            fresh, 30, "an answerable wait", detail=lambda: self.s.records("answer")
        )
        return got

    def attempts(self) -> list[dict[str, Any]]:
        return [r for r in self.s.records("answer") if "result" in r]


@pytest.mark.pi
def test_allow_once_by_number_runs_it_and_the_finished_follows(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    r = Rig(opencode_sessions, tmp_path)
    w = r.asked()
    assert (w["kind"], w["count"]) == ("permission", 3)
    assert w["options"] == ["Allow once", "Allow always", "Reject"]  # its own words
    code, out = r.cuewrap("answer", str(r.pid), "1")
    assert (code, out) == (
        0,
        "option 1 typed; the dialog closed (which option it took is not reported)",
    )
    wait_until(r.ran.exists, 20, "the command to run")
    wait_until(lambda: (TITLE, b"Finished") in r.s.notifications(), 30, "the Finished")
    assert r.s.notifications() == [(TITLE, b"Needs your input"), (TITLE, b"Finished")]
    (attempt,) = r.attempts()
    assert (attempt["source"], attempt["option"], attempt["result"]) == (
        "command line",
        1,
        "answered",
    )
    assert r.wait() is None


@pytest.mark.pi
def test_reject_by_number_does_not_run_it(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    r = Rig(opencode_sessions, tmp_path)
    r.asked()
    code, out = r.cuewrap("answer", str(r.pid), "3")
    assert code == 0, out
    absence_window(3.0, "the command to run")
    assert not r.ran.exists()
    assert r.attempts()[-1]["result"] == "answered"


@pytest.mark.pi
def test_allow_always_only_by_its_exact_label_with_the_pid(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    r = Rig(opencode_sessions, tmp_path)
    w = r.asked()
    for args in (
        [str(r.pid), "2"],
        ["--token", w["token"], "Allow always"],
        ["--token", w["token"], "2"],
        [str(r.pid), "allow always"],
    ):
        code, out = r.cuewrap("answer", *args)
        assert (code, out) == (1, WIDENS), args
    assert r.wait() == w  # refused: the token lives on, nothing typed
    code, out = r.cuewrap("answer", str(r.pid), "Allow always")
    assert code == 0, out
    wait_until(r.ran.exists, 20, "the command to run")
    results = [a["result"] for a in r.attempts()]
    assert results == ["refused"] * 4 + ["answered"], r.attempts()


@pytest.mark.pi
def test_a_stale_token_and_an_answer_after_the_users_key_are_refused(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    r = Rig(opencode_sessions, tmp_path, calls=2)
    first = r.asked()
    code, _ = r.cuewrap("answer", "--token", first["token"], "1")
    assert code == 0
    wait_until(r.ran.exists, 20, "the command to run")
    code, out = r.cuewrap("answer", "--token", first["token"], "1")
    assert (code, out) == (1, "stale token")
    wait_until(lambda: (TITLE, b"Finished") in r.s.notifications(), 30, "the Finished")
    r.ran.unlink()
    second = r.asked(first["token"])
    screen = len(r.s.out())
    r.s.p.send(b"x")  # the user's own key (nothing in opencode's dialog)
    wait_until(lambda: r.wait() is None, 10, "the token to die")
    code, out = r.cuewrap("answer", "--token", second["token"], "1")
    assert (code, out) == (1, "stale token")
    absence_window(2.0, "the command to run")
    assert not r.ran.exists()
    assert b"\x1b[C" not in r.s.out()[screen:]  # nothing typed (the host sees no echo)


@pytest.mark.pi
def test_ten_answers_report_to_token_and_keys_to_closed(
    tmp_path: Path, opencode_sessions: list[OpencodeSession]
) -> None:
    """Ten prompts, each allowed once: how long from opencode's words to the token and from
    the keys to the dialog gone are printed (docs/answering.md gives the figures)."""
    r = Rig(opencode_sessions, tmp_path, calls=10)
    token = None
    for i in range(10):
        w = r.asked(token)
        token = w["token"]
        code, out = r.cuewrap("answer", "--token", token, "1")
        assert code == 0, out
        wait_until(r.ran.exists, 20, f"the command to run ({i})")
        r.ran.unlink()
        wait_until(lambda n=i + 1: r.s.notifications().count((TITLE, b"Finished")) == n, 30, "done")
    words = [x["t"] for x in r.s.records("fact") if x.get("type") == "ChildNotice"]
    issued = [x["t"] for x in r.s.records("answer") if x.get("state") == "answerable"]
    heard = [
        x["t"]
        for x in r.s.records("wait")
        if x.get("key") == "said" and x.get("state") == "pending"
    ]
    lags = [t - h for t, h in zip(issued, heard, strict=True)]
    keys = [a["keys_ms"] for a in r.attempts() if a["result"] == "answered"]
    assert len(lags) == len(keys) == 10 and len(words) == 20, (lags, keys, len(words))
    print(
        f"\nwords -> token: p50 {statistics.median(lags):.3f} s, max {max(lags):.3f} s;"
        f" keys -> closed: p50 {statistics.median(keys):.0f} ms, max {max(keys):.0f} ms"
    )


@pytest.mark.desktop
def test_a_desktop_button_allows_once_and_offers_only_allow_once_and_reject(
    tmp_path: Path, opencode_sessions: list[OpencodeSession], dunst_menu: Any
) -> None:
    """Real dunst on a private bus: the needs-input notification of opencode's permission
    dialog has "Allow once" and "Reject", never "Allow always"; a click on "Allow once" runs
    the command (dunst's context menu picks the action, as tests/test_answer_claude.py)."""
    d = dunst_menu
    desktop = {k: d.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    r = Rig(opencode_sessions, tmp_path, env={
        **desktop, "CUEWRAP_NOTIFY_DESKTOP": "auto", "CUEWRAP_NOTIFY_TERMINAL": "off",
    })  # fmt: skip
    r.asked()

    def delivered() -> dict[str, Any] | None:
        return next((x for x in r.s.records("delivery") if x.get("channel") == "desktop"
                     and x.get("state") == "delivered"), None)  # fmt: skip

    sid = int(wait_until(delivered, 15, "the desktop notification")["reason"].split()[-1])
    (d.tmp / "dunst-pick").write_text(f"[{sid},answer-1]\n")
    subprocess.run(["dunstctl", "context"], env=d.env, check=True, timeout=10)
    wait_until(r.ran.exists, 20, "the command to run")
    menu = (d.tmp / "dunst-menu").read_text()
    assert f"#Allow once (opencode — proj) [{sid},answer-1]" in menu
    assert f"#Reject (opencode — proj) [{sid},answer-3]" in menu
    assert "answer-2" not in menu and "always" not in menu
    attempts = wait_until(r.attempts, 10, "the answer's record")  # once the dialog is gone
    assert [(a["source"], a["option"], a["result"]) for a in attempts] == [
        ("desktop", 1, "answered")
    ]
