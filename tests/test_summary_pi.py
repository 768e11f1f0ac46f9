"""``privacy.body = "summary"`` over real Pi (1.4.0 and latest): what each notification says,
and, with the default ``none``, that no question, answer or error text goes anywhere — not in
a notification, not to ``notify.command``, not in the decision log, and not even over the
bridge socket (recorded by tests/pi-ext/cuewrap-wiretap-ext.ts inside Pi).

One Pi session per case goes through: a confirm dialog, the Ask questionnaire (rpiv 2.11.0),
an answer whose first line is 500 characters with escape sequences and U+202E, a 400 and a
503 failure, a cancelled run. The user is away throughout (a focus-out report), so each of
them gives one notification: OSC 777 in cuewrap's output (the rig's terminal is unrecognised)
and one ``notify.command`` run (a recorder script).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from desktoprig import dunst_history
from fakemodel import FakeModel, http_error, text, tool_call
from pirig import TESTS, PiSession, ask_question_args, ready_away
from tmuxrig import SESSION, Scene
from waiting import absence_window, wait_until

from cuewrap.engine.summary import BODY_MAX, body, clean

WIRETAP_EXT = TESTS / "pi-ext" / "cuewrap-wiretap-ext.ts"
NOTIFY_TITLE = "Pi — work"

PROMPT = "PROMPT-SECRET-1 please do it"
TITLE = "TITLE-SECRET Deploy to production?"
MESSAGE = "MESSAGE-SECRET the dialog's message"
QUESTION = "QUESTION-SECRET which colour, \x1b[1mreally\x1b[0m?"
LABELS = (("LABEL-SECRET-A", "DESC-SECRET-A"), ("LABEL-SECRET-B", "DESC-SECRET-B"))
# the first line: 500 characters, with colour escapes, a title-setting OSC and U+202E
FIRST = (
    "ANSWER-SECRET start \x1b[31mred\x1b[0m \u202ereversed\u202c \x1b]0;evil\x07 "
    + "lorem ipsum " * 38
)
FIRST = (FIRST + "x" * 500)[:500]
ANSWER = FIRST + "\nSECONDLINE-SECRET not in any summary"
ASK_ANSWER = "ASKDONE-SECRET thanks"
E400 = "E400-SECRET fake bad request"
E503 = "E503-SECRET fake overloaded"
# text that must never appear anywhere with summaries off; with them on, the prompt, the
# dialog's message, the Ask options and the answer's second line still never do
ALWAYS_PRIVATE = ("PROMPT-SECRET", "MESSAGE-SECRET", "LABEL-SECRET", "DESC-SECRET", "SECONDLINE")
SUMMARY_ONLY = ("TITLE-SECRET", "QUESTION-SECRET", "ANSWER-SECRET", "ASKDONE", "E400", "E503")

RECORDER = textwrap.dedent(
    """
    import json, os, sys
    data = sys.stdin.read()
    env = {k: v for k, v in os.environ.items() if k.startswith("CUEWRAP_CUE_")}
    with open(sys.argv[1], "a") as fh:
        fh.write(json.dumps({"stdin": data, "env": env}) + "\\n")
    """
)

_OSC = re.compile(rb"\x1b\](\d+);([^\x07\x1b]*)(?:\x07|\x1b\\)")


def notifications(raw: bytes) -> list[tuple[str, str]]:
    """(title, body) of every OSC 777 notification cuewrap wrote."""
    out = []
    for m in _OSC.finditer(raw):
        parts = m.group(2).decode("utf-8", errors="replace").split(";", 2)
        if m.group(1) == b"777" and parts[0] == "notify" and len(parts) == 3:
            out.append((parts[1], parts[2]))
    return out


def command_calls(out: Path) -> list[dict[str, Any]]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def wire(path: Path) -> list[dict[str, Any]]:
    """The lines the bridge extension wrote to its socket, parsed."""
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def osc_body(summary_on: bool, status: str, said: str | None) -> str:
    """What cuewrap's OSC 777 body is: the composed body, ';' replaced (OSC 777 separator)."""
    return (body(status, said) if summary_on else status).replace(";", ",")


