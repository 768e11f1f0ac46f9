"""The bridge extension in real Pi (1.4.0 and latest), talking to a real BridgeServer.

Pi runs headless against a fake OpenAI-compatible model (``bridge_helpers.MiniModel``), with
``PI_CODING_AGENT_DIR`` isolated, either as ``pi -p`` (subprocess) or in its TUI (pexpect).
The BridgeServer runs on a Loop in a background thread; ``child_pid`` is the Pi we started.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pytest
from bridge_helpers import (
    MiniModel,
    Reply,
    ServerThread,
    make_agent_dir,
    mini_model,
    pi_bin,
    pi_env,
    types,
)

from cuewrap.bridge import ENV_SOCKET, ENV_TOKEN, extension_path
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    BridgeGone,
    BridgeHello,
    CueToggle,
    Fact,
    SessionShutdown,
    SessionStart,
    ToolEnd,
    ToolStart,
    UserInput,
)

pytestmark = pytest.mark.pi

VERSIONS = ["1.4.0", "latest"]
EXT = str(extension_path())


@pytest.fixture(scope="module", params=VERSIONS)
def pi_version(request: pytest.FixtureRequest) -> tuple[str, Path]:
    bindir = pi_bin(request.param)
    if bindir is None:
        pytest.skip(f"Pi {request.param} not installable here (scripts/install-pi)")
    return request.param, bindir


class Child:
    """The pid cuewrap would have spawned (set once Pi is started)."""

    pid: int | None = None

    def __call__(self) -> int | None:
        return self.pid


@pytest.fixture
def bridge() -> Iterator[tuple[ServerThread, Child]]:
    child = Child()
    st = ServerThread(child_pid=child, on_request=lambda action: f"CUE-PAGE-{action}")
    yield st, child
    st.close()


@contextmanager
def setup(tmp_path: Path, script: list[Reply] | None = None) -> Iterator[tuple[MiniModel, Path]]:
    work = tmp_path / "work"
    work.mkdir()
    with mini_model(script) as model:
        make_agent_dir(tmp_path / "agent", model.base_url)
        yield model, work


def run_print(
    bindir: Path, tmp_path: Path, env_extra: dict[str, str], child: Child | None, prompt: str
) -> subprocess.CompletedProcess[str]:
    env = pi_env(bindir, tmp_path / "agent", env_extra)
    proc = subprocess.Popen(
        [str(bindir / "pi"), "-e", EXT, "-p", prompt],
        env=env,
        cwd=tmp_path / "work",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if child is not None:
        child.pid = proc.pid
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def check_version(hello: BridgeHello, version: str) -> None:
    if version == "latest":
        assert re.fullmatch(r"\d+\.\d+\.\d+.*", hello.pi_version), hello.pi_version
    else:
        assert hello.pi_version == version


# -- pi -p ------------------------------------------------------------------------------------


def test_print_run_with_bash_tool(
    pi_version: tuple[str, Path], tmp_path: Path, bridge: tuple[ServerThread, Child]
) -> None:
    version, bindir = pi_version
    st, child = bridge
    env_file = tmp_path / "tool-env.txt"
    script: list[Reply] = [
        ("bash", f"env > {env_file}; echo CUEWRAP_VARS=$(env | grep -c CUEWRAP_)"),
        ("text", "all finished"),
    ]
    with setup(tmp_path, script) as (model, _work):
        res = run_print(bindir, tmp_path, st.env(), child, "run the tool")
        assert res.returncode == 0, res.stderr
        assert "all finished" in res.stdout
        assert res.stderr == ""
        facts = st.wait_for(lambda fs: fs[-1:] == [BridgeGone()], what="BridgeGone")

        assert types(facts) == [
            "BridgeHello",
            "SessionStart",
            "UserInput",
            "AgentStart",
            "ToolStart",
            "ToolEnd",
            "AgentEnd",
            "AgentBeforeSettle",
            "AgentSettled",
            "SessionShutdown",
            "BridgeGone",
        ]
        hello, start = facts[0], facts[1]
        assert isinstance(hello, BridgeHello) and isinstance(start, SessionStart)
        assert hello.protocol == 1 and hello.mode == "print" and hello.has_ui is False
        assert hello.pid == child.pid
        check_version(hello, version)
        assert start.reason == "startup" and start.session_id == hello.session_id
        assert start.session_file == hello.session_file and hello.session_file
        assert hello.session_file.endswith(".jsonl")
        assert facts[2] == UserInput("interactive")
        assert isinstance(facts[4], ToolStart) and facts[4].tool_name == "bash"
        assert facts[5] == ToolEnd(facts[4].tool_call_id, "bash", False)
        assert facts[6] == AgentEnd("stop")
        assert facts[7] == AgentBeforeSettle("completed")
        assert facts[8] == AgentSettled(False)
        assert facts[9] == SessionShutdown("quit")
        # The tool subprocess did not inherit the bridge variables.
        env_text = env_file.read_text()
        assert "PI_CODING_AGENT_DIR" in env_text
        assert ENV_SOCKET not in env_text and ENV_TOKEN not in env_text
        assert any("CUEWRAP_VARS=0" in r for r in model.tool_results())
        assert st.stats()["rejected"] == {}


@pytest.mark.parametrize("failure", ["missing_socket", "wrong_token"])
def test_pi_unaffected_when_bridge_unusable(
    pi_version: tuple[str, Path],
    tmp_path: Path,
    bridge: tuple[ServerThread, Child],
    failure: str,
) -> None:
    _version, bindir = pi_version
    st, child = bridge
    env = st.env()
    if failure == "missing_socket":
        env[ENV_SOCKET] = str(tmp_path / "no-such-dir" / "bridge.sock")
    else:
        env[ENV_TOKEN] = "f" * 64
    with setup(tmp_path, [("bash", "echo ran"), ("text", "answer text")]):
        res = run_print(bindir, tmp_path, env, child, "hi")
    assert res.returncode == 0
    assert "answer text" in res.stdout and res.stderr == ""
    time.sleep(0.3)
    assert st.facts == []
    expected = {} if failure == "missing_socket" else {"bad_token": 1}
    assert st.stats()["rejected"] == expected


# -- the TUI ----------------------------------------------------------------------------------


@contextmanager
def tui(bindir: Path, tmp_path: Path, env_extra: dict[str, str]) -> Iterator[pexpect.spawn]:
    env = pi_env(bindir, tmp_path / "agent", env_extra)
    p = pexpect.spawn(
        str(bindir / "pi"),
        ["-e", EXT],
        env=env,
        cwd=str(tmp_path / "work"),
        dimensions=(40, 140),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
    )
    p.logfile_read = (tmp_path / "tui.log").open("w")
    try:
        yield p
    finally:
        if p.isalive():
            p.terminate(force=True)
        p.close()


def submit(p: pexpect.spawn, text: str) -> None:
    p.send(text)
    time.sleep(0.3)
    p.send("\r")


def since(st: ServerThread, n: int, *names: str, timeout: float = 30.0) -> list[Fact]:
    """Wait until the facts after index ``n`` have the types ``names`` (exactly)."""
    st.wait_for(lambda fs: len(fs) >= n + len(names), timeout, what=str(names))
    time.sleep(0.2)  # nothing more should arrive
    tail = st.facts[n:]
    assert types(tail) == list(names)
    return tail


RUN = ("UserInput", "AgentStart", "AgentEnd", "AgentBeforeSettle", "AgentSettled")


def test_tui_cue_reload_new_quit(
    pi_version: tuple[str, Path], tmp_path: Path, bridge: tuple[ServerThread, Child]
) -> None:
    version, bindir = pi_version
    st, child = bridge
    with setup(tmp_path), tui(bindir, tmp_path, st.env()) as p:
        child.pid = p.pid
        first = since(st, 0, "BridgeHello", "SessionStart")
        hello = first[0]
        assert isinstance(hello, BridgeHello)
        assert hello.mode == "tui" and hello.has_ui is True and hello.pid == p.pid
        check_version(hello, version)
        time.sleep(0.5)  # let the TUI settle

        # /cue shows the page cuewrap returns
        submit(p, "/cue")
        p.expect("CUE-PAGE-status")
        assert len(st.facts) == 2  # a status request is not a fact

        # cuewrap pushes a notice
        assert st.call(lambda: st.server.push_notice("PUSHED-NOTICE-42")) is True
        p.expect("PUSHED-NOTICE-42")

        # /cue off: a CueToggle fact, and the reply is shown
        submit(p, "/cue off")
        p.expect("CUE-PAGE-off")
        assert st.facts[2:] == [CueToggle(False)]

        # a prompt: one run
        n = len(st.facts)
        submit(p, "hello there")
        run = since(st, n, *RUN)
        assert run[0] == UserInput("interactive") and run[-1] == AgentSettled(False)

        # /reload: the old connection ends, a new one says hello
        n = len(st.facts)
        submit(p, "/reload")
        tail = since(st, n, "SessionShutdown", "BridgeGone", "BridgeHello", "SessionStart")
        assert tail[0] == SessionShutdown("reload")
        h2, s2 = tail[2], tail[3]
        assert isinstance(h2, BridgeHello) and isinstance(s2, SessionStart)
        assert h2.session_id == hello.session_id and h2.pid == p.pid
        assert s2.reason == "reload"
        stats = st.stats()
        assert stats["hellos"] == 2 and stats["connections_accepted"] == 2

        # the new connection carries the next run
        n = len(st.facts)
        submit(p, "again")
        since(st, n, *RUN)
        submit(p, "/cue")
        p.expect("CUE-PAGE-status")

        # /new: a new session on a new connection
        n = len(st.facts)
        submit(p, "/new")
        tail = since(st, n, "SessionShutdown", "BridgeGone", "BridgeHello", "SessionStart")
        h3, s3 = tail[2], tail[3]
        assert tail[0] == SessionShutdown("new")
        assert isinstance(h3, BridgeHello) and isinstance(s3, SessionStart)
        assert h3.session_id != hello.session_id and s3.reason == "new"
        assert s3.session_id == h3.session_id

        # /quit
        n = len(st.facts)
        submit(p, "/quit")
        since(st, n, "SessionShutdown", "BridgeGone")
        assert st.facts[n] == SessionShutdown("quit")
        p.expect(pexpect.EOF)
        assert st.stats()["rejected"] == {}


def test_second_process_with_token_refused(
    pi_version: tuple[str, Path], tmp_path: Path, bridge: tuple[ServerThread, Child]
) -> None:
    """Another Pi given the same socket and token (not the child cuewrap spawned) is refused;
    both Pis work normally."""
    _version, bindir = pi_version
    st, child = bridge
    with setup(tmp_path), tui(bindir, tmp_path, st.env()) as p:
        child.pid = p.pid
        since(st, 0, "BridgeHello", "SessionStart")
        other = run_print(bindir, tmp_path, st.env(), None, "from elsewhere")
        assert other.returncode == 0 and "done" in other.stdout and other.stderr == ""
        time.sleep(0.3)
        assert st.stats()["rejected"] == {"wrong_pid": 1}
        assert types(st.facts) == ["BridgeHello", "SessionStart"]
        # the child's own connection is unaffected
        n = len(st.facts)
        submit(p, "still here")
        since(st, n, *RUN)
        stats: dict[str, Any] = st.stats()
        assert stats["trusted"] is True and stats["live_connections"] == 1
