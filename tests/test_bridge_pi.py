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
    MODEL_ID,
    Drained,
    MiniModel,
    Reply,
    ServerThread,
    make_agent_dir,
    mini_model,
    pi_env,
    types,
)
from pirig import install_pi, pi_missing
from shared import ONE_TOOL_RUN, failed_run
from waiting import absence_window, wait_until

from cuewrap.bridge import ENV_SOCKET, ENV_TOKEN, extension_path
from cuewrap.facts import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    AskBlocked,
    BridgeGone,
    BridgeHello,
    CueToggle,
    Fact,
    SessionShutdown,
    SessionStart,
    SubagentComplete,
    SubagentForegroundComplete,
    SubagentStarted,
    ToolEnd,
    ToolStart,
    UiPromptEnd,
    UiPromptStart,
    UserInput,
)
from cuewrap.term.provenance import own_write_refusal

pytestmark = pytest.mark.pi

#: Between typing and Enter, so that Pi sees typing, not one paste-like chunk.
TYPING_PAUSE = 0.3

VERSIONS = ["1.4.0", "latest"]
EXT = str(extension_path())


@pytest.fixture(scope="module", params=VERSIONS)
def pi_version(request: pytest.FixtureRequest) -> tuple[str, Path]:
    try:
        return request.param, install_pi(request.param)
    except RuntimeError as e:
        pi_missing(request.param, str(e))


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
            *ONE_TOOL_RUN,
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
    absence_window(0.3, "a fact through an unusable bridge")
    assert st.facts == []
    expected = {} if failure == "missing_socket" else {"bad_token": 1}
    assert st.stats()["rejected"] == expected


# -- the TUI ----------------------------------------------------------------------------------


@contextmanager
def tui(bindir: Path, tmp_path: Path, env_extra: dict[str, str]) -> Iterator[Drained]:
    env = pi_env(bindir, tmp_path / "agent", env_extra)
    child = pexpect.spawn(
        str(bindir / "pi"),
        ["-e", EXT],
        env=env,
        cwd=str(tmp_path / "work"),
        dimensions=(40, 140),
        encoding="utf-8",
        codec_errors="replace",
    )
    p = Drained(child, tmp_path / "tui.log")
    try:
        yield p
    finally:
        p.close()


def submit(p: Drained, text: str) -> None:
    """Type ``text``, then Enter in a later write (typed, not one paste-like chunk)."""
    p.send(text)
    time.sleep(TYPING_PAUSE)
    p.send("\r")


def since(st: ServerThread, n: int, *names: str, timeout: float = 30.0) -> list[Fact]:
    """Wait until the facts after index ``n`` have the types ``names`` (exactly)."""
    st.wait_for(lambda fs: len(fs) >= n + len(names), timeout, what=str(names))
    absence_window(0.2, f"a fact after {names}")
    tail = st.facts[n:]
    assert types(tail) == list(names)
    return tail


RUN = ("UserInput", "AgentStart", "AgentEnd", "AgentBeforeSettle", "AgentSettled")


def test_tui_cue_reload_new_quit(
    pi_version: tuple[str, Path], tmp_path: Path, bridge: tuple[ServerThread, Child]
) -> None:
    version, bindir = pi_version
    st, child = bridge
    env = {**st.env(), "PI_PROGRAM_STATUS": "1"}  # Pi's own status reports (as cuewrap sets)
    with setup(tmp_path) as (model, _work), tui(bindir, tmp_path, env) as p:
        child.pid = p.pid
        first = since(st, 0, "BridgeHello", "SessionStart")
        hello = first[0]
        assert isinstance(hello, BridgeHello)
        assert hello.mode == "tui" and hello.has_ui is True and hello.pid == p.pid
        check_version(hello, version)
        p.expect(MODEL_ID)  # the first frame: the footer names the model

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

        # Escape during a tool: the run settles aborted, without agent_before_settle
        model.push(("bash", "sleep 10"))
        n = len(st.facts)
        submit(p, "take a nap")
        st.wait_for(lambda fs: "ToolStart" in types(fs[n:]), what="ToolStart")
        p.expect("Elapsed")  # the TUI shows the running tool
        p.send("\x1b")
        run = since(
            st, n, "UserInput", "AgentStart", "ToolStart", "ToolEnd", "AgentEnd", "AgentSettled"
        )
        assert isinstance(run[3], ToolEnd) and run[3].is_error is True
        assert run[-1] == AgentSettled(True)

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
        p.expect_eof()
        assert st.stats()["rejected"] == {}
        # provenance (docs/terminal-guard.md): after its first frame Pi's own status reports
        # came through the bridge, not its terminal, on the first connection and after
        # /reload (a new module) alike; each one whole and nothing but sequences
        reports = [o for o in st.owns if o.startswith(b"\x1b]7501;state=")]
        states = [o.split(b"=")[1].split(b":")[0] for o in reports]
        assert states.count(b"working") >= 2 and states.count(b"done") >= 2, states
        assert all(own_write_refusal(o) == "" for o in st.owns)
        assert "\x1b]7501;state=working" not in p.output()  # never on Pi's terminal


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
        wait_until(lambda: st.stats()["rejected"] == {"wrong_pid": 1}, 5,
                   "the other Pi's connection refused (wrong_pid)",
                   detail=lambda: st.stats())  # fmt: skip
        assert types(st.facts) == ["BridgeHello", "SessionStart"]
        # the child's own connection is unaffected
        n = len(st.facts)
        submit(p, "still here")
        since(st, n, *RUN)
        stats: dict[str, Any] = st.stats()
        assert stats["trusted"] is True and stats["live_connections"] == 1


