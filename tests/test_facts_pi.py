"""Normalized fact sequences in cuewrap's decision log, over real Pi (1.4.0 and latest).

Each test runs ONE real Pi under ``python -m cuewrap --log LOG`` (the rig's default) against the
fake model, drives it like a user, and compares the ordered ``type`` values of the bridge facts
(``{"kind": "fact", "source": "bridge"}``) with the event order of docs/pi-facts.md#event-order,
plus key fields; OSC 7501 facts (``source: "osc7501"``) are checked as a cross-check.

In a log line a fact's own ``kind`` (UiPromptStart, ProgramStatus) is spelled ``fact_kind``.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, http_error, text, tool_call
from pirig import PiHome, PiSession, ask_question_args, child_pids, wrapped_pid
from shared import ONE_TOOL_RUN, failed_run
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

Rec = dict[str, Any]


# --------------------------------------------------------------------------------------------
# Log helpers


def facts(s: PiSession, source: str | None = "bridge") -> list[Rec]:
    """The fact records of the decision log, in order (only ``source`` unless None)."""
    return [r for r in s.log_records("fact") if source is None or r.get("source") == source]


def types(recs: Sequence[Rec]) -> list[str]:
    return [str(r["type"]) for r in recs]


def states(s: PiSession) -> list[str]:
    """OSC 7501 states, in order."""
    return [str(r["state"]) for r in facts(s, "osc7501")]


def wait_facts(
    s: PiSession,
    pred: Callable[[list[Rec]], bool],
    what: str,
    *,
    source: str | None = "bridge",
    timeout: float = 10.0,
) -> list[Rec]:
    """Wait until ``pred(facts)`` holds; return those facts."""

    def holds() -> tuple[list[Rec]] | None:
        fs = facts(s, source)
        return (fs,) if pred(fs) else None  # a tuple: true even when no facts

    return wait_until(holds, timeout, what,
                      detail=lambda: f"facts: {types(facts(s, source))}")[0]  # fmt: skip


def wait_type(
    s: PiSession, type_: str, *, after: int = 0, source: str = "bridge", timeout: float = 10.0
) -> list[Rec]:
    """Wait until a fact of ``type_`` appears at index >= ``after``; return all facts."""
    return wait_facts(
        s, lambda fs: type_ in types(fs[after:]), type_, source=source, timeout=timeout
    )


def wait_state(s: PiSession, state: str, *, after: int = 0, timeout: float = 10.0) -> None:
    """Wait for an OSC 7501 fact with ``state`` at osc7501 index >= ``after``."""
    wait_facts(
        s,
        lambda fs: state in [r["state"] for r in fs[after:]],
        f"OSC 7501 state={state}",
        source="osc7501",
        timeout=timeout,
    )


def quiet(pause: float = 0.3) -> None:
    """Let late facts arrive (nothing more should)."""
    absence_window(pause, "a late fact")


def started(s: PiSession) -> tuple[int, int]:
    """Once Pi's session started: how many bridge and OSC 7501 facts there are."""
    wait_type(s, "SessionStart")
    return len(facts(s)), len(facts(s, "osc7501"))


def settled(s: PiSession, n: int, *, state: str | None = None, n7501: int = 0) -> list[Rec]:
    """The run settled: Pi idle, the bridge's ``AgentSettled`` after fact ``n``, OSC 7501 at
    ``state`` (after its fact ``n7501``), nothing late; the bridge's facts from ``n`` on."""
    s.wait_idle()
    wait_type(s, "AgentSettled", after=n)
    if state is not None:
        wait_state(s, state, after=n7501)
    quiet()
    return facts(s)[n:]


def replaced(s: PiSession, command: str) -> list[Rec]:
    """Submit ``command`` (``/reload``, ``/new``), which replaces Pi's runtime: wait for the
    new hello and session start, Pi idle and nothing late; the bridge's facts since."""
    n = len(facts(s))
    s.submit(command)
    wait_facts(
        s, lambda fs: "BridgeHello" in types(fs[n:]) and "SessionStart" in types(fs[n:]),
        command.lstrip("/"),
    )  # fmt: skip
    s.wait_idle()
    quiet()
    return facts(s)[n:]


def is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(x in it for x in needle)


