"""cuewrap answers a child's Program Status query in generic mode (docs/generic-mode.md), as a user
runs it: ``cuewrap -- <a child that asks as Claude Code does>`` in a real PTY.

The test plays the host terminal (pexpect's PTY): it answers every DA1 query it reads, in order,
as every terminal does, and — when it plays a terminal that speaks the protocol — cuewrap's own
Program Status query too. The child says whether its query was answered before its DA1 answer.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest
from launch import default_signals, seen, started
from waiting import wait_until

pytestmark = pytest.mark.pty

CHILD = str(Path(__file__).parent / "children" / "status_query.py")
PY = sys.executable
DA1_QUERY = rb"\x1b\[c"
OWN_QUERY = b"\x1b]7501;?\x1b\\"  # cuewrap's own (ST); the child's ends with BEL
CHILD_QUERY = b"\x1b]7501;?\x07"
REPORT = b"state=working:app=fakeagent"


class Host:
    """cuewrap under pexpect; the test is the terminal."""

    def __init__(self, tmp_path: Path, *args: str, speaks: bool = False, pi: bool = False) -> None:
        self.log = tmp_path / "log.jsonl"
        self.speaks = speaks
        argv = ["-m", "cuewrap", "--log", str(self.log), "--", PY, CHILD, *args]
        e = dict(os.environ)
        e.update(TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off")
        for var in ("TMUX", "CUEWRAP_LOG", "CUEWRAP_GENERIC_PRESET"):
            e.pop(var, None)
        self.p = p = pexpect.spawn(
            PY, argv, env=e, timeout=10, dimensions=(24, 80), preexec_fn=default_signals
        )
        started(p)
        p.logfile_read = io.BytesIO()

    def answer_rounds(self, rounds: int) -> list[str]:
        """Answer DA1 queries as they come (cuewrap's own first), until the child has told
        ``rounds`` orders; the orders."""
        orders: list[str] = []
        first = True
        while len(orders) < rounds:
            i = self.p.expect([DA1_QUERY, rb"ROUND \d+ ORDER=([a-z-]+)"])
            if i == 0:
                if first and self.speaks:
                    # a terminal that speaks the protocol answers cuewrap's query before DA1
                    assert OWN_QUERY in self.out()
                    self.p.send(OWN_QUERY)
                first = False
                self.p.send(b"\x1b[?62;22c")
            else:
                orders.append(self.p.match.group(1).decode())
        return orders

    def out(self) -> bytes:
        return seen(self.p)

    def records(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def facts(self) -> list[dict[str, object]]:
        return [
            r
            for r in self.records()
            if r.get("kind") == "fact" and r.get("type") == "ProgramStatus"
        ]

    def quit(self) -> None:
        self.p.send(b"q")
        self.p.expect(pexpect.EOF)


def test_the_query_is_answered_before_the_hosts_da1_answer_and_never_reaches_it(
    tmp_path: Path,
) -> None:
    h = Host(tmp_path)
    assert h.answer_rounds(1) == ["status-first"]
    h.p.expect("REPORTED")
    facts = wait_until(lambda: len(h.facts()) >= 2 and h.facts(), 5, "the reports as facts")
    assert [(f["state"], f["app"]) for f in facts[:2]] == [
        ("working", "fakeagent"),
        ("done", "fakeagent"),
    ]
    out = h.out()
    assert CHILD_QUERY not in out, "the child's query reached the host terminal"
    assert REPORT not in out, "a report reached a host that does not speak the protocol"
    h.quit()
    queries = [r for r in h.records() if r.get("kind") == "status_query"]
    assert queries == [{**queries[0], "answered": True, "taken_out": True}]


def test_split_across_reads_and_repeated(tmp_path: Path) -> None:
    # 0.005 s: the halves arrive in two reads, the first held; 0.2 s: held longer than the
    # relay holds a prefix (it is released to the host, and still answered when it completes)
    h = Host(tmp_path, "split:0.005", "rounds:3")
    assert h.answer_rounds(3) == ["status-first"] * 3
    h.quit()
    (tmp_path / "b").mkdir()
    h2 = Host(tmp_path / "b", "split:0.2")
    assert h2.answer_rounds(1) == ["status-first"]
    h2.quit()


def test_a_host_that_speaks_the_protocol_gets_the_reports(tmp_path: Path) -> None:
    h = Host(tmp_path, speaks=True)
    assert h.answer_rounds(1) == ["status-first"]
    h.p.expect("REPORTED")
    wait_until(lambda: REPORT in h.out(), 5, "the report passed on to the host")
    assert CHILD_QUERY not in h.out()
    h.quit()
    answers = [r for r in h.records() if r.get("kind") == "terminal_answers"]
    assert answers and answers[0]["program_status"] is True
    # the facts are taken all the same
    assert [f["state"] for f in h.facts()][:2] == ["working", "done"]


def test_no_cues_no_answer(tmp_path: Path) -> None:
    """Without cues (TERM=dumb) cuewrap is a pure passthrough: the query reaches the host and
    cuewrap does not answer it."""
    log = tmp_path / "log.jsonl"
    e = dict(os.environ, TERM="dumb")
    e.pop("TMUX", None)
    p = pexpect.spawn(
        PY,
        ["-m", "cuewrap", "--log", str(log), "--", PY, CHILD],
        env=e,
        timeout=10,
        preexec_fn=default_signals,
    )
    started(p)
    p.expect(re.escape(CHILD_QUERY) + DA1_QUERY)
    p.send(b"\x1b[?62;22c")
    p.expect(rb"ORDER=no-status")
    p.send(b"q")
    p.expect(pexpect.EOF)


def test_doctor_asks_and_says_whether_the_terminal_speaks_it(tmp_path: Path) -> None:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "CUEWRAP_"))}
    e.update(TERM="xterm-256color", CUEWRAP_NOTIFY_DESKTOP="off")
    for speaks in (True, False):
        p = pexpect.spawn(
            PY, ["-m", "cuewrap", "doctor"], env=e, timeout=10, preexec_fn=default_signals
        )
        started(p)
        p.expect(re.escape(OWN_QUERY) + DA1_QUERY)  # asked once, before DA1
        p.send(b"\x1bP>|WezTerm 20240203\x1b\\" + (OWN_QUERY if speaks else b"") + b"\x1b[?62c")
        p.expect(pexpect.EOF)
        said = p.before.decode(errors="replace")
        asked = next(line for line in said.splitlines() if "asked:" in line)
        assert ("speaks the Program Status Protocol (OSC 7501)" in asked) is speaks, asked
        fate = next(line for line in said.splitlines() if "status reports (OSC 7501):" in line)
        assert ("passed on to the terminal" in fate) is speaks, fate
