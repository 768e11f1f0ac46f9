"""What several test modules use and no rig owns (docs/testing.md, "Shared helpers").

- ``RecordingLog``       a decision log that keeps its records in memory (``records``, ``of``)
- ``system_tool(name)``  a system program where the system keeps it, not only on ``PATH``
                         (``useradd``, ``sshd``: ``/usr/sbin`` is not on every user's PATH)
- ``ONE_TOOL_RUN``       the bridge's facts of a run with one tool call, in order;
  ``failed_run(n)``      those of a run whose model call failed ``n`` times (retries)
- ``HELLO``, ``enc``     the bridge's wire: a minimal hello as Pi 1.4.0 sends it, a JSON line
- ``LoggedChild``        a program under cuewrap in pexpect, with its decision log: ``records``,
                         ``presence`` (a focus report sent, and cuewrap seen to take it)
- ``RECORDER``,          a ``notify.command`` that records each call (its Python source; run
  ``calls``              it with the file to append to), and the calls it recorded;
                         ``recording_command(tmp_path)`` it written there, its argv and file
- ``FakeReader``         a screen reader that reads the lines it is given (the answerer's)
- ``PtyChild``,          a relay's child that is only a PTY's master (no process), and what
  ``read_host``          a pipe standing for the host terminal got so far
- ``in_shell``,          a program run inside ``sh`` between two ``stty -g``; at its end its
  ``finish_in_shell``    exit status and output, asserting the terminal's settings came back

A fixture never lives here (conftest.py registers the rigs' fixtures); real Pi's helpers are
in ``pirig.py``, a process's own facts in ``procstat.py``, starting processes in
``launch.py``, the tracker's reference in ``trackerref.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
from launch import default_signals
from waiting import wait_until

from cuewrap.decisionlog import DecisionLog

#: Where a system keeps its programs, besides the caller's PATH: root's own PATH may lack
#: the sbin directories (``env -i PATH=/usr/local/bin:/usr/bin:/bin``, a minimal container).
SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def system_tool(name: str) -> str | None:
    """The path of the system program ``name``: on PATH, else in the system's directories."""
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(SYSTEM_DIRS))


class RecordingLog(DecisionLog):
    """The decision log, kept in memory: each record a dict with its ``kind``."""

    def __init__(self) -> None:
        super().__init__(None)
        self.records: list[dict[str, Any]] = []

    def write(self, kind: str, **fields: object) -> None:
        self.records.append({"kind": kind, **fields})

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The fields of every record of ``kind``, in order (without the kind)."""
        return [
            {k: v for k, v in r.items() if k != "kind"} for r in self.records if r["kind"] == kind
        ]


class LoggedChild:
    """A program under ``cuewrap --log LOG`` run by pexpect (``p``)."""

    p: pexpect.spawn
    log: Path
    #: how long cuewrap may take to see a focus report
    presence_within = 5.0

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The decision log's records (of ``kind``), a line still being written left out."""
        if not self.log.exists():
            return []
        rows = []
        for line in self.log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
        return [r for r in rows if kind is None or r.get("kind") == kind]

    def presence(self, report: bytes, state: str) -> None:
        """Send a focus report; wait for cuewrap's ``Presence`` fact of ``state``."""
        self.p.send(report)
        wait_until(
            lambda: any(
                r.get("type") == "Presence" and r.get("state") == state
                for r in self.records("fact")
            ),
            self.presence_within,
            f"cuewrap to see presence {state}",
        )


#: The bridge's facts of a run with one tool call (real Pi, 1.4.0 and later), in order.
ONE_TOOL_RUN = (
    "UserInput", "AgentStart", "ToolStart", "ToolEnd", "AgentEnd", "AgentBeforeSettle",
    "AgentSettled",
)  # fmt: skip


def failed_run(attempts: int) -> list[str]:
    """The bridge's facts of a run whose model call failed ``attempts`` times (the first and
    Pi's retries: one agent start and end each), in order."""
    return ["UserInput", *["AgentStart", "AgentEnd"] * attempts, "AgentBeforeSettle",
            "AgentSettled"]  # fmt: skip