def _is_pi(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(a == b"pi" or a.endswith(b"/pi") for a in argv)


def pi_pid(s: PiSession, timeout: float = 5.0) -> int:
    """Pi's pid: the command under cuewrap's session leader (``PiSession.pid`` is cuewrap)."""

    def the_pi() -> int | None:
        pid = wrapped_pid(s.pid)
        return pid if pid is not None and _is_pi(pid) else None

    return wait_until(the_pi, timeout, f"Pi under cuewrap {s.pid}",
                      detail=lambda: f"children: {child_pids(s.pid)}")  # fmt: skip


def check_hello(hello: Rec, pi_version: str) -> None:
    assert hello["protocol"] == 1
    assert hello["mode"] == "tui" and hello["has_ui"] is True
    if pi_version == "latest":
        assert re.fullmatch(r"\d+\.\d+\.\d+.*", hello["pi_version"]), hello
    else:
        assert hello["pi_version"] == pi_version


def check_clean(s: PiSession) -> None:
    """No bridge line was rejected and cuewrap hit no internal error."""
    rejected = s.log_records("rejected")
    assert [r for r in rejected if "bridge" in (r.get("source"), r.get("integration"))] == []
    assert s.log_records("internal_error") == []


# --------------------------------------------------------------------------------------------
# 1. A tool run


def test_tool_run(pi_session: Any, fakemodel: FakeModel, pi_version: str) -> None:
    fakemodel.push(tool_call("bash", {"command": "echo hi"}), text("all done"))
    s: PiSession = pi_session()
    start = wait_facts(s, lambda fs: types(fs)[:2] == ["BridgeHello", "SessionStart"], "hello")
    hello = start[0]
    check_hello(hello, pi_version)
    assert hello["pid"] == pi_pid(s)

    s.prompt("run the tool")
    s.wait_for_screen(r"^ all done$")
    s.wait_idle()
    wait_type(s, "AgentSettled")
    wait_state(s, "done")
    quiet()
    fs = facts(s)
    assert types(fs) == ["BridgeHello", "SessionStart", *ONE_TOOL_RUN]
    assert fs[1]["reason"] == "startup"
    assert fs[1]["session_id"] == hello["session_id"]
    assert fs[1]["session_file"] == hello["session_file"]
    assert fs[2]["input_source"] == "interactive"
    assert fs[4]["tool_name"] == "bash" and fs[4]["tool_call_id"] == "call_1"
    assert fs[5]["tool_name"] == "bash" and fs[5]["tool_call_id"] == "call_1"
    assert fs[5]["is_error"] is False
    assert fs[6]["stop_reason"] == "stop"
    assert fs[7]["outcome"] == "completed"
    assert fs[8]["aborted"] is False

    st = states(s)
    assert st[0] == "idle"  # Pi's report at start
    assert is_subsequence(["working", "done"], st), st
    assert all(r["app"] == "pi" for r in facts(s, "osc7501"))
    # the engine saw one run, completed
    runs = s.log_records("run")
    assert [r["state"] for r in runs] == ["started", "settled"]
    assert runs[1]["outcome"] == "completed"
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 2. An LLM error with retries


def test_llm_error_with_retries(pi_session: Any, fakemodel: FakeModel, pi_home: PiHome) -> None:
    pi_home.write_settings(retry={"enabled": True, "maxRetries": 2, "baseDelayMs": 200})
    fakemodel.push(*[http_error(500, "fake upstream failure")] * 3)
    s: PiSession = pi_session()
    n, n7501 = started(s)

    s.prompt("fail please")
    s.wait_for_screen(r"Retry failed after 2 attempts")
    fs = settled(s, n, state="error", n7501=n7501)
    assert types(fs) == failed_run(3)
    assert len(fakemodel.requests) == 3
    assert [r["stop_reason"] for r in fs if r["type"] == "AgentEnd"] == ["error"] * 3
    assert fs[-2]["outcome"] == "error"
    assert fs[-1]["aborted"] is False

    # ONE run in the engine (retries are inside it), settled as an error after 3 attempts
    runs = s.log_records("run")
    assert {r["run"] for r in runs} == {1}, runs
    assert [r["state"] for r in runs if r["state"] in ("started", "settled")] == [
        "started",
        "settled",
    ], runs
    assert runs[-1]["state"] == "settled", runs
    assert runs[-1]["outcome"] == "failed" and runs[-1].get("attempts") == 3, runs[-1]

    osc = facts(s, "osc7501")[n7501:]
    assert [r["state"] for r in osc] == ["working", "error"]  # nothing during retries
    assert osc[1]["has_msg"] is True  # the error's first line (content never logged)
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 3. Escape during a tool


def test_escape_during_tool(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 10"}))
    s: PiSession = pi_session()
    n, n7501 = started(s)

    s.prompt("sleep please")
    s.wait_for_screen(r"Elapsed \d")
    wait_type(s, "ToolStart", after=n)
    s.escape()
    s.wait_for_screen("Command aborted")
    fs = settled(s, n, state="idle", n7501=n7501)
    assert types(fs) == [
        "UserInput",
        "AgentStart",
        "ToolStart",
        "ToolEnd",
        "AgentEnd",
        "AgentSettled",
    ]
    assert "AgentBeforeSettle" not in types(fs)
    assert fs[2]["tool_name"] == "bash"
    assert fs[3]["tool_call_id"] == fs[2]["tool_call_id"] and fs[3]["is_error"] is True
    # the last assistant message: 1.4.0 "error" ("This operation was aborted"), 1.6.0 "aborted"
    assert fs[4]["stop_reason"] in ("error", "aborted")
    assert fs[5]["aborted"] is True

    runs = s.log_records("run")
    assert [r["state"] for r in runs] == ["started", "settled"], runs
    assert runs[1]["outcome"] == "cancelled", runs[1]
    assert [r["state"] for r in facts(s, "osc7501")[n7501:]] == ["working", "idle"]
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 4. A dialog inside a run


def test_confirm_dialog(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("ok"))
    s: PiSession = pi_session()
    n, n7501 = started(s)

    s.prompt("confirm please")
    s.wait_for_screen(r"Deploy now\?")
    s.wait_dialog()
    wait_type(s, "UiPromptStart", after=n)
    wait_state(s, "blocked", after=n7501)
    # while the dialog is up: started, not ended; Pi reports blocked (permission)
    up = facts(s)[n:]
    assert "UiPromptEnd" not in types(up)
    assert types(up)[-1] == "UiPromptStart", types(up)
    assert up[-1]["fact_kind"] == "confirm"
    blocked = facts(s, "osc7501")[-1]
    assert blocked["state"] == "blocked" and blocked["fact_kind"] == "permission"
    assert s.state == "dialog"

    s.enter()  # → Yes
    s.wait_for_screen(r"confirmed: yes")
    fs = settled(s, n, state="done", n7501=n7501)
    assert types(fs) == [
        "UserInput",
        "AgentStart",
        "ToolStart",
        "UiPromptStart",
        "UiPromptEnd",
        "ToolEnd",
        "AgentEnd",
        "AgentBeforeSettle",
        "AgentSettled",
    ]
    assert fs[2]["tool_name"] == "test_confirm"
    assert fs[3]["fact_kind"] == "confirm" and fs[4]["fact_kind"] == "confirm"
    assert fs[5]["is_error"] is False
    assert fs[7]["outcome"] == "completed" and fs[8]["aborted"] is False
    st = [r["state"] for r in facts(s, "osc7501")[n7501:]]
    assert is_subsequence(["working", "blocked", "working", "done"], st), st
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 5. /reload and /new


def test_reload_and_new(pi_session: Any, pi_version: str) -> None:
    s: PiSession = pi_session()
    first = wait_type(s, "SessionStart")
    hello = first[0]
    check_hello(hello, pi_version)
    sid = hello["session_id"]

    # /reload: the old runtime shuts down, a fresh connection says hello for the same session
    fs = replaced(s, "/reload")
    assert types(fs) == ["SessionShutdown", "BridgeGone", "BridgeHello", "SessionStart"]
    assert fs[0]["reason"] == "reload"
    assert fs[2]["session_id"] == sid and fs[2]["pid"] == hello["pid"]
    assert fs[3]["reason"] == "reload" and fs[3]["session_id"] == sid

    # /new: a new session id
    fs = replaced(s, "/new")
    assert types(fs) == ["SessionShutdown", "BridgeGone", "BridgeHello", "SessionStart"]
    assert fs[0]["reason"] == "new"
    new_sid = fs[2]["session_id"]
    assert new_sid and new_sid != sid
    assert fs[2]["pid"] == hello["pid"]
    assert fs[3]["reason"] == "new" and fs[3]["session_id"] == new_sid
    assert fs[3]["session_file"] != hello["session_file"]
    # the engine opened a gap for each replacement
    gaps = s.log_records("gap")
    assert len(gaps) >= 2, gaps
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 6. /quit, 7. Pi killed, and the order of bridge and exit facts
#
# Bridge facts and the child's exit reach cuewrap through different file descriptors (the
# bridge socket, SIGCHLD / the PTY). Pi sends everything it sends BEFORE it exits, so the log
# must show them first: SessionShutdown(quit) → BridgeGone → ChildExit. Today cuewrap records
# ChildExit as soon as it reaps the child, without draining the bridge first: in an ordinary
# run that order is a race (ChildExit sometimes lands before BridgeGone). test_quit and
# test_pi_killed therefore check the order within each source plus everything else, and
# test_bridge_facts_precede_child_exit pins the cross-source order deterministically.


def exit_facts(s: PiSession, after: int) -> list[Rec]:
    """Bridge and exit facts from index ``after`` (over all sources)."""
    return [r for r in facts(s, None)[after:] if r["source"] in ("bridge", "exit")]


def test_quit(pi_session: Any) -> None:
    s: PiSession = pi_session()
    wait_type(s, "SessionStart")
    n = len(facts(s, None))
    s.quit()
    assert s.wait_exit() == 0
    assert s.exitstatus == 0
    fs = exit_facts(s, n)
    bridge = [r for r in fs if r["source"] == "bridge"]
    assert types(bridge) == ["SessionShutdown", "BridgeGone"], types(fs)
    assert bridge[0]["reason"] == "quit"
    [ex] = [r for r in fs if r["type"] == "ChildExit"]
    assert ex["code"] == 0 and ex["signal"] is None
    assert fs.index(bridge[0]) < fs.index(ex)  # the shutdown came before the exit
    assert s.log_records("child_exit")[-1]["code"] == 0
    check_clean(s)


def _pi_dead(pid: int) -> bool:
    """Pi has exited and is waiting to be reaped: a zombie with no thread left running (a
    Node process's main thread can be a zombie while its other threads still tear down)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            zombie = f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        return zombie and len(os.listdir(f"/proc/{pid}/task")) <= 1
    except OSError:
        return True


def test_pi_killed(pi_session: Any) -> None:
    s: PiSession = pi_session()
    fs = wait_type(s, "SessionStart")
    pid = pi_pid(s)
    assert fs[0]["pid"] == pid
    n = len(facts(s, None))
    os.kill(pid, signal.SIGKILL)
    status = s.wait_exit()
    assert status == 128 + signal.SIGKILL, (status, s.signalstatus)
    fs = exit_facts(s, n)
    assert sorted(types(fs)) == ["BridgeGone", "ChildExit"], types(fs)  # no SessionShutdown
    [ex] = [r for r in fs if r["type"] == "ChildExit"]
    assert ex["signal"] == signal.SIGKILL and ex["code"] is None
    assert "SessionShutdown" not in types(facts(s))
    check_clean(s)


def test_bridge_facts_precede_child_exit(pi_session: Any) -> None:
    """cuewrap is slow (stopped) while Pi shuts down on SIGTERM: when it resumes, the
    shutdown line, the socket EOF, the PTY hang-up and SIGCHLD are all pending at once. The
    log must still say what happened in order: SessionShutdown, BridgeGone, ChildExit."""
    s: PiSession = pi_session()
    wait_type(s, "SessionStart")
    pid = pi_pid(s)
    n = len(facts(s, None))
    os.kill(s.pid, signal.SIGSTOP)
    try:
        os.kill(pid, signal.SIGTERM)  # Pi's graceful shutdown: session_shutdown(quit), exit
        wait_until(lambda: _pi_dead(pid), 10, "Pi to exit on SIGTERM")
    finally:
        os.kill(s.pid, signal.SIGCONT)
    s.wait_exit()
    assert types(exit_facts(s, n)) == ["SessionShutdown", "BridgeGone", "ChildExit"]


# --------------------------------------------------------------------------------------------
# 8. The published Ask package, and privacy

QUESTION = "SECRET-QUESTION-QQQ which way?"
LABELS = ("SECRET-LABEL-AAA", "SECRET-LABEL-BBB")
DESCRIPTIONS = ("SECRET-DESC-111", "SECRET-DESC-222")
PROMPT = "SECRET-PROMPT-XYZ please ask me"
SECRETS = (PROMPT, "SECRET-PROMPT-XYZ", QUESTION, *LABELS, *DESCRIPTIONS, "SECRETHDR", "SECRET")


def test_ask_questionnaire(pi_session: Any, fakemodel: FakeModel, ask_ext: Path) -> None:
    args = ask_question_args(
        question=QUESTION, header="SECRETHDR", options=list(zip(LABELS, DESCRIPTIONS, strict=True))
    )
    fakemodel.push(tool_call("ask_user_question", args), text("thanks"))
    s: PiSession = pi_session(extensions=[ask_ext])
    wait_type(s, "SessionStart")
    n = len(facts(s))

    s.prompt(PROMPT)
    s.wait_for_screen(re.escape(LABELS[0]))
    s.wait_dialog()
    wait_type(s, "AskBlocked", after=n)
    quiet(0.2)
    up = facts(s)[n:]
    # Ask says blocked, then opens its questionnaire with ctx.ui.custom (a native prompt)
    assert types(up) == ["UserInput", "AgentStart", "ToolStart", "AskBlocked", "UiPromptStart"]
    assert up[2]["tool_name"] == "ask_user_question"
    assert up[3]["active"] is True
    assert s.state == "dialog"  # still on screen

    s.enter()  # picks the first option and submits (single question)
    s.wait_for_screen(r"^ thanks$")
    fs = settled(s, n)
    assert types(fs) == [
        "UserInput",
        "AgentStart",
        "ToolStart",
        "AskBlocked",
        "UiPromptStart",
        "UiPromptEnd",
        "AskBlocked",
        "ToolEnd",
        "AgentEnd",
        "AgentBeforeSettle",
        "AgentSettled",
    ]
    assert fs[4]["fact_kind"] == "custom" and fs[5]["fact_kind"] == "custom"
    assert fs[6]["active"] is False
    assert fs[7]["tool_call_id"] == fs[2]["tool_call_id"]
    assert fs[7]["tool_name"] == "ask_user_question" and fs[7]["is_error"] is False
    assert fs[8]["stop_reason"] == "stop"
    assert fs[9]["outcome"] == "completed" and fs[10]["aborted"] is False
    [result] = fakemodel.tool_results(1)
    assert LABELS[0] in FakeModel.content_text(result)  # the answer really went through

    s.quit()
    s.wait_exit()
    assert s.log_path is not None
    log = s.log_path.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in log, secret
    check_clean(s)


# --------------------------------------------------------------------------------------------
# 9. Security: tool subprocesses do not inherit the bridge variables


def test_tool_env_has_no_bridge_vars(pi_session: Any, fakemodel: FakeModel, tmp_path: Path) -> None:
    env_file = tmp_path / "tool-env.txt"
    fakemodel.push(tool_call("bash", {"command": f"env > {env_file}"}), text("env saved"))
    s: PiSession = pi_session()
    hello = wait_type(s, "SessionStart")[0]
    # cuewrap did hand them to Pi (Pi's environment at exec) ...
    pid = pi_pid(s)
    exec_env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert any(v.startswith(b"CUEWRAP_BRIDGE_SOCKET=") for v in exec_env)
    assert any(v.startswith(b"CUEWRAP_BRIDGE_TOKEN=") for v in exec_env)
    # ... and the bridge removed them before any tool ran
    s.prompt("dump the env")
    s.wait_for_screen(r"^ env saved$")
    s.wait_idle()
    env_text = env_file.read_text()
    assert "PI_CODING_AGENT_DIR=" in env_text  # it is the tool's environment
    assert "CUEWRAP_BRIDGE_SOCKET" not in env_text
    assert "CUEWRAP_BRIDGE_TOKEN" not in env_text
    # the bridge still works after the extension removed them from process.env
    assert hello["mode"] == "tui"
    fs = wait_type(s, "AgentSettled")
    assert [r["is_error"] for r in fs if r["type"] == "ToolEnd"] == [False]
    check_clean(s)
