"""Self-tests of the test rig: the fake model alone, then real Pi (1.4.0 and latest) driven
through PiSession, under cuewrap when ``python -m cuewrap`` works, else directly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, delay, hang, http_error, text, tool_call, tool_calls
from pirig import TEST_EXT, PiHome, PiSession, _descendants, ask_question_args, started_run
from procstat import cmdline, state
from waiting import wait_until

# --------------------------------------------------------------------------------------------
# The fake model on its own (no Pi)


def _post(fm: FakeModel, body: dict[str, Any] | None = None, timeout: float = 5) -> str:
    req = urllib.request.Request(
        fm.base_url + "/chat/completions",
        data=json.dumps(body or {"model": "fake-model", "messages": [], "stream": True}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def _chunks(sse: str) -> list[dict[str, Any]]:
    out = []
    for line in sse.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


@pytest.mark.unit
def test_fake_text_and_default() -> None:
    with FakeModel([text("hello world")], chunk_delay=0) as fm:
        sse = _post(fm)
        assert sse.rstrip().endswith("data: [DONE]")
        chunks = _chunks(sse)
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        assert content == "hello world"
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
        assert chunks[-1]["usage"]["completion_tokens"] > 0
        # queue empty -> "done"
        chunks = _chunks(_post(fm))
        assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "done"
        assert len(fm.requests) == 2


@pytest.mark.unit
def test_fake_tool_calls_delta_format() -> None:
    steps = [
        tool_call("bash", {"command": "sleep 2; echo hi"}),
        tool_calls(("a", {"x": 1}), ("b", '{"y": 2}')),
    ]
    with FakeModel(steps, chunk_delay=0) as fm:
        chunks = _chunks(_post(fm))
        deltas = [c["choices"][0]["delta"] for c in chunks]
        first = next(d["tool_calls"][0] for d in deltas if "tool_calls" in d)
        assert first["id"] == "call_1" and first["type"] == "function"
        assert first["function"]["name"] == "bash"
        args = "".join(
            d["tool_calls"][0]["function"].get("arguments", "") for d in deltas if "tool_calls" in d
        )
        assert json.loads(args) == {"command": "sleep 2; echo hi"}
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
        chunks = _chunks(_post(fm))
        ids = {
            tc["index"]: tc["id"]
            for c in chunks
            for tc in c["choices"][0]["delta"].get("tool_calls", [])
            if "id" in tc
        }
        assert ids == {0: "call_2", 1: "call_3"}


@pytest.mark.unit
def test_fake_error_delay_hang_and_records() -> None:
    with FakeModel([http_error(500), delay(0.5), hang("par")], chunk_delay=0) as fm:
        with pytest.raises(urllib.error.HTTPError) as ei:
            _post(fm)
        assert ei.value.code == 500
        assert json.loads(ei.value.read())["error"]["message"] == "fake upstream failure"
        t = time.monotonic()
        _post(fm)
        assert time.monotonic() - t >= 0.5
        t = time.monotonic()
        with pytest.raises(TimeoutError):
            _post(fm, {"messages": [{"role": "user", "content": "x"}]}, timeout=0.7)
        assert time.monotonic() - t < 3
        # the hanging handler notices the client went away
        wait_until(lambda: fm.served[2].disconnected, 3, "the hanging handler to see the client go")
        assert fm.messages(2) == [{"role": "user", "content": "x"}]
        with urllib.request.urlopen(fm.base_url + "/models", timeout=5) as r:
            assert json.load(r)["data"][0]["id"] == "fake-model"


@pytest.mark.pty
def test_fake_standalone_demo_process(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"type": "text", "text": "from script"}]))
    p = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fakemodel.py")), "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None
        url = p.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url)
        req = urllib.request.Request(
            url + "/chat/completions",
            data=b'{"messages": [], "stream": true}',
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            assert "from script" in "".join(
                c["choices"][0]["delta"].get("content") or "" for c in _chunks(r.read().decode())
            )
    finally:
        p.terminate()
        p.wait(timeout=5)


# --------------------------------------------------------------------------------------------
# Real Pi


def _run_until(s: PiSession, prompt: str) -> None:
    s.prompt(prompt)
    s.wait_idle()


@pytest.mark.pi
def test_bash_tool_run(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 2; echo hi", "all done", prompt="run the tool")
    s.wait_for_screen(r"\$ sleep 2; echo hi")
    s.wait_working()
    s.wait_for_screen(r"Elapsed \d")
    s.wait_for_screen(r"Took \d")
    s.wait_for_screen(r"^ all done$")
    s.wait_idle()
    reqs = fakemodel.wait_requests(2)
    assert len(reqs) == 2
    assert reqs[0]["stream"] is True and reqs[0]["model"] == "fake-model"
    assert "test_confirm" in fakemodel.tool_names(0)
    [result] = fakemodel.tool_results(1)
    assert result["tool_call_id"] == "call_1"
    assert FakeModel.content_text(result).strip() == "hi"
    assert b"\x1b]0;\xcf\x80 - work\x07" in s.raw_output  # Pi's title, passed through
    s.quit()
    assert s.wait_exit() == 0
    s.wait_for_screen("To resume this session")


@pytest.mark.pi
def test_http_500_retries(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(*[http_error(500, "fake upstream failure")] * 3)
    s: PiSession = pi_session()
    s.prompt("fail please")
    s.wait_for_screen(r"Error: Retry failed after 2 attempts: 500: .*fake upstream failure")
    s.wait_idle()
    assert len(fakemodel.requests) == 3  # first attempt + 2 retries, same context
    assert fakemodel.requests[0]["messages"] == fakemodel.requests[2]["messages"]


@pytest.mark.pi
def test_escape_aborts_tool(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 10", prompt="sleep please")
    s.wait_for_screen(r"Elapsed \d")
    t = time.monotonic()
    s.escape()
    s.wait_for_screen(r"Command aborted")
    s.wait_idle()
    assert time.monotonic() - t < 3
    assert len(fakemodel.requests) == 1  # no provider request after the abort
    sleeps = [p for p, _ in _descendants(s.pid) if cmdline(p).startswith("sleep")]
    assert sleeps == []


@pytest.mark.pi
def test_escape_while_model_streams(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(hang("thinking about it"))
    s: PiSession = pi_session()
    s.prompt("hang please")
    s.wait_for_screen("thinking about it")
    s.wait_working()
    s.escape()
    s.wait_for_screen("Operation aborted")
    s.wait_idle()
    wait_until(lambda: fakemodel.served[0].disconnected, 3, "Pi to drop the model's stream")


@pytest.mark.pi
def test_confirm_command_outside_run(pi_session: Any) -> None:
    s: PiSession = pi_session()
    s.submit("/testconfirm")
    s.wait_for_screen(r"^ Test$")
    s.wait_for_screen(r"Proceed\?")
    s.wait_for_screen(r"→ Yes")
    s.wait_dialog()
    assert s.state == "dialog"
    s.escape()
    s.wait_for_screen("cuewrap-test: confirmed no")
    s.wait_idle()


@pytest.mark.pi
def test_confirm_tool_inside_run(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("ok"))
    s: PiSession = pi_session()
    s.prompt("confirm please")
    s.wait_for_screen(r"Deploy now\?")
    s.wait_dialog()
    s.enter()  # → Yes
    s.wait_for_screen(r"confirmed: yes")
    s.wait_idle()
    [result] = fakemodel.tool_results(1)
    assert FakeModel.content_text(result) == "confirmed: yes"


@pytest.mark.pi
def test_extension_commands(pi_session: Any) -> None:
    s: PiSession = pi_session()
    s.submit("/testowner 7f0c2a52-0000-4000-8000-000000000001")
    s.wait_for_screen("cuewrap-test: owner 7f0c2a52")
    s.submit('/testbus test:ping {"n": 1}')
    s.wait_for_screen("cuewrap-test: emitted test:ping")
    s.submit("/testinfo")
    s.wait_for_screen(r'cuewrap-test: info\s+\{"mode":"tui","hasUI":true')
    # Pi indents a wrapped line's continuation by one space
    assert "7f0c2a52-0000-4000-8000-000000000001" in re.sub(r"\n ?", "", s.screen_text)


@pytest.mark.pi
def test_focus_reports_do_not_disturb_a_run(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 1; echo still here", "finished", prompt="run")
    s.wait_for_screen(r"Elapsed")
    for _ in range(3):
        s.focus_out()
        time.sleep(0.05)
        s.focus_in()
        time.sleep(0.05)
    s.wait_for_screen(r"^ finished$")
    s.wait_idle()
    assert "Command aborted" not in s.screen_text
    assert "[O" not in s.screen_text and "[I" not in s.screen_text


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_ask_questionnaire(
    pi_session: Any, fakemodel: FakeModel, ask_ext: Path, pi_home: PiHome
) -> None:
    args = ask_question_args()
    fakemodel.push(tool_call("ask_user_question", args), text("thanks"))
    s: PiSession = pi_session(extensions=[ask_ext])
    assert "ask_user_question" not in s.screen_text
    s.prompt("ask me something")
    s.wait_for_screen(r"Which color should the button be\?")
    s.wait_for_screen(r"1\. Blue")
    s.wait_for_screen(r"Type something\.")
    s.wait_dialog()
    assert b"\x07" in s.raw_output  # the tool rings the bell itself
    s.enter()  # picks "Blue" and submits (single question)
    s.wait_for_screen(r"^ thanks$")
    s.wait_idle()
    assert "ask_user_question" in fakemodel.tool_names(0)
    [result] = fakemodel.tool_results(1)
    assert '"Which color should the button be?"="Blue"' in FakeModel.content_text(result)


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_session_close_kills_the_tree(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 30", prompt="sleep long")
    s.wait_for_screen(r"Elapsed")

    def tree_with_sleep() -> list[tuple[int, str]] | None:
        tree = _descendants(s.pid)
        return tree if any(cmdline(p).startswith("sleep") for p, _ in tree) else None

    tree = wait_until(tree_with_sleep, 5, "the tool's sleep among the session's processes",
                      detail=lambda: [cmdline(p) for p, _ in _descendants(s.pid)])  # fmt: skip
    s.close()

    def alive() -> list[int]:
        return [p for p, _ in tree if os.path.exists(f"/proc/{p}") and state(p) != "Z"]

    wait_until(lambda: not alive(), 2, "the whole tree gone",
               detail=lambda: [(p, cmdline(p)) for p in alive()])  # fmt: skip
    assert not s.isalive()


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_under_cuewrap_log(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(text("hi"))
    s: PiSession = pi_session()
    assert s.wrapped
    _run_until(s, "hello")
    s.wait_log(lambda r: "kind" in r)
    assert all("kind" in r for r in s.log_records())
    s.quit()
    assert s.wait_exit() == 0


@pytest.mark.unit
def test_test_extension_exists() -> None:
    src = TEST_EXT.read_text()
    for name in ("test_confirm", "testconfirm", "testbus", "testowner", "test_bus"):
        assert f'"{name}"' in src


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_regular_tui_mode(pi_session: Any, fakemodel: FakeModel, pi_home: PiHome) -> None:
    pi_home.write_settings(tuiMode="regular")
    fakemodel.push(tool_call("bash", {"command": "echo inline"}), text("done inline"))
    s: PiSession = pi_session()
    assert b"\x1b[?1049h" not in s.raw_output
    if not s.wrapped:  # cuewrap enables focus reports in the host terminal itself
        assert b"\x1b[?1004h" not in s.raw_output
    s.prompt("go")
    s.wait_for_screen(r"^ done inline$")
    s.wait_idle()
    s.quit()
    assert s.wait_exit() == 0