#: A bridge hello as Pi 1.4.0's extension sends it (the smallest a connection takes).
HELLO: dict[str, Any] = {
    "type": "hello",
    "protocol": 1,
    "pi": "1.4.0",
    "mode": "tui",
    "hasUI": True,
    "sessionId": "sid-1",
    "sessionFile": "/tmp/s.jsonl",
    "pid": 1,
}


def enc(obj: Any) -> bytes:
    """One line of the bridge protocol."""
    return json.dumps(obj).encode() + b"\n"


def in_shell(
    argv: list[str], env: dict[str, str], dimensions: tuple[int, int] = (24, 80)
) -> pexpect.spawn:
    """``argv`` run inside sh, which prints the tty settings before and after (``B=``,
    ``A=``) and the exit status (``RC=``); all output kept in ``logfile_read``."""
    script = f'echo "B=$(stty -g)"; {shlex.join(argv)}; echo "RC=$?"; echo "A=$(stty -g)"'
    p = pexpect.spawn("sh", ["-c", script], env=env, timeout=10, dimensions=dimensions,
                      preexec_fn=default_signals)  # fmt: skip
    p.logfile_read = io.BytesIO()
    return p


def finish_in_shell(p: pexpect.spawn) -> tuple[int, bytes]:
    """Wait for ``in_shell``'s sh to end; the program's exit status and all output. Asserts
    the termios settings after are those before."""
    p.expect(pexpect.EOF)
    out: bytes = p.logfile_read.getvalue()
    before = re.search(rb"B=(\S+)", out)
    after = re.search(rb"A=(\S+)", out)
    rc = re.search(rb"RC=(\d+)", out)
    assert before and after and rc, out
    assert before.group(1) == after.group(1), "termios settings not restored"
    return int(rc.group(1)), out


#: A notify.command (Python source; its one argument: the file to append to) that records
#: each call: what it read on stdin, its CUEWRAP_CUE_ variables, its pid.
RECORDER = textwrap.dedent(
    """
    import json, os, sys
    data = sys.stdin.read()
    env = {k: v for k, v in os.environ.items() if k.startswith("CUEWRAP_CUE_")}
    with open(sys.argv[1], "a") as fh:
        fh.write(json.dumps({"stdin": data, "env": env, "pid": os.getpid()}) + "\\n")
    """
)


def recording_command(tmp_path: Path) -> tuple[list[str], Path]:
    """``RECORDER`` written into ``tmp_path``: the ``notify.command`` that runs it (its argv),
    and the file it appends each call to (``calls`` reads it)."""
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    out = tmp_path / "calls.jsonl"
    return [sys.executable, str(script), str(out)], out


class FakeReader:
    """A screen reader that reads ``lines`` (the answerer's; the real one is
    ``cuewrap.screen``'s): what it was fed kept in ``fed``."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.fed: list[bytes] = []

    def start(self) -> bool:
        return True

    def feed(self, data: bytes) -> None:
        self.fed.append(data)

    def resize(self, *, rows: int, cols: int) -> None:
        pass

    def query(self, on_lines: Callable[[list[str] | None], None]) -> None:
        on_lines(list(self.lines))

    def stop(self) -> None:
        pass


def calls(out: Path) -> list[dict[str, Any]]:
    """The calls ``RECORDER`` recorded in ``out``."""
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


class PtyChild:
    """What a ``Relay`` needs of its child, for a relay fed by hand: the PTY's master."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pid = os.getpid()
        self.reports = -1


def read_host(fd: int) -> bytes:
    """What the host (a non-blocking pipe's read end) got so far (b"" for nothing)."""
    try:
        return os.read(fd, 4096)
    except BlockingIOError:
        return b""


# a guard's ``removable`` (term/statusguard.py, term/noticeguard.py): the answer it gets, or
# a failure where it should not even ask
def yes() -> bool:
    return True


def no() -> bool:
    return False


def never() -> bool:
    raise AssertionError("removable asked where it cannot matter")
