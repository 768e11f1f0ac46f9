"""Answering real Pi's dialogs from elsewhere (docs/answering.md): ``cuewrap answer`` against
Pi 1.4.0 and the latest Pi on the fake model, each answer and each refusal, and that a refusal
types nothing."""

from __future__ import annotations

import json
import os
import pwd
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import PiHome, PiSession, ask_question_args, dialog_finished, open_dialog, ready_away
from shared import system_tool
from waiting import wait_until

from cuewrap.answer.book import took_line

pytestmark = pytest.mark.pi

COLORS = ["Red", "Green", "Blue"]


def took(option: int) -> str:
    """What ``cuewrap answer`` prints once Pi closed the dialog with ``option``."""
    return took_line(option, option)


def cuewrap(env: dict[str, str], *args: str) -> tuple[int, str]:
    argv = [sys.executable, "-m", "cuewrap", *args]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, (done.stdout + done.stderr).strip()


def wait_of(env: dict[str, str], pid: int) -> dict[str, Any] | None:
    code, out = cuewrap(env, "ls", "--json")
    assert code == 0, out
    row = next((r for r in json.loads(out) if r["pid"] == pid), None)
    assert row is not None, out
    wait = row["wait"]
    return wait if isinstance(wait, dict) else None


def token(s: PiSession, env: dict[str, str], old: str | None = None) -> dict[str, Any]:
    """The answerable wait once cuewrap has read the dialog (a token other than ``old``)."""

    def fresh() -> dict[str, Any] | None:
        w = wait_of(env, s.pid)
        return w if w is not None and w["token"] != old else None

    wait: dict[str, Any] = wait_until(fresh, 10, "an answerable wait", detail=s.dump)
    return wait


def attempts(s: PiSession) -> list[dict[str, Any]]:
    return [r for r in s.log_records("answer") if "result" in r]


