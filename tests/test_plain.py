"""SPEC 3: when stdin or stdout is not a terminal, cuewrap runs the command as it is.

Every check runs the same command with and without cuewrap and compares stdout, stderr and
the exit status byte for byte (issue 7 item 3), including real Pi against the fake model.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pirig import PiHome

PY = sys.executable
CUEWRAP = [PY, "-m", "cuewrap"]


def run(
    argv: list[str],
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    tty_stdin: bool = False,
) -> tuple[bytes, bytes, int]:
    if tty_stdin:  # stdin a terminal, stdout a pipe: `pi -p … | jq` typed at a prompt
        master, slave = os.openpty()
        try:
            r = subprocess.run(argv, stdin=slave, capture_output=True, env=env, cwd=cwd, timeout=60)
        finally:
            os.close(slave)
            os.close(master)
    else:
        r = subprocess.run(
            argv,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=60,
        )
    return r.stdout, r.stderr, r.returncode


def same(argv: list[str], cuewrap_args: list[str], **kw: object) -> tuple[bytes, bytes, int]:
    """Run ``argv`` plain and as ``cuewrap [cuewrap_args] argv``; assert equal; return it."""
    plain = run(argv, **kw)  # type: ignore[arg-type]
    wrapped = run([*CUEWRAP, *cuewrap_args, *argv], **kw)  # type: ignore[arg-type]
    assert wrapped == plain
    return plain


def test_stdout_and_stderr_stay_apart_and_unconverted() -> None:
    out, err, rc = same(["sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2; exit 3"], ["--"])
    assert (out, err, rc) == (b"out\n", b"err\n", 3)  # no \r\n, no merging


def test_piped_input_is_not_echoed() -> None:
    out, _, rc = same(["sh", "-c", "cat; exit 5"], ["--"], stdin=b"x\ny\n")
    assert (out, rc) == (b"x\ny\n", 5)


def test_stdin_a_terminal_stdout_a_pipe() -> None:
    out, err, rc = same(["sh", "-c", "echo out; echo err >&2"], ["--"], tty_stdin=True)
    assert (out, err, rc) == (b"out\n", b"err\n", 0)


def test_same_process_argv_signals_and_descriptors() -> None:
    """exec, not a child: argv[0] as typed, signal dispositions and mask as without cuewrap,
    the same open descriptors, and the same pid (``$$`` is the pid Popen started)."""
    probe = (
        "import os, sys, json;"
        "st = open('/proc/self/status').read().splitlines();"
        "sig = [l for l in st if l.startswith(('SigIgn', 'SigBlk'))];"
        "print(json.dumps([sys.argv, sig, sorted(os.listdir('/proc/self/fd'))]))"
    )
    same([PY, "-c", probe, "a b", ""], ["--"])
    p = subprocess.Popen(
        [*CUEWRAP, "--", "sh", "-c", "echo $$"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    )
    out, _ = p.communicate(timeout=20)
    assert int(out) == p.pid


def test_environment_is_passed_unchanged() -> None:
    env = {"PATH": os.environ["PATH"], "ODD": "x\ny=z", "TERM": "xterm-256color"}
    out, _, _ = same(["env"], ["--"], env=env)
    assert b"ODD=x\ny=z\n" in out


def test_closed_stdout_stays_closed() -> None:
    """``cuewrap -- echo hi >&-`` fails like ``echo hi >&-``; nothing lands on fd 1."""
    script = "{cmd} >&-; echo rc=$? >&2"
    plain = run(["sh", "-c", script.format(cmd="/bin/echo hi")])
    wrapped = run(["sh", "-c", script.format(cmd=" ".join([*CUEWRAP, "--", "/bin/echo", "hi"]))])
    assert wrapped == plain
    assert b"rc=1" in plain[1]


def _pi_env(pi_home: PiHome) -> dict[str, str]:
    return dict(pi_home.env)


def test_real_pi_version(pi_home: PiHome) -> None:
    out, _, rc = same(["pi", "--version"], [], env=_pi_env(pi_home), cwd=pi_home.cwd)
    assert rc == 0 and out.strip()


def test_real_pi_print_mode(pi_home: PiHome) -> None:
    env, cwd = _pi_env(pi_home), pi_home.cwd
    out, err, rc = same(["pi", "-p", "say done"], [], env=env, cwd=cwd)
    assert (out, rc) == (b"done\n", 0), err
    # piped input (echo x | pi -p), stdin a terminal with stdout a pipe, the log flag too
    same(["pi", "-p"], [], env=env, cwd=cwd, stdin=b"say done\n")
    same(["pi", "-p", "say done"], ["--log", str(pi_home.root / "log")], env=env, cwd=cwd,
         tty_stdin=True)  # fmt: skip
    assert not (pi_home.root / "log").exists()  # silently: nothing of cuewrap's


def test_real_pi_json_mode_to_a_file(pi_home: PiHome, tmp_path: Path) -> None:
    env, cwd = _pi_env(pi_home), pi_home.cwd
    outs = []
    for argv in (["pi"], [*CUEWRAP, "pi"]):
        path = tmp_path / f"out{len(outs)}"
        with open(path, "wb") as fh:
            r = subprocess.run(
                [*argv, "--mode", "json", "say done"],
                stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.PIPE,
                env=env, cwd=cwd, timeout=60,
            )  # fmt: skip
        outs.append((r.returncode, r.stderr, _shape(path.read_bytes())))
    assert outs[0] == outs[1]
    assert outs[0][0] == 0 and outs[0][2]


def _shape(data: bytes) -> bytes:
    """The JSON lines with what differs between any two runs blanked: ids, timestamps,
    durations (each line still has to be JSON)."""
    import json
    import re

    for line in data.splitlines():
        json.loads(line)
    return re.sub(rb'"(id|timestamp|responseId|durationMs)":("[^"]*"|[0-9]+)', rb'"\1":"*"', data)


@pytest.fixture(autouse=True)
def _no_cuewrap_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUEWRAP_LOG", raising=False)