# -- RPC mode: pi.events, dialogs, errors, session replacement -------------------------------

EMITTER = r"""
export default function (pi: any) {
  const OWNER = Symbol.for("pi-subagents.completion-owner-id");
  pi.registerCommand("emitall", {
    handler: async (_args: string, ctx: any) => {
      const parent = ctx.sessionManager.getSessionFile() ?? ctx.sessionManager.getSessionId();
      const before = OWNER in globalThis;
      pi.events.emit("rpiv:ask-user:prompt", { questions: ["SECRET-QUESTION"] });
      pi.events.emit("rpiv:ask-user:blocked", { active: true });
      pi.events.emit("rpiv:ask-user:blocked", { active: false, toolCallId: "call_x" });
      pi.events.emit("subagent:async-started", {
        lifecycleArtifactVersion: 3, id: "run-1", sessionId: parent,
        completionOwnerId: "owner-A", task: "SECRET-TASK", agent: "worker", cwd: "/x",
      });
      const after = OWNER in globalThis;
      (globalThis as any)[OWNER] = "owner-A";
      pi.events.emit("subagent:async-complete", {
        runId: "run-1", sessionId: parent, completionOwnerId: "owner-A", success: true,
        summary: "SECRET-SUMMARY", state: "complete", exitCode: 0,
      });
      pi.events.emit("subagent:foreground-complete", {
        id: "run-2:0", runId: "run-2", source: "foreground", success: true,
        summary: "SECRET-SUMMARY",
      });
      pi.events.emit("subagent:async-started", { id: 5, task: "SECRET-TASK" });
      pi.events.emit("some:other-channel", { text: "SECRET-OTHER" });
      ctx.ui.notify(`EMITTED before=${before} after=${after}`, "info");
    },
  });
  pi.registerCommand("askme", {
    handler: async (_args: string, ctx: any) => {
      const ok = await ctx.ui.confirm("SECRET-TITLE", "SECRET-DIALOG");
      ctx.ui.notify(`ANSWER=${ok}`, "info");
    },
  });
}
"""