def test_confirm_answered_yes_and_no(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    s: PiSession = pi_session()
    env = pi_home.env
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    w = token(s, env)
    assert w["kind"] == "confirm" and w["options"] == ["Yes", "No"] and w["count"] == 2
    assert len(w["token"]) >= 32  # 192 bits, URL-safe base64
    assert cuewrap(env, "answer", str(s.pid), "yes") == (0, took(1))
    dialog_finished(s, fakemodel, "confirmed: yes")
    assert wait_of(env, s.pid) is None

    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Again?"})
    w2 = token(s, env, w["token"])
    assert cuewrap(env, "answer", "--token", w2["token"], "2") == (0, took(2))
    dialog_finished(s, fakemodel, "confirmed: no")
    got = attempts(s)
    assert [(a["source"], a["option"], a["result"], a["took"]) for a in got] == [
        ("command line", 1, "answered", 1),
        ("token", 2, "answered", 2),
    ]
    assert "Yes" not in json.dumps(got) and "Deploy" not in json.dumps(s.log_records())


def color_select(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> tuple[PiSession, dict[str, str], dict[str, Any]]:
    """A session with a select of three colours open; its environment and answerable wait."""
    s: PiSession = pi_session()
    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    return s, pi_home.env, token(s, pi_home.env)


def test_select_of_three_by_number_and_by_label(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    s, env, w = color_select(pi_session, pi_home, fakemodel)
    # privacy.body is not "summary": the labels stay inside the session
    assert w["kind"] == "select" and w["options"] is None and w["count"] == 3
    assert cuewrap(env, "answer", str(s.pid), "4") == (1, "no such option")
    assert cuewrap(env, "answer", str(s.pid), "3") == (0, took(3))
    dialog_finished(s, fakemodel, "selected: Blue")

    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    w2 = token(s, env, w["token"])
    assert cuewrap(env, "answer", "--token", w2["token"], "gReEn") == (0, took(2))
    dialog_finished(s, fakemodel, "selected: Green")
    # the token is spent: used twice, refused
    assert cuewrap(env, "answer", "--token", w2["token"], "green") == (1, "stale token")
    assert cuewrap(env, "answer", str(s.pid), "1") == (1, "nothing to answer")


def test_labels_leave_the_session_only_with_summary(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[privacy]\nbody = "summary"\n')
    s: PiSession = pi_session(cuewrap_args=["--config", str(config)])
    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    assert token(s, pi_home.env)["options"] == COLORS
    assert cuewrap(pi_home.env, "answer", str(s.pid), "red") == (0, took(1))
    dialog_finished(s, fakemodel, "selected: Red")


def test_refused_and_nothing_typed_when_the_user_answered_first(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    """The user answered in Pi; then a new dialog with the same title replaced the old one:
    the old token is refused, the new dialog stays open, untouched."""
    s: PiSession = pi_session()
    env = pi_home.env
    fakemodel.push(
        tool_call("test_confirm", {"title": "Same", "message": "First?"}),
        tool_call("test_confirm", {"title": "Same", "message": "Second?"}),
        text("after the dialog"),
    )
    s.prompt("two confirms")
    s.wait_for_screen(r"First\?")
    old = token(s, env)
    s.enter()  # the user answers in Pi: Yes
    s.wait_for_screen(r"Second\?")
    new = token(s, env, old["token"])
    assert cuewrap(env, "answer", "--token", old["token"], "no") == (1, "stale token")
    time.sleep(0.5)
    assert "Second?" in s.screen_text  # still open, nothing typed into it
    assert wait_of(env, s.pid) == new
    assert cuewrap(env, "answer", "--token", new["token"], "no") == (0, took(2))
    dialog_finished(s, fakemodel, "confirmed: no")
    assert fakemodel.content_text(fakemodel.tool_results()[-2]) == "confirmed: yes"


def test_a_key_in_the_session_kills_the_token(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    s, env, w = color_select(pi_session, pi_home, fakemodel)
    s.send("x")  # any key: the selector ignores this one
    wait_until(lambda: wait_of(env, s.pid) is None, 5, "the token withdrawn")
    assert cuewrap(env, "answer", "--token", w["token"], "2") == (1, "stale token")
    assert cuewrap(env, "answer", str(s.pid), "2") == (1, "nothing to answer")
    time.sleep(0.5)
    assert "→ Red" in s.screen_text  # the selection did not move, the dialog is open
    s.enter()
    dialog_finished(s, fakemodel, "selected: Red")
    # (a dead token is in no registry entry: the command says so without asking the session)
    assert [a["why"] for a in attempts(s)] == ["nothing to answer"]


def test_a_remapped_selector_key(pi_session: Any, pi_home: PiHome, fakemodel: FakeModel) -> None:
    (pi_home.agent_dir / "keybindings.json").write_text(json.dumps({"tui.select.down": "ctrl+b"}))
    s: PiSession = pi_session()
    env = pi_home.env
    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    token(s, env)
    assert cuewrap(env, "answer", str(s.pid), "3") == (0, took(3))  # ctrl+b ctrl+b enter
    dialog_finished(s, fakemodel, "selected: Blue")

    (pi_home.agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.select.down": "shift+alt+pageDown"})
    )
    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    token(s, env)
    code, out = cuewrap(env, "answer", str(s.pid), "2")
    assert code == 1 and "cannot type" in out, out
    time.sleep(0.5)
    assert "→ Red" in s.screen_text
    s.enter()
    dialog_finished(s, fakemodel, "selected: Red")


def test_pi_took_another_option_than_the_one_asked_for(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    """Pi's keybindings file changed after Pi read it (Pi reads it at start and at /reload
    only): cuewrap types the file's keys, Pi still reads its own, and the select closes with
    another option than the one asked for. Pi says which (the bridge's ``ui_prompt_end``):
    the answer prints it and fails, and the decision log has it. Then, with the file as Pi
    read it again, a confirm closed with No when No was asked for is answered."""
    s: PiSession = pi_session()
    env = pi_home.env
    open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
    token(s, env)
    bindings = pi_home.agent_dir / "keybindings.json"
    bindings.write_text(json.dumps({"tui.select.down": "ctrl+b"}))  # Pi still moves with ↓
    assert cuewrap(env, "answer", str(s.pid), "3") == (1, "Pi took option 1, not 3")
    dialog_finished(s, fakemodel, "selected: Red")
    [attempt] = attempts(s)
    assert (attempt["option"], attempt["took"], attempt["result"]) == (3, 1, "other option taken")

    bindings.unlink()
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    token(s, env)
    assert cuewrap(env, "answer", str(s.pid), "no") == (0, took(2))
    dialog_finished(s, fakemodel, "confirmed: no")


def test_no_such_session(pi_home: PiHome) -> None:
    assert cuewrap(pi_home.env, "answer", "999999999", "1") == (1, "no such session")
    assert cuewrap(pi_home.env, "answer", "--token", "nope", "1") == (1, "stale token")
    assert cuewrap(pi_home.env, "answer", "x")[0] == 2


TEST_USER = "cuewrap-answer-test"
SYSTEM_PYTHON = "/usr/bin/python3"  # the test user cannot read the venv under root's home


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a second user")
def test_another_uid_is_refused(pi_session: Any, pi_home: PiHome, fakemodel: FakeModel) -> None:
    useradd = system_tool("useradd")  # in /usr/sbin, which root's PATH may lack
    if useradd is None or not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.fail("useradd or /usr/bin/python3 is missing: cannot test as a second user")
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run([useradd, "-M", "-s", "/bin/false", TEST_USER], check=True)
    other = pwd.getpwnam(TEST_USER).pw_uid
    s: PiSession = pi_session()
    env = pi_home.env
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    token(s, env)
    path = next(p for p in (Path(d) / f"{s.pid}.sock" for d in _registry_dirs(env)) if p.exists())
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    probe = (
        "import socket,sys,json\n"
        "c=socket.socket(socket.AF_UNIX)\n"
        "try:\n c.connect(sys.argv[1])\nexcept PermissionError:\n print('EACCES'); sys.exit()\n"
        "try:\n c.sendall(json.dumps({'v':1,'op':'answer','choice':'yes'}).encode()+b'\\n')\n"
        " print('reply', c.recv(100))\n"
        "except OSError as e:\n print('closed', type(e).__name__)\n"
    )

    def as_other() -> str:
        done = subprocess.run(
            [SYSTEM_PYTHON, "-c", probe, str(path)], user=other, capture_output=True,
            text=True, timeout=10, cwd="/",
        )  # fmt: skip
        return done.stdout.strip()

    assert as_other() == "EACCES"  # the directory (0700) and the socket (0600) keep it out
    # Open both up as a misconfiguration would: the peer check alone must refuse it.
    os.chmod(path.parent, 0o711)
    os.chmod(path, 0o666)
    try:
        got = as_other()
        assert got == "reply b''" or got.startswith("closed"), got  # no reply: closed at once
    finally:
        os.chmod(path, 0o600)
        os.chmod(path.parent, 0o700)
    s.wait_log(lambda r: r.get("kind") == "answer_request" and r.get("why") == "another uid")
    time.sleep(0.3)
    assert "Now?" in s.screen_text  # still open
    assert cuewrap(env, "answer", str(s.pid), "no") == (0, took(2))
    dialog_finished(s, fakemodel, "confirmed: no")


def _registry_dirs(env: dict[str, str]) -> list[str]:
    from cuewrap.sessions.registry import directories

    return directories(env)


def test_answer_to_dialog_closed_times(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    """20 confirms answered with ``cuewrap answer``: the command's time from start to exit
    (the dialog closed), and the session's own claim-to-closed time (the log's ``ms``)."""
    s: PiSession = pi_session()
    env = pi_home.env
    wall: list[float] = []
    old: str | None = None
    for i in range(20):
        open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": f"#{i}?"})
        w = token(s, env, old)
        old = w["token"]
        t0 = time.monotonic()
        assert cuewrap(env, "answer", "--token", w["token"], "yes") == (0, took(1))
        wall.append((time.monotonic() - t0) * 1000)
        dialog_finished(s, fakemodel, "confirmed: yes")
    inside = [float(a["ms"]) for a in attempts(s)]
    assert len(inside) == 20
    opened = [r["t"] for r in s.log_records("fact") if r.get("type") == "UiPromptStart"]
    ready = [r["t"] for r in s.log_records("answer") if r.get("state") == "answerable"]
    to_token = [(b - a) * 1000 for a, b in zip(opened, ready, strict=True)]
    print(
        f"\nanswer command start->exit ms: p50 {statistics.median(wall):.0f} max {max(wall):.0f};"
        f" session claim->ui_prompt_end ms: p50 {statistics.median(inside):.1f}"
        f" max {max(inside):.1f}; ui_prompt_start->token ms: p50"
        f" {statistics.median(to_token):.0f} max {max(to_token):.0f}"
    )


_TITLE = re.compile(rb"\x1b\][02];([^\x07\x1b]*)(?:\x07|\x1b\\)")


def last_title(s: PiSession) -> str | None:
    found = _TITLE.findall(s.raw_output)
    return found[-1].decode("utf-8", "replace") if found else None


def test_an_answer_from_elsewhere_clears_the_mark_and_shows_on_cue(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    s: PiSession = pi_session()
    env = pi_home.env
    ready_away(s)  # away: the wait gets its mark and reminder
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    wait_until(lambda: (last_title(s) or "").startswith("[?]"), 5, "the [?] mark", detail=s.dump)
    token(s, env)
    assert cuewrap(env, "answer", str(s.pid), "yes") == (0, took(1))
    dialog_finished(s, fakemodel, "confirmed: yes")
    # the wait ended with the dialog: its reminder is stale, the [?] mark gone
    wait_until(lambda: not (last_title(s) or "").startswith("[?]"), 5, "the mark cleared")
    withdrawn = s.wait_log(lambda r: r.get("kind") == "withdraw")
    assert "wait ended" in str(withdrawn.get("reason")), withdrawn
    s.focus_in()
    s.submit("/cue")
    s.wait_for_screen(r"Last answer from elsewhere: .* from the command line, option 1: answered")


def test_notify_command_gets_the_token_and_answers_with_it(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel, tmp_path: Path
) -> None:
    """The phone's path: the user's notify.command is told {token, options} (and
    CUEWRAP_CUE_ANSWER_TOKEN) with the needs-input cue; the token answers the dialog."""
    out = tmp_path / "notified"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\n{{ cat; echo "env=$CUEWRAP_CUE_ANSWER_TOKEN"; }} >> {out}\n')
    hook.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text(f'[notify]\ncommand = ["{hook}"]\n')
    s: PiSession = pi_session(cuewrap_args=["--config", str(config)])
    env = pi_home.env
    ready_away(s)
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    wait_until(lambda: out.exists() and out.read_text().count("\n") >= 2, 10,
               "notify.command's run", detail=s.dump)  # fmt: skip
    lines = out.read_text().splitlines()
    got = json.loads(lines[0])
    assert got["event"] == "needs-input"
    answer = got["answer"]
    assert answer["options"] == ["Yes", "No"]
    assert lines[1] == f"env={answer['token']}"
    assert wait_of(env, s.pid) is not None and wait_of(env, s.pid)["token"] == answer["token"]
    assert cuewrap(env, "answer", "--token", answer["token"], "no") == (0, took(2))
    dialog_finished(s, fakemodel, "confirmed: no")


def test_an_ask_question_answered(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel, ask_ext: Path
) -> None:
    """The Ask questionnaire's one single-choice question: answered by label; a
    multi-select one is not answerable."""
    s: PiSession = pi_session(extensions=[ask_ext])
    env = pi_home.env
    opts = (("Blue", "calm"), ("Red", "loud"), ("Green", "fresh"))
    fakemodel.push(tool_call("ask_user_question", ask_question_args(options=opts)),
                   text("after the dialog"))  # fmt: skip
    s.prompt("ask me")
    w = token(s, env)
    assert (w["kind"], w["options"], w["count"]) == ("ask", None, 3)
    assert cuewrap(env, "answer", str(s.pid), "green") == (0, took_line(3, None))
    s.wait_for_screen(r"after the dialog")
    assert '="Green"' in fakemodel.content_text(fakemodel.tool_results()[-1])

    fakemodel.push(tool_call("ask_user_question", ask_question_args(options=opts,
                   multi_select=True)), text("after the second"))  # fmt: skip
    s.wait_idle()
    s.prompt("ask again")
    s.wait_log(lambda r: r.get("kind") == "answer" and r.get("state") == "not answerable")
    assert wait_of(env, s.pid) is None
    assert cuewrap(env, "answer", str(s.pid), "1") == (1, "nothing to answer")


def test_inline_rendering_too(pi_session: Any, pi_home: PiHome, fakemodel: FakeModel) -> None:
    """Pi's tuiMode = "regular" (inline on the main screen): the dialog is read the same."""
    pi_home.write_settings(tuiMode="regular")
    s: PiSession = pi_session()
    env = pi_home.env
    for _ in range(2):
        open_dialog(s, fakemodel, "test_select", {"title": "Pick a color", "options": COLORS})
        token(s, env)
        assert cuewrap(env, "answer", str(s.pid), "blue") == (0, took(3))
        dialog_finished(s, fakemodel, "selected: Blue")