class Case:
    def __init__(self, s: PiSession, out: Path) -> None:
        self.s, self.out = s, out

    def cues(self) -> int:
        return len(self.s.log_records("cue"))

    def wait_cue(self, n: int, what: str) -> None:
        wait_until(lambda: self.cues() >= n and len(command_calls(self.out)) >= n, 20,
                   f"cue {n}: {what}", detail=self.s.dump)  # fmt: skip


@pytest.mark.pi
@pytest.mark.parametrize("summary_on", [True, False], ids=["summary", "none"])
def test_what_each_notification_says(
    pi_session: Callable[..., PiSession],
    fakemodel: FakeModel,
    ask_ext: Path,
    tmp_path: Path,
    summary_on: bool,
) -> None:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out, tap = tmp_path / "calls.jsonl", tmp_path / "wire.jsonl"
    fakemodel.script(
        [
            tool_call("test_confirm", {"title": TITLE, "message": MESSAGE}),
            text(ANSWER),
            tool_call("ask_user_question", ask_question_args(QUESTION, "Colour", LABELS)),
            text(ASK_ANSWER),
            http_error(400, E400, error_type="invalid_request_error"),  # not retried
            *[http_error(503, E503)] * 3,  # the first try and Pi's 2 retries
            tool_call("bash", {"command": "sleep 30"}),
        ]
    )
    env = {
        "CUEWRAP_NOTIFY_COMMAND": shlex.join([sys.executable, str(script), str(out)]),
        "CUEWRAP_TEST_WIRETAP": str(tap),
    }
    if summary_on:
        env["CUEWRAP_PRIVACY_BODY"] = "summary"
    s = pi_session(extensions=[ask_ext, WIRETAP_EXT], env=env)
    c = Case(s, out)
    ready_away(s)

    s.prompt(PROMPT)  # a confirm dialog, then the 500-character answer
    s.wait_dialog()
    c.wait_cue(1, "needs-input (confirm)")
    s.enter()
    c.wait_cue(2, "finished")
    s.wait_idle()

    s.prompt("PROMPT-SECRET-2 ask me")  # the Ask questionnaire, then a short answer
    s.wait_dialog()
    c.wait_cue(3, "needs-input (Ask)")
    s.enter()
    c.wait_cue(4, "finished (after Ask)")
    s.wait_idle()

    s.prompt("PROMPT-SECRET-3 fail")  # 400: no retry
    c.wait_cue(5, "failed (400)")
    s.wait_idle()
    s.prompt("PROMPT-SECRET-4 fail again")  # 503: retried twice, then failed
    c.wait_cue(6, "failed (503)")
    s.wait_idle()

    s.prompt("PROMPT-SECRET-5 then cancel")  # Escape during the tool: cancelled
    s.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "ToolStart"
               and r.get("tool_name") == "bash")  # fmt: skip
    s.escape()
    c.wait_cue(7, "cancelled")
    s.wait_idle()
    absence_window(0.5, "a late notification")

    # -- the notifications -------------------------------------------------------------------
    expected = [
        ("needs-input", "Needs your input", TITLE),
        ("finished", "Finished", FIRST),
        ("needs-input", "Needs your input", QUESTION),
        ("finished", "Finished", ASK_ANSWER),
        ("failed", "Failed", "400 " + E400),
        ("failed", "Failed", "503 " + E503),
        ("cancelled", "Cancelled", None),
    ]
    shown = notifications(s.raw_output)
    assert [t for t, _ in shown] == [NOTIFY_TITLE] * len(expected), shown
    assert [b for _, b in shown] == [osc_body(summary_on, st, said) for _, st, said in expected]
    for _, b in shown:
        assert len(b) <= BODY_MAX and b == clean(b) and "\u202e" not in b
    if summary_on:  # the long answer: cut to fit, with an ellipsis, its start kept
        long_body = shown[1][1]
        assert BODY_MAX - 1 <= len(long_body) <= BODY_MAX and long_body.endswith("…")
        assert long_body.startswith("Finished: ANSWER-SECRET start red reversed lorem ipsum")

    # -- notify.command: the summary field, and CUEWRAP_CUE_SUMMARY --------------------------
    calls = command_calls(out)
    assert len(calls) == len(expected)
    for call, (event, status, said) in zip(calls, expected, strict=True):
        payload = json.loads(call["stdin"])
        assert payload["event"] == event
        if summary_on:
            want = body(status, said)[len(status) + 2 :]
            assert payload["summary"] == want, (payload, want)
            assert call["env"]["CUEWRAP_CUE_SUMMARY"] == want
        else:
            assert "summary" not in payload and "CUEWRAP_CUE_SUMMARY" not in call["env"]

    # -- the decision log: that a summary was used and its length, never its text -----------
    cues = s.log_records("cue")
    assert [c["body"] for c in cues] == [st for _, st, _ in expected]
    if summary_on:
        assert [c["summary_chars"] for c in cues] == [
            len(json.loads(call["stdin"])["summary"]) for call in calls
        ]
        assert all(n > 0 for n in [c["summary_chars"] for c in cues][:6])
    else:
        assert not any("summary_chars" in c for c in cues)

    # -- the bridge socket's traffic ---------------------------------------------------------
    lines = wire(tap)
    kinds = [m["type"] for m in lines]
    assert kinds[:2] == ["auth", "hello"] and kinds.count("agent_end") >= 6, kinds
    with_summary = [m for m in lines if "summary" in m]
    if summary_on:
        said = {(m["type"], m["summary"]) for m in with_summary}
        assert ("ui_prompt_start", TITLE) in said
        assert ("tool_execution_start", clean(QUESTION)) in said
        assert ("agent_end", "400 " + E400) in said and ("agent_end", "503 " + E503) in said
        assert ("agent_end", clean(ASK_ANSWER)) in said
        for m in with_summary:
            assert len(m["summary"]) <= 200 and m["summary"] == clean(m["summary"]), m
    else:
        assert with_summary == []

    s.quit()
    assert s.wait_exit() == 0
    # -- nothing private anywhere -----------------------------------------------------------
    assert s.log_path is not None
    # an answerable wait's options reach notify.command's ``answer`` with summaries on (their
    # labels, never their descriptions; docs/answering.md): looked at there, and apart
    calls, answers = [], []
    for line in out.read_text(encoding="utf-8").splitlines():
        call = json.loads(line)
        cue = json.loads(call["stdin"])
        if "answer" in cue:
            answers.append(cue.pop("answer"))
            call["stdin"] = json.dumps(cue, ensure_ascii=False)
        calls.append(call)
    for answer in answers:
        labels = answer.get("options")
        if summary_on:
            assert labels is None or all("DESC-SECRET" not in x for x in labels), answer
        else:  # a select's labels stay home; a confirm's Yes / No are Pi's own words
            assert labels is None or labels == ["Yes", "No"], answer
    places = {
        "decision log": s.log_path.read_text(encoding="utf-8"),
        "notifications": json.dumps(notifications(s.raw_output), ensure_ascii=False),
        "notify.command": json.dumps(calls, ensure_ascii=False),
        "bridge socket": tap.read_text(encoding="utf-8"),
    }
    for where, content in places.items():
        for secret in ALWAYS_PRIVATE + (() if summary_on else SUMMARY_ONLY):
            assert secret not in content, (where, secret)
    if summary_on:
        for secret in SUMMARY_ONLY:
            assert secret not in places["decision log"], secret
            assert secret in places["notifications"], secret


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["0.74.2"])
def test_an_older_pi_says_what_it_can(
    pi_session: Callable[..., PiSession], fakemodel: FakeModel, tmp_path: Path
) -> None:
    """Pi 0.74.2 has no ui_prompt events (no dialog titles) but its agent_end has the answer:
    /cue says so, and a finished notification still says why."""
    tap = tmp_path / "wire.jsonl"
    fakemodel.script([text("OLDPI-SECRET answer\nmore")])
    env = {"CUEWRAP_PRIVACY_BODY": "summary", "CUEWRAP_TEST_WIRETAP": str(tap)}
    s = pi_session(test_ext=False, extensions=[WIRETAP_EXT], env=env)
    s.submit("/cue")
    said = (
        "privacy.body summary: notifications say Ask's first question, the answer's first line,"
        " the error; no dialog titles (they need ui_prompt, Pi ≥ 0.84.4)"
    )  # the page wraps at the screen's width: any space may be a line break
    s.wait_for_screen(re.compile(r"\s+".join(re.escape(w) for w in said.split())))
    s.focus_out()
    s.prompt("hello")
    wait_until(lambda: notifications(s.raw_output), 30, "the finished notification",
               detail=s.dump)  # fmt: skip
    assert notifications(s.raw_output) == [(NOTIFY_TITLE, "Finished: OLDPI-SECRET answer")]
    ends = [m for m in wire(tap) if m["type"] == "agent_end"]
    assert [m.get("summary") for m in ends] == ["OLDPI-SECRET answer"]
    s.focus_in()
    s.quit()
    assert s.wait_exit() == 0
    assert s.log_path is not None and "OLDPI" not in s.log_path.read_text(encoding="utf-8")


