"""The registry of running sessions, ``cuewrap ls`` and ``cuewrap go`` outside tmux.

Real processes: cuewrap in a PTY wrapping a small program the test drives (generic mode), a
SIGKILL, entries of live and dead processes, files that are not entries. Each test has its
own runtime directory (``XDG_RUNTIME_DIR``) or temp directory (``TMPDIR``).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from launch import default_signals
from waiting import wait_until

from cuewrap.sessions import registry

pytestmark = pytest.mark.pty

PY = sys.executable

# a program driven from its stdin (no echo: only its own output counts): "work N" is quiet for
# longer than a pause (so its output is news), then prints N lines; "bell" rings; "exit N" ends
CHILD = textwrap.dedent(
    """
    import sys, termios, time
    attrs = termios.tcgetattr(0)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    print("READY", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "work":
            time.sleep(1.5)
            for i in range(int(cmd[1])):
                print("working", i, flush=True)
                time.sleep(0.1)
        elif cmd[0] == "bell":
            sys.stdout.write("\\a")
            sys.stdout.flush()
        elif cmd[0] == "exit":
            sys.exit(int(cmd[1]))
    """
)


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return run


def env_for(runtime: Path, **extra: str) -> dict[str, str]:
    """The environment of the test's own registry: ls reads the runtime directory's and the
    temp directory's (other cuewraps running on this machine are in the real ones)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "TMUX"))}
    tmp = runtime.parent / "tmpdir"
    tmp.mkdir(exist_ok=True)
    e.update(
        XDG_RUNTIME_DIR=str(runtime),
        TMPDIR=str(tmp),
        TERM="xterm-256color",
        CUEWRAP_NOTIFY_DESKTOP="off",
        CUEWRAP_GENERIC_QUIET_AFTER="0",
    )
    e.update(extra)
    return e


def ls(env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [PY, "-m", "cuewrap", "ls", "--json"], env=env, capture_output=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    rows = json.loads(done.stdout)
    assert isinstance(rows, list)
    return rows


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cuewrap", *args], env=env, capture_output=True, text=True, timeout=20
    )


class Generic:
    """``cuewrap --events FILE -- python child.py`` in a PTY, under ``umask``."""

    def __init__(self, tmp_path: Path, env: dict[str, str], umask: int = 0o022) -> None:
        script = tmp_path / "child.py"
        script.write_text(CHILD)
        self.events = tmp_path / "events.jsonl"
        self.log = tmp_path / "log.jsonl"
        inner = [PY, "-m", "cuewrap", "--events", str(self.events), "--log", str(self.log)]
        inner += ["--", PY, str(script)]
        cmd = f"umask {umask:03o}; exec " + " ".join(map(_quote, inner))
        self.p = pexpect.spawn(
            "/bin/sh", ["-c", cmd], env=env, timeout=15, preexec_fn=default_signals
        )
        self.p.expect("READY")
        self.pid = self.p.pid  # sh exec'd cuewrap: the same process

    def send(self, line: str) -> None:
        self.p.sendline(line)

    def lines(self) -> list[dict[str, Any]]:
        if not self.events.exists():
            return []
        return [json.loads(line) for line in self.events.read_text().splitlines()]

    def states(self) -> list[str]:
        return [line["state"] for line in self.lines()]

    def close(self) -> None:
        if self.p.isalive():
            self.p.terminate(force=True)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


@pytest.fixture
def generic(tmp_path: Path, runtime: Path) -> Iterator[Generic]:
    g = Generic(tmp_path, env_for(runtime), umask=0o000)
    yield g
    g.close()


def row_of(env: dict[str, str], pid: int) -> dict[str, Any] | None:
    return next((r for r in ls(env) if r["pid"] == pid), None)


def wait_state(env: dict[str, str], pid: int, state: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        row = row_of(env, pid)
        return row if row is not None and row["state"] == state else None

    return wait_until(check, 10, f"ls to show {state}", detail=lambda: ls(env))


# -- a real session ---------------------------------------------------------------------------


def test_a_generic_session_through_its_states(generic: Generic, runtime: Path) -> None:
    env = env_for(runtime)
    row = wait_state(env, generic.pid, "working")  # it printed READY: output is work
    assert row["program"] == "python3" or row["program"].startswith("python")
    assert row["cwd"] == os.getcwd() and row["session"] == os.path.basename(os.getcwd())
    assert row["tty"] == os.readlink(f"/proc/{generic.pid}/fd/0")  # cuewrap's own terminal
    assert row["tmux_pane"] is None and row["presence"] == "unknown" and row["mark"] is None
    assert isinstance(row["since"], int | float)
    generic.send("bell")
    wait_state(env, generic.pid, "needs-input")
    generic.send("work 3")  # output again: the wait is over
    wait_state(env, generic.pid, "working")
    generic.send("bell")
    wait_state(env, generic.pid, "needs-input")
    # the registry, under umask 000: the directory 0700, the entry 0600
    directory = runtime / "cuewrap"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    entry = directory / f"{generic.pid}.json"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    sock = directory / f"{generic.pid}.sock"  # the control socket (cuewrap mute), 0600
    assert sorted(p.name for p in directory.iterdir()) == [entry.name, sock.name]  # no temporary
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    generic.send("exit 3")
    generic.p.expect(pexpect.EOF)
    generic.p.close()
    assert generic.p.exitstatus == 3
    assert not entry.exists() and not sock.exists()  # removed at exit
    assert ls(env) == []
    assert cli(env, "ls").stdout == "No sessions\n"
    lines = generic.lines()
    assert [line["state"] for line in lines] == [
        "starting",
        "working",
        "needs-input",
        "working",
        "needs-input",
        "failed",
        "exited",
    ], lines
    assert lines[-2]["outcome"] == "failed"
    assert all(line["pid"] == generic.pid for line in lines)
    assert all("outcome" not in line for line in lines[:-2] + lines[-1:])
    sinces = [line["since"] for line in lines]
    assert sinces == sorted(sinces)
    # the decision log says the same changes
    records = [json.loads(line) for line in generic.log.read_text().splitlines()]
    logged = [r["state"] for r in records if r["kind"] == "session_state"]
    assert logged == [line["state"] for line in lines]


def test_sigkill_leaves_an_entry_no_reader_lists(generic: Generic, runtime: Path) -> None:
    env = env_for(runtime)
    wait_state(env, generic.pid, "working")
    entry = runtime / "cuewrap" / f"{generic.pid}.json"
    assert entry.exists()
    os.kill(generic.pid, signal.SIGKILL)
    wait_until(lambda: not generic.p.isalive(), 10, "cuewrap to die")
    assert entry.exists()  # nobody could remove it ...
    assert ls(env) == []  # ... but it is never listed
    assert not entry.exists()  # and the reader removed it
    out = cli(env, "go", str(generic.pid))
    assert out.returncode == 1 and "no running session with pid" in out.stderr


def test_go_outside_tmux_says_where(generic: Generic, runtime: Path) -> None:
    env = env_for(runtime)
    wait_state(env, generic.pid, "working")
    out = cli(env, "go", str(generic.pid))
    assert out.returncode == 0, out.stderr
    tty = os.readlink(f"/proc/{generic.pid}/fd/0")
    assert (
        out.stdout.startswith(f"{generic.pid}: ") and tty in out.stdout and "working" in out.stdout
    )
    assert cli(env, "go", "1").returncode == 1
    assert cli(env, "go").returncode == 2
    assert cli(env, "go", "x").returncode == 2


# -- entries the reader must not trust --------------------------------------------------------


def _start_time(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[19])


def fake_entry(directory: Path, pid: int, **fields: Any) -> Path:
    record = {
        "version": registry.VERSION,
        "pid": pid,
        "start_time": _start_time(pid) if Path(f"/proc/{pid}").exists() else 1,
        "program": "fake",
        "cwd": "/",
        "session": "fake",
        "state": "idle",
        "since": 1.0,
        **fields,
    }
    path = directory / f"{pid}.json"
    path.write_text(json.dumps(record))
    return path


class Sleepers:
    """``sleep 60`` processes, killed after the test."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(["sleep", "60"])
        self.procs.append(p)
        return p


@pytest.fixture
def sleepers() -> Iterator[Sleepers]:
    s = Sleepers()
    yield s
    for p in s.procs:
        p.kill()
        p.wait()


def registry_dir(runtime: Path) -> Path:
    """cuewrap's registry directory in ``runtime``, made as cuewrap makes it."""
    directory = runtime / "cuewrap"
    directory.mkdir(mode=0o700)
    return directory


def test_order_and_table(runtime: Path, sleepers: Sleepers) -> None:
    directory = registry_dir(runtime)
    states = ["idle", "working", "finished", "needs-input", "failed"]
    for i, state in enumerate(states):
        p = sleepers.start()
        fake_entry(directory, p.pid, state=state, since=100.0 + i, session=f"s{i}")
    env = env_for(runtime)
    rows = ls(env)
    assert [r["state"] for r in rows] == ["needs-input", "failed", "finished", "working", "idle"]
    for r in rows:
        assert {"pid", "program", "cwd", "session", "state", "since", "tmux_pane", "tty"} <= set(r)
        assert {"presence", "mark"} <= set(r)
    table = cli(env, "ls").stdout.splitlines()
    assert table[0].split() == ["PID", "STATE", "SINCE", "PROGRAM", "SOURCE", "SESSION", "WHERE"]
    assert [line.split()[1] for line in table[1:]] == [r["state"] for r in rows]


def test_dead_reused_malformed_foreign_entries(runtime: Path, sleepers: Sleepers) -> None:
    directory = registry_dir(runtime)
    live = sleepers.start()
    good = fake_entry(directory, live.pid, state="working")
    # a pid that is alive but started at another time: a reused pid
    reused = fake_entry(directory, os.getpid(), start_time=_start_time(os.getpid()) + 1)
    # a dead process
    dead_proc = subprocess.Popen(["true"])
    dead_proc.wait()
    dead = fake_entry(directory, dead_proc.pid)
    dead_sock = directory / f"{dead_proc.pid}.sock"  # its control socket (docs/answering.md)
    dead_sock.write_text("")
    live_sock = directory / f"{live.pid}.sock"
    live_sock.write_text("")
    # a zombie (dead, its parent has not reaped it yet)
    zombie = sleepers.start()
    started = _start_time(zombie.pid)
    zombie.kill()
    stat_path = Path(f"/proc/{zombie.pid}/stat")
    wait_until(lambda: stat_path.read_text().rpartition(")")[2].split()[0] == "Z", 5, "a zombie")
    undead = fake_entry(directory, zombie.pid, start_time=started)
    # files that are not entries: left alone, never a crash
    (directory / "77777.json").write_text("{not json")
    (directory / "77778.json").write_text(json.dumps([1, 2]))
    (directory / "77779.json").write_text(json.dumps({"version": 99, "pid": 77779}))
    (directory / "notes.txt").write_text("hello")
    (directory / "88888.json").symlink_to(good)
    (directory / "99999.json").mkdir()
    rows = ls(env_for(runtime))
    assert [r["pid"] for r in rows] == [live.pid]
    assert good.exists() and not reused.exists() and not dead.exists() and not undead.exists()
    assert live_sock.exists() and not dead_sock.exists()
    for name in ("77777.json", "77778.json", "77779.json", "notes.txt", "99999.json"):
        assert (directory / name).exists()
    assert (directory / "88888.json").is_symlink()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make another user's file")
def test_another_users_entry_is_never_read(runtime: Path, sleepers: Sleepers) -> None:
    directory = registry_dir(runtime)
    p = sleepers.start()
    path = fake_entry(directory, p.pid)
    os.chown(path, 65534, 65534)
    assert ls(env_for(runtime)) == []
    assert path.exists()
    os.chown(path, 0, 0)
    assert [r["pid"] for r in ls(env_for(runtime))] == [p.pid]


def test_without_xdg_runtime_dir_the_temp_dir(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = env_for(tmp_path, TMPDIR=str(tmp))
    del env["XDG_RUNTIME_DIR"]
    g = Generic(tmp_path, env, umask=0o000)
    try:
        row = wait_state(env, g.pid, "working")
        assert row["pid"] == g.pid
        directory = tmp / f"cuewrap-sessions-{os.getuid()}"
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        entry = directory / f"{g.pid}.json"
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    finally:
        g.close()
    assert ls(env) == []


def test_a_directory_that_is_not_ours_is_not_used(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (tmp / f"cuewrap-sessions-{os.getuid()}").symlink_to(target)
    env = {"TMPDIR": str(tmp)}
    assert registry.own_directory(env) is None
    assert registry.read_sessions(env) == []


def test_entry_write_is_atomic_and_private(tmp_path: Path) -> None:
    directory = tmp_path / "d"
    directory.mkdir(mode=0o700)
    old = os.umask(0)
    try:
        entry = registry.Entry(str(directory))
        entry.write({"state": "idle", "since": 1.0})
        entry.write({"state": "working", "since": 2.0})
    finally:
        os.umask(old)
    path = Path(entry.path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["state"] == "working"
    assert sorted(p.name for p in directory.iterdir()) == [path.name]
    entry.remove()
    assert list(directory.iterdir()) == []


def test_ctrl_z_is_stopped_until_fg(tmp_path: Path, runtime: Path) -> None:
    """``cat`` under cuewrap in an interactive bash: Ctrl-Z stops the pair and ls says
    ``stopped`` (written before cuewrap stopped itself); ``fg`` brings the state back."""
    env = env_for(runtime, PS1="PROMPT$ ", HISTFILE="/dev/null", PROMPT_COMMAND="")
    events = tmp_path / "events.jsonl"
    p = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],
        env=env,
        timeout=10,
        preexec_fn=default_signals,
    )
    try:
        p.expect_exact("PROMPT$ ")
        p.sendline(f"{PY} -m cuewrap --events {events} -- cat")
        p.sendline("one")
        p.expect("one\r\n.*one")  # echoed by the terminal, then by cat
        [row] = wait_until(lambda: ls(env), 10, "the session listed")
        p.send("\x1a")
        p.expect("Stopped")
        p.expect_exact("PROMPT$ ")
        assert row_of(env, row["pid"])["state"] == "stopped"  # type: ignore[index]
        p.sendline("fg")
        wait_until(
            lambda: (r := row_of(env, row["pid"])) is not None and r["state"] != "stopped",
            10,
            "the state after fg",
        )
        p.send("\x04")
        p.expect_exact("PROMPT$ ")
        p.sendline("exit")
        p.expect(pexpect.EOF)
    finally:
        p.close(force=True)
    states = [json.loads(line)["state"] for line in events.read_text().splitlines()]
    # cat answered the typing (idle: no work of its own), stopped, back, ^D: exit status 0
    assert states == ["starting", "idle", "stopped", "idle", "finished", "exited"], states


def test_an_events_path_that_cannot_be_written_exits_2(tmp_path: Path, runtime: Path) -> None:
    """Checked before anything is spawned, like the decision log: one line, status 2."""
    for path, why in (
        (tmp_path / "missing" / "events.jsonl", "cannot write"),
        (tmp_path, "cannot write"),  # a directory
    ):
        p = pexpect.spawn(
            PY, ["-m", "cuewrap", "--events", str(path), "--", "true"], env=env_for(runtime)
        )
        p.expect(pexpect.EOF)
        p.close()
        assert p.exitstatus == 2
        assert f"cuewrap: events file {path}: {why}" in p.before.decode()


def test_cuewrap_events_variable(tmp_path: Path, runtime: Path) -> None:
    """``CUEWRAP_EVENTS`` as ``--events``: a program that exits 0 at once finished."""
    events = tmp_path / "events.jsonl"
    p = pexpect.spawn(
        PY, ["-m", "cuewrap", "--", "true"], env=env_for(runtime, CUEWRAP_EVENTS=str(events))
    )
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(line["state"], line.get("outcome")) for line in lines] == [
        ("starting", None),
        ("finished", "completed"),
        ("exited", None),
    ]
