"""Answering real Claude Code's permission prompts and questions from elsewhere, in generic
mode (docs/answering.md, "Claude Code"): the pinned Claude Code on the fake Anthropic API, the
user away. Its own report (OSC 7501 ``blocked:kind=…``) and its screen make the wait
answerable; ``cuewrap answer`` approves (the command runs, the model gets its output) or
denies (it does not run); a widening option is refused by number and by token; the user's own
key first kills the token; a desktop button (real dunst) approves once and never offers more.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from agentrig import PY
from answerrig import WIDENS, AnswerRig, typed
from clauderig import ClaudeSession
from fakeanthropic import FakeAnthropic, text, tool_use
from waiting import absence_window, wait_until


def bash(command: str, description: str = "Run the release step") -> Any:
    return tool_use("Bash", {"command": command, "description": description})


def ask(question: str, labels: list[str], *, multi: bool = False) -> Any:
    options = [{"label": label, "description": f"The {label} one"} for label in labels]
    q = {"question": question, "header": "Choice", "multiSelect": multi, "options": options}
    return tool_use("AskUserQuestion", {"questions": [q]})


class Rig(AnswerRig[ClaudeSession]):
    """A Claude Code session with a private registry directory, and ``cuewrap`` beside it."""

    program = "claude"
    shows = "Do you want to proceed"
    session = ClaudeSession

    @property
    def fake(self) -> FakeAnthropic:
        return self.s.fake

    def results(self) -> list[dict[str, Any]]:
        """Every tool result the model was sent (after the last assistant message of each
        agent turn)."""
        found: list[dict[str, Any]] = []
        for body in self.fake.turns:
            msgs = body.get("messages", [])
            last = max((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), default=-1)
            for m in msgs[last + 1 :]:
                content = m.get("content")
                if m.get("role") == "user" and isinstance(content, list):
                    found += [b for b in content if b.get("type") == "tool_result"]
        return found

    def result_text(self) -> str:
        got = wait_until(self.results, 20, "the tool's result sent to the model")
        content = got[-1].get("content")
        if isinstance(content, list):
            return " ".join(str(b.get("text", "")) for b in content)
        return str(content)

    def settled(self, after: int) -> None:
        """Claude Code reported done or idle after the ``after``-th status report."""
        wait_until(
            lambda: any(f["state"] in ("done", "idle") for f in self.s.statuses()[after:]),
            20,
            "Claude Code to settle",
        )


@pytest.mark.pi
def test_a_bash_prompt_approved_by_number_runs_the_command(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    steps = [bash("echo RELEASED | tee released.txt"), text("The release ran.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.prompt("release it")
    w = r.token()
    # kind from the report, the options shown (labels stay inside without summary)
    assert w["kind"] == "permission" and w["count"] == 3 and w["options"] is None
    assert len(w["token"]) >= 32
    assert not (r.s.cwd / "released.txt").exists()
    assert r.cuewrap("answer", str(r.pid), "1") == (0, typed(1))
    r.s.wait_text("The release ran")
    assert (r.s.cwd / "released.txt").read_text() == "RELEASED\n"
    assert "RELEASED" in r.result_text()
    assert r.wait() is None
    assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
        ("command line", 1, "answered")
    ]
    # the token is spent
    assert r.cuewrap("answer", "--token", w["token"], "1") == (1, "stale token")
    assert r.cuewrap("answer", str(r.pid), "1") == (1, "nothing to answer")
    # nothing of the dialog in the log
    assert "RELEASED" not in json.dumps(r.s.records("answer"))


@pytest.mark.pi
def test_widening_refused_by_number_and_token_then_denied_by_label(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    steps = [bash("touch denied.txt"), text("Understood.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.prompt("make a file")
    w = r.token()
    label = f"Yes, and always allow access to {r.s.cwd} from this project"
    statuses = len(r.s.statuses())
    # "always allow" by number, by token with its exact label, by a label of another case
    assert r.cuewrap("answer", str(r.pid), "2") == (1, WIDENS)
    assert r.cuewrap("answer", "--token", w["token"], label) == (1, WIDENS)
    assert r.cuewrap("answer", str(r.pid), label.upper()) == (1, WIDENS)
    assert r.cuewrap("answer", str(r.pid), "4") == (1, "no such option")
    # nothing typed: Claude Code still waits (no report since), the same token still answers
    absence_window(0.5, "a report from Claude Code")
    assert [f["state"] for f in r.s.statuses()[statuses - 1 :]] == ["blocked"]
    assert r.wait() == w
    assert r.cuewrap("answer", "--token", w["token"], "no") == (0, typed(3))
    r.settled(statuses)
    absence_window(1.0, "the denied command to run")
    assert not (r.s.cwd / "denied.txt").exists()
    assert [(a["option"], a["result"]) for a in r.attempts()] == [
        (2, "refused"),
        (2, "refused"),
        (2, "refused"),
        (4, "refused"),
        (3, "answered"),
    ]
    assert r.wait() is None


@pytest.mark.pi
def test_the_users_key_first_kills_the_token_and_nothing_is_typed(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    steps = [bash("touch keyed.txt"), text("Ran after your key.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.prompt("make a file")
    r.users_key_first("keyed.txt", "Ran after your key", b"\r")


@pytest.mark.pi
def test_always_allow_by_its_exact_label_with_the_pid(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    steps = [bash("touch widened.txt"), text("Allowed for good.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.prompt("make a file")
    r.token()
    label = f"Yes, and always allow access to {r.s.cwd} from this project"
    assert r.cuewrap("answer", str(r.pid), label) == (0, typed(2))
    r.s.wait_text("Allowed for good")
    assert (r.s.cwd / "widened.txt").exists()
    assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
        ("command line", 2, "answered")
    ]


@pytest.mark.pi
def test_other_tools_write_approved_and_fetch_denied(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    """Every tool's prompt has the same shape: Write (its "accept edits" option widens) and
    WebFetch ("don't ask again", its No "No, and tell Claude what to do differently")."""
    steps: list[Any] = [None, text("Written."),
                        tool_use("WebFetch", {"url": "https://example.com/", "prompt": "sum"}),
                        text("Not fetched.")]  # fmt: skip
    home_cwd = tmp_path / "home" / "proj"  # clauderig's project directory
    steps[0] = tool_use("Write", {"file_path": str(home_cwd / "new.txt"), "content": "hello\n"})
    r = Rig(claude_sessions, tmp_path, steps, env={"CUEWRAP_PRIVACY_BODY": "summary"})
    assert r.s.cwd == home_cwd
    r.prompt("write a file", shows="Do you want to create new.txt")
    w = r.token()
    assert w["kind"] == "permission" and w["count"] == 3
    assert w["options"][0] == "Yes" and w["options"][1].startswith(
        "Yes, and switch to accept edits"
    )
    assert r.cuewrap("answer", str(r.pid), "2") == (1, WIDENS)
    assert r.cuewrap("answer", str(r.pid), "1") == (0, typed(1))
    r.s.wait_text("Written.")
    assert (home_cwd / "new.txt").read_text() == "hello\n"
    statuses = len(r.s.statuses())
    r.prompt("fetch a page", shows="Do you want to allow Claude to fetch this content")
    w2 = r.token(w["token"])
    assert w2["options"] == ["Yes", "Yes, and don't ask again for example.com",
                             "No, and tell Claude what to do differently (esc)"]  # fmt: skip
    assert r.cuewrap("answer", "--token", w2["token"], "2") == (1, WIDENS)
    assert r.cuewrap("answer", "--token", w2["token"], "3") == (0, typed(3))
    r.settled(statuses + 1)
    assert [(a["option"], a["result"]) for a in r.attempts()] == [
        (2, "refused"), (1, "answered"), (2, "refused"), (3, "answered")]  # fmt: skip
    assert "example" not in json.dumps(r.s.records())  # labels never in the log


@pytest.mark.pi
def test_a_question_answered_by_label_with_summary(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    steps = [ask("Which color should the button be?", ["Blue", "Red"]), text("Red it is.")]
    r = Rig(claude_sessions, tmp_path, steps, env={"CUEWRAP_PRIVACY_BODY": "summary"})
    r.prompt("ask me", shows="Enter to select")
    w = r.token()
    assert w["kind"] == "question" and w["options"] == ["Blue", "Red"] and w["count"] == 2
    assert r.cuewrap("answer", "--token", w["token"], "rEd") == (0, typed(2))
    r.s.wait_text("Red it is")
    assert "Red" in r.result_text() and "Blue" not in r.result_text()
    assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
        ("token", 2, "answered")
    ]


@pytest.mark.pi
def test_a_multi_select_question_is_refused_with_its_own_line(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    """A multi-select ``AskUserQuestion``: Claude Code says it waits, but its checkboxes are
    no dialog cuewrap reads: no token, and an answer says so; nothing typed."""
    from cuewrap.answer.book import NOT_READ

    steps = [ask("Which colors?", ["Blue", "Red"], multi=True), text("Colors noted.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.prompt("ask me", shows="Enter to select")
    wait_until(
        lambda: any(a.get("state") == "not answerable" for a in r.s.records("answer")),
        15,
        "the dialog found unreadable",
    )
    assert r.wait() is None
    statuses = len(r.s.statuses())
    assert r.cuewrap("answer", str(r.pid), "1") == (1, NOT_READ)
    absence_window(1.0, "a report after the refused answer")
    assert r.s.statuses()[statuses - 1 :][-1]["state"] == "blocked"  # still waits
    assert [(a["option"], a["result"]) for a in r.attempts()] == [(1, "refused")]


@pytest.mark.pi
def test_report_to_token_and_answer_to_closed(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    """20 Bash prompts answered by ``cuewrap answer`` at once: from Claude Code's ``blocked``
    report to the token (the log's times), from the claim to the program's next report (the
    answer held until the dialog settled, answer/generic.py), from the keys to that report."""
    n = 20
    steps: list[Any] = []
    for i in range(n):
        steps += [bash(f"touch made-{i}.txt"), text(f"Made number {i}.")]
    r = Rig(claude_sessions, tmp_path, steps)
    r.answer_each(n, "yes")
    print("\n" + r.timings(n))


@pytest.mark.desktop
def test_a_desktop_button_approves_once_and_offers_only_yes_and_no(
    tmp_path: Path, claude_sessions: list[ClaudeSession], dunst_menu: Any
) -> None:
    """Real dunst on a private bus: the needs-input notification of a Bash prompt says the
    command (summaries on) and has the one-time Yes and the No, never "always allow"; a click
    on Yes approves (dunst's context menu picks the action, as tests/test_answer_desktop.py)."""
    d = dunst_menu
    desktop = {k: d.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    steps = [bash("touch clicked.txt"), text("Clicked through.")]
    r = Rig(
        claude_sessions,
        tmp_path,
        steps,
        env={
            **desktop,
            "CUEWRAP_NOTIFY_DESKTOP": "auto",
            "CUEWRAP_NOTIFY_TERMINAL": "off",
            "CUEWRAP_PRIVACY_BODY": "summary",
        },
    )
    r.prompt("make a file")
    sid = r.desktop_click(d, 1)
    r.s.wait_text("Clicked through")
    assert (r.s.cwd / "clicked.txt").exists()
    menu = (d.tmp / "dunst-menu").read_text()
    assert f"#Yes (Claude Code — proj) [{sid},answer-1]" in menu
    assert f"#No (Claude Code — proj) [{sid},answer-3]" in menu
    assert "answer-2" not in menu and "always" not in menu
    # with summaries the notification says what is asked, in Claude Code's own words
    from desktoprig import dunst_history

    bodies = [h["body"] for h in dunst_history(d.env)]  # (and Finished, once the run ended)
    asked = [b for b in bodies if b.startswith("Needs your input")]
    assert asked == ["Needs your input: approve Bash: touch clicked.txt"]
    assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
        ("desktop", 1, "answered")
    ]


@pytest.mark.pi
def test_the_phone_approves_and_hears_it(
    tmp_path: Path, claude_sessions: list[ClaudeSession]
) -> None:
    """The phone built in (docs/phone.md; tests/test_phone_pi.py for Pi) with Claude Code: the
    reminder on the ntfy stand-in says the command it approves (summaries on), its buttons
    are Yes and No only, a tap on Yes runs the command and the phone's reminder then says
    "Answered: Yes"."""
    from ntfystand import NtfyStandIn

    topic, reply = "cuewrap-test-claude-Mx83QzPw", "cuewrap-test-claude-Rk27VnLt"
    with NtfyStandIn(token="tk_machine") as ntfy:
        ntfy.write_only["tk_write"] = {reply}
        phone = {"CUEWRAP_PHONE_ENABLED": "true", "CUEWRAP_PHONE_NTFY_SERVER": ntfy.url,
                 "CUEWRAP_PHONE_TOPIC": topic, "CUEWRAP_PHONE_REPLY_TOPIC": reply,
                 "CUEWRAP_PHONE_TOKEN": "tk_machine", "CUEWRAP_PHONE_REPLY_TOKEN": "tk_write",
                 "CUEWRAP_PRIVACY_BODY": "summary"}  # fmt: skip
        steps = [bash("touch phone.txt"), text("Approved from the phone.")]
        r = Rig(claude_sessions, tmp_path, steps, env=phone)
        r.prompt("make a file")
        [note] = wait_until(lambda: [m for m in ntfy.published(topic) if m.get("actions")], 15,
                            "the reminder", detail=lambda: r.s.records("delivery"))  # fmt: skip
        assert note["message"].endswith("approve Bash: touch phone.txt")
        assert [b["label"] for b in note["actions"]] == ["Yes", "No"]
        assert [b["body"].split()[1] for b in note["actions"]] == ["1", "3"]
        assert ntfy.tap(note, "Yes") == 200
        r.s.wait_text("Approved from the phone")
        assert (r.s.cwd / "phone.txt").exists()
        assert [(a["source"], a["option"], a["result"]) for a in r.attempts()] == [
            ("phone", 1, "answered")
        ]
        sid = note["sequence_id"]
        wait_until(lambda: [m for m in ntfy.current(topic) if m["sequence_id"] == sid
                            and m["message"] == "Answered: Yes"], 10, "the phone told")  # fmt: skip
        assert ntfy.refused == 0


@pytest.mark.tmux
def test_inside_tmux_with_the_pane_in_copy_mode(tmp_path: Path) -> None:
    """Claude Code under cuewrap in a tmux pane (no client attached: the user is away), the
    pane put in copy mode after the prompt opened: the answer still reaches Claude Code (cuewrap
    types into the program's own PTY, not through tmux) and the pane stays in copy mode."""
    from types import SimpleNamespace

    from clauderig import claude_bin, claude_environment, claude_home
    from tmuxrig import SESSION, TmuxRig

    fake = FakeAnthropic([bash("touch tmux.txt"), text("Ran inside tmux.")]).start()
    try:
        home, cwd = claude_home(tmp_path)
        run = tmp_path / "run"
        run.mkdir(mode=0o700)
        env = claude_environment(claude_bin(), home, fake.base_url)
        env.update(XDG_RUNTIME_DIR=str(run), TMPDIR=str(tmp_path), TERM="xterm-256color")
        log = tmp_path / "log.jsonl"
        rig = TmuxRig(SimpleNamespace(env=env, cwd=cwd, root=tmp_path))  # type: ignore[arg-type]
        argv = [PY, "-m", "cuewrap", "--log", str(log), "--", claude_bin() + "/claude"]
        rig.start(argv)
        pane = f"{SESSION}:0"
        try:
            screen = lambda: "".join("\n".join(rig.capture(pane)).split())  # noqa: E731
            wait_until(lambda: "~/proj" in screen() and "❯" in screen(), 30, "Claude Code ready",
                       detail=screen)  # fmt: skip
            time.sleep(2)  # (no "? for shortcuts" line in a detached pane to wait for)
            rig.tmux("send-keys", "-t", pane, "-l", "make a file")
            wait_until(lambda: "makeafile" in screen(), 10, "the words typed", detail=screen)
            rig.tmux("send-keys", "-t", pane, "Enter")
            wait_until(lambda: "Doyouwanttoproceed" in screen(), 30, "the prompt", detail=screen)
            user = {**os.environ, "XDG_RUNTIME_DIR": str(run), "TMPDIR": str(tmp_path)}

            def wait() -> dict[str, Any] | None:
                done = subprocess.run([PY, "-m", "cuewrap", "ls", "--json"], env=user,
                                      capture_output=True, text=True, timeout=20)  # fmt: skip
                rows = json.loads(done.stdout)
                return rows[0] if rows and rows[0]["wait"] else None

            row = wait_until(wait, 15, "an answerable wait", detail=screen)
            assert row["wait"]["kind"] == "permission" and row["tmux_pane"]
            rig.tmux("copy-mode", "-t", pane)
            in_mode = rig.tmux("display-message", "-p", "-t", pane, "#{pane_in_mode}").strip()
            assert in_mode == "1"
            done = subprocess.run([PY, "-m", "cuewrap", "answer", str(row["pid"]), "1"],
                                  env=user, capture_output=True, text=True, timeout=20)  # fmt: skip
            assert (done.returncode, (done.stdout + done.stderr).strip()) == (0, typed(1))
            wait_until((cwd / "tmux.txt").exists, 15, "the command to run")
            assert rig.tmux("display-message", "-p", "-t", pane, "#{pane_in_mode}").strip() == "1"
        finally:
            rig.close()
    finally:
        fake.stop()
