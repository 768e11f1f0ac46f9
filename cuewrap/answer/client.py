"""``cuewrap answer PID CHOICE`` / ``cuewrap answer --token TOKEN CHOICE`` (docs/answering.md),
``cuewrap mute PID [DURATION]`` / ``cuewrap unmute PID`` (docs/attention.md).

Finds the session (by pid, or the one whose answerable wait has that token, in the registry),
connects to its control socket, sends one request and prints one line: the option the dialog
closed with (exit 0: that answer; the session's ``took_line``) or why not (exit 1; also when
Pi closed it with another option). Usage errors exit 2.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Mapping, Sequence

from cuewrap.answer import wire
from cuewrap.answer.book import NO_SESSION, STALE
from cuewrap.args import err

USAGE = "usage: cuewrap answer PID CHOICE | cuewrap answer --token TOKEN CHOICE"
TIMEOUT = 10.0  # seconds to wait for the session's reply (it answers within ~2.5 s)


def _socket_path(pid: int, env: Mapping[str, str]) -> str | None:
    """The control socket of the live session ``pid``: a socket of ours beside its entry."""
    import stat

    from cuewrap.sessions.registry import directories, read_sessions

    if not any(r.get("pid") == pid for r in read_sessions(env)):
        return None
    for directory in dict.fromkeys(directories(env)):
        path = os.path.join(directory, f"{pid}.sock")
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid():
            return path
    return None


def _by_token(token: str, env: Mapping[str, str]) -> int | None:
    from cuewrap.sessions.registry import read_sessions

    for record in read_sessions(env):
        wait = record.get("wait")
        if isinstance(wait, dict) and wait.get("token") == token:
            pid = record.get("pid")
            return pid if isinstance(pid, int) else None
    return None


def send(path: str, line: bytes, timeout: float = TIMEOUT) -> tuple[bool, str]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        sock.sendall(line)
        data = b""
        while b"\n" not in data and len(data) <= wire.MAX_REQUEST:
            chunk = sock.recv(wire.MAX_REQUEST)
            if not chunk:
                break
            data += chunk
    except TimeoutError:
        return False, "the session did not reply in time"
    except OSError:
        return False, NO_SESSION
    finally:
        with contextlib.suppress(OSError):
            sock.close()
    return wire.read_reply(data)


def answer_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    args = list(argv)
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    token: str | None = None
    if args[:1] == ["--token"]:
        if len(args) != 3:
            err(f"answer: {USAGE}")
            return 2
        token, choice = args[1], args[2]
        pid = _by_token(token, env)
        if pid is None:
            print(STALE)
            return 1
    else:
        if len(args) != 2 or not args[0].isdecimal():
            err(f"answer: {USAGE}")
            return 2
        pid, choice = int(args[0]), args[1]
    path = _socket_path(pid, env)
    if path is None:
        print(NO_SESSION)
        return 1
    ok, said = send(path, wire.request_line(choice, token))
    if said or not ok:  # what the dialog closed with, or why not
        print(said)
    return 0 if ok else 1


MUTE_USAGE = "usage: cuewrap mute PID [DURATION] | cuewrap unmute PID  (DURATION: 30m, 2h, 1d, 90s)"


def mute_command(argv: Sequence[str], *, muted: bool, env: Mapping[str, str] | None = None) -> int:
    """Exit 0 once the session took it; 1 with one line why not; 2 for a usage error."""
    from cuewrap.quiethours import parse_duration

    env = os.environ if env is None else env
    args = list(argv)
    if any(a in ("-h", "--help") for a in args):
        print(MUTE_USAGE)
        return 0
    if not args or not args[0].isdecimal() or len(args) > (2 if muted else 1):
        err(f"{'mute' if muted else 'unmute'}: {MUTE_USAGE}")
        return 2
    duration: float | None = None
    if len(args) == 2:
        try:
            duration = parse_duration(args[1])
        except ValueError as exc:
            err(f"mute: {exc}")
            return 2
    path = _socket_path(int(args[0]), env)
    if path is None:
        print(NO_SESSION)
        return 1
    ok, why = send(path, wire.mute_line(muted, duration))
    if ok:
        return 0
    print(why)
    return 1
