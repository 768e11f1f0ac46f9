"""The pexpect example of docs/scripting.md, run as it is written against real Pi.

The example is taken from the document (its one ``python`` block), so the documented script
is the tested one. Pi talks to the fake model; ``cuewrap`` and ``pi`` are found on PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakemodel import FakeModel, text
from pirig import PiHome

DOC = Path(__file__).resolve().parent.parent / "docs" / "scripting.md"


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "docs/scripting.md has one python example"
    return str(blocks[0])


@pytest.mark.pi
@pytest.mark.parametrize("pi_version", ["1.4.0"])
def test_the_documented_pexpect_example(
    tmp_path: Path, pi_home: PiHome, fakemodel: FakeModel
) -> None:
    script = tmp_path / "example.py"
    script.write_text(example())
    fakemodel.push(text("hello there"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = dict(pi_home.env)
    bin_dir = os.path.dirname(sys.executable)  # this environment's `cuewrap` script
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        TMPDIR=str(tmp),
        XDG_RUNTIME_DIR=str(run),
        CUEWRAP_NOTIFY_DESKTOP="off",
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        cwd=pi_home.cwd,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "run ended: completed\n"
    assert any("Say hello" in json.dumps(r) for r in fakemodel.requests)
    [events] = list(tmp.glob("*/events.jsonl"))
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    states = [line["state"] for line in lines]
    assert states[0] == "starting" and states[-1] == "exited", states
    assert "working" in states
    end = states.index("finished")
    assert lines[end]["outcome"] == "completed"
    assert states[end + 1] == "idle"  # the user was present (no focus reports, typing)
    assert {line["pid"] for line in lines} == {lines[0]["pid"]}
    assert not any(run.rglob("*.json"))  # the registry entry went with the session
