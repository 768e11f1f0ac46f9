"""docs/design.md#guard: when stdin or stdout is not a terminal, cuewrap runs the command as it is.

Every check runs the same command with and without cuewrap and compares stdout, stderr and
the exit status byte for byte (issue 7 item 3), including real Pi against the fake model —
where the output is the same from run to run. Pi's JSON stream is not (its usage numbers
arrive in a different update each time): that test compares, within ONE run, the bytes the
command wrote with the bytes that reached the file.
"""

from __future__ import annotations

import json
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


@pytest.mark.pty
def test_stdout_and_stderr_stay_apart_and_unconverted() -> None:
    out, err, rc = same(["sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2; exit 3"], ["--"])
    assert (out, err, rc) == (b"out\n", b"err\n", 3)  # no \r\n, no merging


@pytest.mark.pty
def test_piped_input_is_not_echoed() -> None:
    out, _, rc = same(["sh", "-c", "cat; exit 5"], ["--"], stdin=b"x\ny\n")
    assert (out, rc) == (b"x\ny\n", 5)


@pytest.mark.pty
def test_stdin_a_terminal_stdout_a_pipe() -> None:
    out, err, rc = same(["sh", "-c", "echo out; echo err >&2"], ["--"], tty_stdin=True)
    assert (out, err, rc) == (b"out\n", b"err\n", 0)


@pytest.mark.pty
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


@pytest.mark.pty
def test_environment_is_passed_unchanged() -> None:
    env = {"PATH": os.environ["PATH"], "ODD": "x\ny=z", "TERM": "xterm-256color"}
    out, _, _ = same(["env"], ["--"], env=env)
    assert b"ODD=x\ny=z\n" in out


@pytest.mark.pty
def test_closed_stdout_stays_closed() -> None:
    """``cuewrap -- echo hi >&-`` fails like ``echo hi >&-``; nothing lands on fd 1."""
    script = "{cmd} >&-; echo rc=$? >&2"
    plain = run(["sh", "-c", script.format(cmd="/bin/echo hi")])
    wrapped = run(["sh", "-c", script.format(cmd=" ".join([*CUEWRAP, "--", "/bin/echo", "hi"]))])
    assert wrapped == plain
    assert b"rc=1" in plain[1]


def _pi_env(pi_home: PiHome) -> dict[str, str]:
    return dict(pi_home.env)


@pytest.mark.pi
def test_real_pi_version(pi_home: PiHome) -> None:
    out, _, rc = same(["pi", "--version"], [], env=_pi_env(pi_home), cwd=pi_home.cwd)
    assert rc == 0 and out.strip()


@pytest.mark.pi
def test_real_pi_print_mode(pi_home: PiHome) -> None:
    env, cwd = _pi_env(pi_home), pi_home.cwd
    out, err, rc = same(["pi", "-p", "say done"], [], env=env, cwd=cwd)
    assert (out, rc) == (b"done\n", 0), err
    # piped input (echo x | pi -p), stdin a terminal with stdout a pipe, the log flag too
    same(["pi", "-p"], [], env=env, cwd=cwd, stdin=b"say done\n")
    same(["pi", "-p", "say done"], ["--log", str(pi_home.root / "log")], env=env, cwd=cwd,
         tty_stdin=True)  # fmt: skip
    assert not (pi_home.root / "log").exists()  # silently: nothing of cuewrap's


# The ``pi`` cuewrap runs in the JSON-mode test: a shim first on PATH that runs the real Pi
# (argv[1]) with a pipe for stdout and copies every byte Pi writes both to its own stdout
# (what cuewrap handed it) and to a side file; it records what its stdout is, and exits with
# Pi's status.
_TEE = """#!{python}
import json, os, stat, subprocess, sys
real, copy, about = {real!r}, {copy!r}, {about!r}
st = os.fstat(1)
with open(about, "w") as f:
    json.dump({{"isatty": os.isatty(1), "regular": stat.S_ISREG(st.st_mode),
               "dev": st.st_dev, "ino": st.st_ino}}, f)
p = subprocess.Popen([real, *sys.argv[1:]], stdout=subprocess.PIPE)
with open(copy, "wb") as side:
    while chunk := os.read(p.stdout.fileno(), 65536):
        side.write(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(1, view):]
sys.exit(p.wait())
"""


@pytest.mark.pi
def test_real_pi_json_mode_to_a_file(pi_home: PiHome, tmp_path: Path) -> None:
    """``cuewrap pi --mode json … > file``: the file holds exactly the bytes the command
    wrote, in the same run (Pi's own stream differs from run to run — the usage numbers
    arrive in a different update — so two runs are never compared), and the command's
    stdout IS the file (not a terminal, not a pipe cuewrap reads)."""
    out, copy, about = tmp_path / "out", tmp_path / "copy", tmp_path / "about.json"
    shim = tmp_path / "shim"
    shim.mkdir()
    tee = _TEE.format(python=PY, real=str(pi_home.bin_dir / "pi"), copy=str(copy),
                      about=str(about))  # fmt: skip
    (shim / "pi").write_text(tee)
    (shim / "pi").chmod(0o755)
    env = _pi_env(pi_home)
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    with open(out, "wb") as fh:
        r = subprocess.run([*CUEWRAP, "pi", "--mode", "json", "say done"],
                           stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.PIPE,
                           env=env, cwd=pi_home.cwd, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data == copy.read_bytes()  # byte for byte what the child wrote, nothing added
    events = [json.loads(line) for line in data.splitlines()]  # each line whole JSON
    assert "agent_end" in [e.get("type") for e in events], events[-3:]  # the whole run
    assert b"\r\n" not in data  # no terminal in between (it would turn \n into \r\n)
    seen = json.loads(about.read_text())
    st = out.stat()
    assert seen == {"isatty": False, "regular": True, "dev": st.st_dev, "ino": st.st_ino}


@pytest.fixture(autouse=True)
def _no_cuewrap_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUEWRAP_LOG", raising=False)