@pytest.mark.desktop
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_the_desktop_notification_says_it_as_plain_text(
    pi_session: Callable[..., PiSession],
    fakemodel: FakeModel,
    dunst: Any,
) -> None:
    """A real notification daemon (dunst, which reads markup in bodies): the summary is the
    body, and '<', '>', '&' in it are escaped so they stay text (no bold, no link)."""
    first = 'MARKUP-SECRET a < b & c > d <b>bold</b> <a href="http://x">link</a>'
    fakemodel.script([text(first + "\nmore")])
    env = {**dunst.desktop(), "CUEWRAP_PRIVACY_BODY": "summary"}
    s = pi_session(env=env)
    s.focus_out()
    s.prompt("hello")
    rec = s.wait_log(lambda r: r.get("kind") == "delivery" and r.get("channel") == "desktop"
                     and r.get("state") in ("delivered", "failed"), 20)  # fmt: skip
    assert rec["state"] == "delivered", rec
    [got] = dunst_history(dunst.env)
    assert got["summary"] == NOTIFY_TITLE
    # what dunst received (its history keeps the body as sent): escaped, because dunst
    # announces body-markup; shown, it reads as the answer's text
    escaped = first.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert got["body"] == "Finished: " + escaped, got
    s.focus_in()
    s.quit()
    assert s.wait_exit() == 0


