"""docs/answering.md's ntfy recipe, end to end: its two scripts, taken from the page, real Pi
on the fake model, and a local stand-in for ntfy's HTTP API (tests/ntfystand.py): the
reminder reaches the reminders' topic with a button per option, a tap on "No" publishes to
the reply topic, the answers loop runs ``cuewrap answer --token``, and the confirm closes
with No."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from ntfystand import NtfyStandIn, recipe, recipe_bin
from pirig import PiHome, PiSession, ready_away
from waiting import wait_until

pytestmark = pytest.mark.pi


def test_the_ntfy_recipe_answers_from_the_phone(
    pi_session: Any, pi_home: PiHome, fakemodel: FakeModel, tmp_path: Path
) -> None:
    bindir = recipe_bin(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f'[notify]\ncommand = ["{bindir / "cuewrap-ntfy"}"]\n')
    with NtfyStandIn(token="tk_recipe") as ntfy:
        topics = {"NTFY_URL": ntfy.url, "NTFY_TOPIC": "reminders-x7", "NTFY_REPLY": "answers-x7",
                  "NTFY_TOKEN": "tk_recipe"}  # fmt: skip
        s: PiSession = pi_session(cuewrap_args=["--config", str(config)], env=topics)
        env = {**pi_home.env, **topics, "PATH": f"{bindir}:{pi_home.env['PATH']}"}
        loop = subprocess.Popen([str(bindir / "cuewrap-ntfy-answers")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        try:
            ready_away(s)
            fakemodel.push(tool_call("test_confirm", {"title": "Deploy", "message": "Now?"}),
                           text("after the dialog"))  # fmt: skip
            s.prompt("run test_confirm")
            [note] = wait_until(lambda: ntfy.published("reminders-x7"), 15,
                                "the reminder on ntfy", detail=s.dump)  # fmt: skip
            assert note["title"] == "work: needs-input" and note["message"] == "cuewrap"
            buttons = ntfy.buttons(note)
            assert [b["label"] for b in buttons] == ["Yes", "No"]
            assert all(b["url"] == f"{ntfy.url}/answers-x7" for b in buttons)
            assert all(b["headers.Authorization"] == "Bearer tk_recipe" for b in buttons)
            ntfy.tap(note, "No")
            s.wait_for_screen(r"after the dialog")
            assert fakemodel.content_text(fakemodel.tool_results()[-1]) == "confirmed: no"
            [attempt] = [r for r in s.log_records("answer") if "result" in r]
            assert (attempt["source"], attempt["option"], attempt["result"], attempt["took"]) == (
                "token", 2, "answered", 2)  # fmt: skip
            assert ntfy.refused == 0  # every request carried the access token
        finally:
            os.killpg(loop.pid, signal.SIGTERM)
            loop.wait(timeout=5)


def test_the_recipe_refuses_the_placeholder_topics(tmp_path: Path) -> None:
    """Copied as it is, neither script publishes or listens: the topics are still the
    placeholders (no request is made: the URL points nowhere)."""
    for script, needs in (("ntfy-notify", "NTFY_TOPIC and NTFY_REPLY"),
                          ("ntfy-answers", "NTFY_REPLY")):  # fmt: skip
        path = tmp_path / script
        path.write_text(recipe(script))
        path.chmod(0o755)
        env = {"PATH": os.environ["PATH"], "NTFY_URL": "http://127.0.0.1:9"}
        done = subprocess.run([str(path)], input=b"{}", env=env, capture_output=True, timeout=10)
        assert done.returncode == 1 and f"set {needs} first" in done.stderr.decode()
