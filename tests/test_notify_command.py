"""``notify.command`` (docs/design.md#follow-ups): the user's own notifier, one run per
notification.

A recording script (real process) appends what it received — stdin and the CUEWRAP_CUE_*
variables — to a file; real Pi under cuewrap drives it end to end.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import PiSession, ready_away
from procstat import alive
from shared import RECORDER, calls
from waiting import absence_window, turning, wait_until

from cuewrap.config import ConfigError, check_commands, load_settings
from cuewrap.deliver.command import CommandNotifier
from cuewrap.loop import Loop

FIELDS = {"event", "session", "cwd", "source", "certainty", "id", "time", "escalated", "urgent"}
FIELDS |= {"pid", "tmux_pane", "tty"}  # which session: cuewrap's pid, its pane, its terminal


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out = tmp_path / "calls.jsonl"
    return [sys.executable, str(script), str(out)], out


# -- the effector ---------------------------------------------------------------------------
@pytest.mark.pty
def test_command_gets_one_json_object_and_the_same_as_variables(recorder: Any) -> None:
    argv, out = recorder
    loop, states = Loop(), []
    runner = CommandNotifier(loop, argv, 10, lambda *a: states.append(a))
    fields = {"event": "needs-input", "session": "work", "id": "cuewrap-1-1", "escalated": False}
    runner.run(1, fields)
    wait_until(lambda: runner.pending == 0, 10, "the command to end", sleep=turning(loop))
    assert states[-1][1] == "delivered", states
    [call] = calls(out)
    assert json.loads(call["stdin"]) == fields
    assert call["stdin"].count("\n") == 1
    assert call["env"] == {
        "CUEWRAP_CUE_EVENT": "needs-input",
        "CUEWRAP_CUE_SESSION": "work",
        "CUEWRAP_CUE_ID": "cuewrap-1-1",
        "CUEWRAP_CUE_ESCALATED": "false",
    }
    assert states == [(1, "requested", Path(argv[0]).name), (1, "delivered", "exit status 0")]


@pytest.mark.pty
def test_exit_status_is_the_delivery_state(tmp_path: Path) -> None:
    loop, states = Loop(), []
    runner = CommandNotifier(loop, ["sh", "-c", "exit 7"], 10, lambda *a: states.append(a))
    runner.run(2, {"event": "finished"})
    wait_until(lambda: runner.pending == 0, 10, "the command to end", sleep=turning(loop))
    assert states[-1] == (2, "failed", "exit status 7")


@pytest.mark.pty
def test_a_hanging_command_is_killed_at_the_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"echo $$ > {shlex.quote(str(pids))}; sleep 60 & echo $! >> {pids}; wait"
    loop, states = Loop(), []
    runner = CommandNotifier(loop, ["sh", "-c", script], 0.5, lambda *a: states.append(a))
    runner.run(3, {"event": "finished"})
    wait_until(lambda: runner.pending == 0, 10, "the command to end", sleep=turning(loop))
    assert states[-1] == (3, "failed", "killed at the timeout (0.5 s)")
    # the command and its own child are gone
    wait_until(lambda: not any(alive(int(p)) for p in pids.read_text().split()), 5,
               "the command's process group killed", sleep=turning(loop))  # fmt: skip


@pytest.mark.pty
def test_the_bridge_secret_is_not_passed_on(recorder: Any) -> None:
    _, out = recorder
    env = {**os.environ, "CUEWRAP_BRIDGE_TOKEN": "s3cret", "CUEWRAP_BRIDGE_SOCKET": "/x"}
    loop = Loop()
    runner = CommandNotifier(
        loop, ["sh", "-c", 'env > "$0"', str(out) + ".env"], 10, lambda *a: None, env=env
    )
    runner.run(4, {"event": "finished"})
    wait_until(lambda: runner.pending == 0, 10, "the command to end", sleep=turning(loop))
    assert "s3cret" not in Path(str(out) + ".env").read_text()


@pytest.mark.pty
def test_killed_with_cuewrap(tmp_path: Path) -> None:
    """cuewrap SIGKILLed while a command runs: the command's whole group dies with it."""
    pids = tmp_path / "pids"
    code = textwrap.dedent(
        f"""
        import sys, time
        from cuewrap.loop import Loop
        from cuewrap.deliver.command import CommandNotifier
        loop = Loop()
        r = CommandNotifier(loop, ["sh", "-c", "sleep 60 & echo $! > {pids}; wait"], 60,
                            lambda *a: None)
        r.run(1, {{"event": "finished"}})
        print("started", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
    wait_until(lambda: pids.exists() and pids.read_text().strip(), 5, "the command's pid file",
               interval=0.02)  # fmt: skip
    child = int(pids.read_text())
    assert alive(child)
    proc.kill()
    proc.wait()
    wait_until(lambda: not alive(child), 5, "notify.command to end with kill -9 of cuewrap")


# -- configuration --------------------------------------------------------------------------
@pytest.mark.unit
def test_settings(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CUEWRAP_NOTIFY_COMMAND": "ntfy-send --topic 'my pi'"}
    s = load_settings(None, env, {})
    assert s.notify.command == ("ntfy-send", "--topic", "my pi")
    assert s.notify.command_timeout == 10.0
    assert s.notify.escalate_after == 0.0
    assert s.notify.progress is False
    with pytest.raises(ConfigError, match=r"notify\.command: ntfy-send: command not found"):
        check_commands(s, {"PATH": str(tmp_path)})
    (tmp_path / "ntfy-send").write_text("#!/bin/sh\n")
    (tmp_path / "ntfy-send").chmod(0o755)
    check_commands(s, {"PATH": str(tmp_path)})
    cfg = tmp_path / "c.toml"
    cfg.write_text("[notify]\nescalate_after = 0\ncommand_timeout = 0\n")
    with pytest.raises(ConfigError, match=r"notify\.command_timeout must be a positive"):
        load_settings(str(cfg), {"HOME": str(tmp_path)}, {})
    cfg.write_text("[notify]\nescalate_after = -1\n")
    with pytest.raises(ConfigError, match=r"escalate_after must be 0 \(off\) or a positive"):
        load_settings(str(cfg), {"HOME": str(tmp_path)}, {})


@pytest.mark.pty
def test_a_command_that_does_not_exist_is_a_config_error_at_start(tmp_path: Path) -> None:
    import pexpect

    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), TERM="xterm")
    env["CUEWRAP_NOTIFY_COMMAND"] = "no-such-notifier-xyz --flag"
    child = pexpect.spawn(sys.executable, ["-m", "cuewrap", "--", "true"], env=env, timeout=20)
    out = child.read().decode()
    child.close()
    assert child.exitstatus == 2, out
    assert out.count("\n") == 1, out
    assert "notify.command: no-such-notifier-xyz: command not found" in out
    assert "CUEWRAP_NOTIFY_COMMAND" in out


# -- real Pi under cuewrap ------------------------------------------------------------------


def _wait(check: Callable[[], Any], timeout: float, what: str, s: PiSession) -> Any:
    def explain() -> str:
        kinds = [(r.get("kind"), r.get("channel"), r.get("state")) for r in s.log_records()]
        return f"log: {kinds[-30:]}\n{s.dump()}"

    return wait_until(check, timeout, what, detail=explain)


def command_deliveries(s: PiSession) -> list[dict[str, Any]]:
    return [r for r in s.log_records("delivery") if r.get("channel") == "command"]


def away(s: PiSession) -> None:
    ready_away(s)


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_one_json_per_notification_none_while_present(
    pi_session: Any, fakemodel: FakeModel, recorder: Any, pi_home: Any
) -> None:
    argv, out = recorder
    fakemodel.push(
        tool_call("test_confirm", {"message": "Deploy the PURPLE-ELEPHANT?"}),
        text("deployed ZEBRA-ANSWER"),
        text("second ZEBRA-ANSWER"),
    )
    s: PiSession = pi_session(env={"CUEWRAP_NOTIFY_COMMAND": shlex.join(argv)})
    away(s)
    s.prompt("MANGO-PROMPT confirm please")
    s.wait_dialog()
    _wait(lambda: len(calls(out)) >= 1, 10, "the needs-input call", s)
    s.enter()  # answered while still away: the run settles -> a finished cue
    s.wait_for_screen(r"deployed ZEBRA-ANSWER")
    _wait(lambda: len(calls(out)) >= 2, 10, "the finished call", s)
    _wait(lambda: len(command_deliveries(s)) >= 4, 10, "command delivery states", s)
    # present: a run settles, nothing is sent
    s.focus_in()
    s.wait_log(lambda r: r.get("kind") == "presence" and r.get("presence") == "focused")
    s.prompt("PAPAYA-PROMPT again")
    s.wait_for_screen(r"second ZEBRA-ANSWER")
    s.wait_idle()
    absence_window(1.0, "a command call for a run settled while present")
    got = calls(out)
    assert len(got) == 2, got
    cue_records = s.log_records("cue")
    assert [c["cue"] for c in cue_records] == ["needs-input", "finished"]
    for call, cue in zip(got, cue_records, strict=True):
        payload = json.loads(call["stdin"])
        # an answerable wait's cue also carries its token (docs/answering.md)
        answerable = cue["cue"] == "needs-input"
        assert set(payload) == FIELDS | ({"answer"} if answerable else set()), payload
        if answerable:
            assert payload["answer"]["options"] == ["Yes", "No"]
            token = payload.pop("answer")["token"]
            assert call["env"]["CUEWRAP_CUE_ANSWER_TOKEN"] == token
        assert payload["session"] == "work"
        assert payload["cwd"] == str(pi_home.cwd)
        assert payload["source"] == "bridge" and payload["certainty"] == "certain"
        assert payload["id"].endswith(f"-{cue['cue_id']}")
        assert payload["escalated"] is False
        assert time.strptime(payload["time"], "%Y-%m-%dT%H:%M:%SZ")
        # which session: cuewrap's own pid and terminal (not Pi's inner PTY); not in tmux
        assert payload["pid"] == s.pid and isinstance(payload["pid"], int)
        assert payload["tty"] == s.tty_name and payload["tmux_pane"] is None
        for key, value in payload.items():
            expected = ("true" if value else "false") if isinstance(value, bool) else str(value)
            if value is None:
                expected = ""
            assert call["env"][f"CUEWRAP_CUE_{key.upper()}"] == expected
        for word in ("PURPLE", "ELEPHANT", "ZEBRA", "MANGO", "PAPAYA", "Deploy", "confirm"):
            assert word not in json.dumps(call), (word, call)
    assert [json.loads(c["stdin"])["event"] for c in got] == ["needs-input", "finished"]
    states = [(d["cue"], d["state"]) for d in command_deliveries(s)]
    first, second = cue_records[0]["cue_id"], cue_records[1]["cue_id"]
    assert sorted(states) == [
        (first, "delivered"),
        (first, "requested"),
        (second, "delivered"),
        (second, "requested"),
    ], states
    s.quit()
    assert s.wait_exit() == 0