class Rpc:
    """``pi --mode rpc``: JSON commands on stdin, records from stdout collected by a thread."""

    def __init__(self, bindir: Path, tmp_path: Path, env_extra: dict[str, str], *exts: str):
        import queue
        import threading

        args = [str(bindir / "pi"), "--mode", "rpc"]
        for e in exts:
            args += ["-e", e]
        self.proc = subprocess.Popen(
            args,
            env=pi_env(bindir, tmp_path / "agent", env_extra),
            cwd=tmp_path / "work",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        import json

        assert self.proc.stdout
        for raw in self.proc.stdout:
            try:
                self.records.put(json.loads(raw))
            except ValueError:
                pass

    def send(self, obj: dict[str, Any]) -> None:
        import json

        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def expect(self, pred: Any, timeout: float = 30.0) -> dict[str, Any]:
        import queue

        def matching() -> dict[str, Any] | None:
            while True:
                try:
                    rec = self.records.get_nowait()
                except queue.Empty:
                    return None
                self.seen.append(rec)
                if pred(rec):
                    return rec

        return wait_until(matching, timeout, "a matching RPC record",
                          detail=lambda: f"seen {self.seen[-10:]!r}")  # fmt: skip

    def notify_text(self, text: str) -> dict[str, Any]:
        return self.expect(
            lambda r: (
                r.get("type") == "extension_ui_request"
                and r.get("method") == "notify"
                and text in str(r.get("message"))
            )
        )

    def close(self) -> tuple[int, bytes]:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        assert self.proc.stderr
        return self.proc.returncode, self.proc.stderr.read()


def test_rpc_events_dialogs_errors_and_privacy(
    pi_version: tuple[str, Path],
    tmp_path: Path,
    bridge: tuple[ServerThread, Child],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cuewrap.bridge import protocol, server

    raw_lines: list[bytes] = []
    real_parse = protocol.parse_line

    def spy(line: bytes) -> Any:
        raw_lines.append(bytes(line))
        return real_parse(line)

    monkeypatch.setattr(server.protocol, "parse_line", spy)
    _version, bindir = pi_version
    st, child = bridge
    emitter = tmp_path / "emitter.ts"
    emitter.write_text(EMITTER)
    with setup(tmp_path, [("error", "500"), ("error", "500")]):
        rpc = Rpc(bindir, tmp_path, st.env(), EXT, str(emitter))
        child.pid = rpc.proc.pid
        try:
            # the runtime connects on session_start
            hello = since(st, 0, "BridgeHello", "SessionStart")[0]
            assert isinstance(hello, BridgeHello)
            assert hello.mode == "rpc" and hello.has_ui is True

            rpc.send({"id": "c1", "type": "prompt", "message": "/cue"})
            rpc.notify_text("CUE-PAGE-status")

            # pi.events: exactly the four channels, validated fields only
            n = len(st.facts)
            rpc.send({"id": "c2", "type": "prompt", "message": "/emitall"})
            rpc.notify_text("EMITTED before=false after=false")  # ownerNow never creates it
            since(
                st,
                n,
                "AskBlocked",
                "AskBlocked",
                "SubagentStarted",
                "SubagentComplete",
                "SubagentForegroundComplete",
            )
            f = st.facts[n:]
            assert f[0] == AskBlocked(True, None) and f[1] == AskBlocked(False, "call_x")
            parent = hello.session_file
            assert f[2] == SubagentStarted("run-1", parent, "owner-A", 3, parent, None)
            assert f[3] == SubagentComplete(
                "run-1", parent, "owner-A", True, False, parent, "owner-A"
            )
            assert f[4] == SubagentForegroundComplete("run-2")
            assert st.stats()["rejected"] == {"bad_field": 1}  # the malformed async-started

            # a dialog: ui_prompt_start / end (kind only)
            n = len(st.facts)
            rpc.send({"id": "c3", "type": "prompt", "message": "/askme"})
            req = rpc.expect(
                lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "confirm"
            )
            since(st, n, "UiPromptStart")
            rpc.send({"type": "extension_ui_response", "id": req["id"], "confirmed": True})
            rpc.notify_text("ANSWER=true")
            since(st, n, "UiPromptStart", "UiPromptEnd")
            start, end = st.facts[n:]
            # the title only as its length and a MAC keyed with the token (docs/answering.md)
            assert isinstance(start, UiPromptStart) and start.dialog is not None
            assert re.fullmatch(r"12:[0-9a-f]{64}", start.dialog), start.dialog
            assert start == UiPromptStart("confirm", None, start.dialog)
            assert end == UiPromptEnd("confirm", 1)  # it closed with Yes (confirmed: true)

            # an error run: two attempts (one retry), one settle with outcome "error"
            n = len(st.facts)
            rpc.send({"id": "c4", "type": "prompt", "message": "SECRET-PROMPT"})
            since(st, n, *failed_run(2))
            f = st.facts[n:]
            assert f[0] == UserInput("rpc")
            assert f[2] == AgentEnd("error") and f[4] == AgentEnd("error")
            assert f[5] == AgentBeforeSettle("error") and f[6] == AgentSettled(False)

            # new_session: a new runtime, a new connection (session_start may come twice)
            n = len(st.facts)
            rpc.send({"id": "c5", "type": "new_session"})
            st.wait_for(lambda fs: "SessionStart" in types(fs[n:]), what="new session")
            absence_window(0.5, "a fact other than a repeated SessionStart")
            tail = st.facts[n:]
            assert types(tail)[:4] == [
                "SessionShutdown",
                "BridgeGone",
                "BridgeHello",
                "SessionStart",
            ]
            assert set(types(tail)[4:]) <= {"SessionStart"}
            assert tail[0] == SessionShutdown("new")
            assert all(isinstance(x, SessionStart) and x.reason == "new" for x in tail[3:])
        finally:
            rc, err = rpc.close()
    st.wait_for(lambda fs: fs[-1:] == [BridgeGone()], what="BridgeGone")
    assert rc == 0 and err == b""
    assert raw_lines
    assert not [x for x in raw_lines if b"SECRET" in x]
    assert st.stats()["rejected"] == {"bad_field": 1}