@pytest.mark.tmux
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_the_tmux_message_says_it(
    tmux_scene: Callable[..., Scene],
    fakemodel: FakeModel,
    pi_home: Any,
) -> None:
    """Inside tmux, away in another window: the status-line message carries the summary, with
    tmux's format characters and separators kept as text."""
    pi_home.env["CUEWRAP_PRIVACY_BODY"] = "summary"
    answer = "TMUX-SECRET 100% #{pane_id} done; next"
    fakemodel.push(tool_call("bash", {"command": "sleep 2"}), text(answer))
    sc = tmux_scene()
    sc.client.prompt("go")
    sc.client.wait_working()
    sc.select(1)
    sc.presence("away")
    msg = sc.wait(lambda: sc.rig.cue_messages(), "a tmux message")
    assert len(msg) == 1, msg
    assert f"message: Pi — work: Finished: {answer} (session {SESSION}, window 0" in msg[0], msg
    sc.select(0)


@pytest.mark.pi
@pytest.mark.parametrize("summary_on", [True, False], ids=["summary", "none"])
def test_without_the_bridge_pi_s_error_report_says_why(
    pi_session: Callable[..., PiSession], fakemodel: FakeModel, summary_on: bool
) -> None:
    """``--no-bridge``: OSC 7501 drives the cues, and Pi's ``error`` report carries the first
    line of the error; with summaries on the failed notification says it, else nothing."""
    fakemodel.script([http_error(400, E400, error_type="invalid_request_error")])
    env = {"CUEWRAP_PRIVACY_BODY": "summary"} if summary_on else {}
    s = pi_session(cuewrap_args=["--no-bridge"], env=env)
    ready_away(s)
    s.prompt("PROMPT-SECRET fail")
    wait_until(lambda: notifications(s.raw_output), 20, "the failed notification",
               detail=s.dump)  # fmt: skip
    absence_window(0.3, "a second notification")
    assert notifications(s.raw_output) == [
        (NOTIFY_TITLE, "Failed: 400 " + E400 if summary_on else "Failed")
    ]
    [cue] = s.log_records("cue")
    assert cue["body"] == "Failed" and cue["why"] == "osc7501 error"
    s.focus_in()
    s.quit()
    assert s.wait_exit() == 0
    assert s.log_path is not None and "E400" not in s.log_path.read_text(encoding="utf-8")
