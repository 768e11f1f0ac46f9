"""tmux asked in one way: the same command line blocking and on the loop, and one reading of
``allow-passthrough``, against a fake ``tmux`` first on PATH that answers as tmux 3.2 (no such
option: DCS passthrough always passes) or as tmux 3.3 (the option, off by default).

The start-up question (``deliver.terminal.query_tmux``, blocking) and the live view a cue is
delivered from (``tmux.view`` through ``tmux.control.run_tmux``, on the loop) must agree on
whether a notification can be passed through: they read the option the same way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from waiting import turning, wait_until

from cuewrap.deliver.terminal import detect_terminal_protocol, query_tmux
from cuewrap.loop import Loop
from cuewrap.tmux.command import passthrough_allowed, run_blocking, tmux_argv
from cuewrap.tmux.control import run_tmux
from cuewrap.tmux.view import CLIENT_FORMAT, PANE_FORMAT, parse_view
from cuewrap.workers import Reaper

pytestmark = pytest.mark.pty

# A fake tmux: expands the formats it is asked for from FAKE_TMUX (JSON: version, allow), and
# answers ``show-options -Apv allow-passthrough`` as that version would. Every argv is logged.
FAKE = """#!{python}
import json, os, re, sys
cfg = json.loads(os.environ["FAKE_TMUX"])
with open(cfg["log"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args[:1] == ["-S"]:
    args = args[2:]
old = cfg["version"] < "3.3"
values = {{
    "version": cfg["version"], "allow-passthrough": "" if old else cfg["allow"],
    "session_id": "$1", "session_name": "work", "window_id": "@1", "window_index": "0",
    "window_name": "pi", "window_active": "1", "pane_id": "%1", "focus-events": "0",
    "monitor-bell": "1", "client_termname": "xterm-256color", "client_termtype": "",
    "client_name": "/dev/pts/9", "client_control_mode": "0", "client_flags": "attached,focused",
}}
def expand(fmt):
    return re.sub(r"#\\{{([^}}]*)\\}}", lambda m: values.get(m.group(1), ""), fmt)
out = []
for cmd in " ".join(args).split(" ; "):
    words = cmd.split(" ")
    if words[0] == "show-options":
        if old:
            sys.stderr.write("invalid option: allow-passthrough\\n")
            sys.exit(1)
        out.append(cfg["allow"])
    elif words[0] in ("display-message", "list-clients"):
        out.append(expand(words[-1]))
sys.stdout.write("".join(line + "\\n" for line in out))
"""


def fake_tmux(tmp_path: Path, version: str, allow: str = "off") -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    tmux = bindir / "tmux"
    tmux.write_text(FAKE.format(python=sys.executable))
    tmux.chmod(0o755)
    log = tmp_path / "tmux.log"
    return {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "TMUX": f"{tmp_path}/sock,1234,1",
        "TMUX_PANE": "%1",
        "TERM": "tmux-256color",
        "FAKE_TMUX": json.dumps({"version": version, "allow": allow, "log": str(log)}),
    }


def calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "tmux.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def view_on_the_loop(env: dict[str, str]) -> bool:
    """The live view's reading of passthrough, asked as tmux.side asks it (on the loop)."""
    loop = Loop()
    reaper = Reaper(loop)
    got: list[tuple[int | None, str]] = []
    args = ["display-message", "-p", "-t", "%1", PANE_FORMAT, ";"]
    args += ["list-clients", "-F", CLIENT_FORMAT]
    try:
        assert run_tmux(loop, reaper, env, args, lambda st, out: got.append((st, out)))
        wait_until(lambda: got, 10, "the tmux command's answer", sleep=turning(loop))
    finally:
        reaper.close()
        loop.close()
    status, out = got[0]
    lines = tuple(out.splitlines())
    view = parse_view(lines[:1], lines[1:]) if status == 0 else None
    assert view is not None, out
    return view.passthrough


@pytest.mark.parametrize(
    ("version", "allow", "passes"),
    [("3.2a", "off", True), ("3.3a", "off", False), ("3.3a", "on", True), ("3.4", "all", True)],
)
def test_start_up_and_live_view_read_allow_passthrough_alike(
    tmp_path: Path, version: str, allow: str, passes: bool
) -> None:
    env = fake_tmux(tmp_path, version, allow)
    info = query_tmux(env)
    assert info is not None and info.version == version
    choice = detect_terminal_protocol(env, "osc777", lambda: info)
    assert choice.tmux_passthrough is passes, choice
    assert (choice.protocol == "osc777") is passes
    assert view_on_the_loop(env) is passes
    # the same command line both ways: the server of $TMUX by its socket
    socket = env["TMUX"].split(",")[0]
    assert calls(tmp_path) and all(c[:2] == ["-S", socket] for c in calls(tmp_path))


def test_the_one_reading() -> None:
    assert passthrough_allowed(None, "")  # no such option (tmux < 3.3 said so)
    assert passthrough_allowed("", "3.2a")  # the empty format of a tmux without the option
    assert not passthrough_allowed("", "3.3a") and not passthrough_allowed("off", "3.3a")
    assert passthrough_allowed("1", "3.3a") and passthrough_allowed("all", "next-3.5")
    assert not passthrough_allowed("0", "")  # an unknown version reads the value


def test_outside_tmux_nothing_runs(tmp_path: Path) -> None:
    env = fake_tmux(tmp_path, "3.3a")
    del env["TMUX"]
    assert tmux_argv(env, ["list-clients"]) is None
    assert run_blocking(env, ["list-clients"], 1.0) is None
    assert query_tmux(env) is None
    assert calls(tmp_path) == []
