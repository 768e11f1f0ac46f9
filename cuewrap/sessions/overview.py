"""``cuewrap ls [--json]`` and ``cuewrap go PID``: every running session, and the way to one.

Both read the registry (``registry.read_sessions``: the user's own entries of live processes
only). Where a session runs inside tmux, its place (``session:window.pane``) is asked of that
tmux server with one ``list-panes`` per server, and only of a server whose socket is the
user's own. ``go`` switches the calling tmux client to the session's pane when both run in the
same tmux server; anywhere else it says where the session is (docs/sessions.md).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cuewrap.args import err
from cuewrap.sessions.registry import read_sessions
from cuewrap.states import URGENCY

if TYPE_CHECKING:
    import subprocess

LS_USAGE = "usage: cuewrap ls [--json]"
GO_USAGE = "usage: cuewrap go PID"
FIELDS = (
    "pid",
    "program",
    "cwd",
    "session",
    "state",
    "since",
    "outcome",
    "source",
    "presence",
    "mark",
    "tty",
    "tmux_pane",
    "where",
    "wait",
    "muted",
    "muted_until",
)


# Pi's dialogs, and a program's own as its report names them (generic mode)
WAIT_KINDS = ("confirm", "select", "ask", "permission", "question")


def _wait(value: object) -> dict[str, Any] | None:
    """An entry's answerable wait (docs/answering.md), only in its own shape."""
    if not isinstance(value, dict):
        return None
    kind, token, options, count = (value.get(k) for k in ("kind", "token", "options", "count"))
    if kind not in WAIT_KINDS or not isinstance(token, str):
        return None
    if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= 100:
        return None
    if options is not None and not (
        isinstance(options, list)
        and len(options) == count
        and all(isinstance(o, str) for o in options)
    ):
        return None
    return {"kind": kind, "token": token[:100], "options": options, "count": count}


def socket_of(env: Mapping[str, str]) -> str:
    """The tmux server of ``$TMUX`` (as ``cuewrap.tmux.control`` reads it, without its
    imports: ``ls`` must start fast)."""
    return env.get("TMUX", "").split(",")[0]


def _run(argv: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[bytes] | None:
    import subprocess  # only when a session runs in tmux

    try:
        return subprocess.run(
            argv,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5.0,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _own_socket(path: str) -> bool:
    try:
        return os.stat(path).st_uid == os.getuid()
    except OSError:
        return False


def _tmux_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}


def tmux_places(sockets: set[str], env: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """``(socket, pane id) -> session:window.pane`` for the panes of the user's tmux servers."""
    places: dict[tuple[str, str], str] = {}
    fmt = "#{pane_id}\t#{session_name}:#{window_index}.#{pane_index}"
    for socket in sorted(sockets):
        if not _own_socket(socket):
            continue
        done = _run(["tmux", "-S", socket, "list-panes", "-a", "-F", fmt], _tmux_env(env))
        if done is None:
            continue
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            pane, _, place = line.partition("\t")
            places.setdefault((socket, pane), place)
    return places


def sessions(env: Mapping[str, str]) -> list[dict[str, Any]]:
    """The live sessions, most urgent first (then the longest in that state first)."""
    dead: list[dict[str, Any]] = []
    records = read_sessions(env, removed=dead)
    if dead:
        forget_windows(dead, records, env)
    sockets = {r["tmux_socket"] for r in records if isinstance(r.get("tmux_socket"), str)}
    places = tmux_places(sockets, env) if sockets else {}
    out: list[dict[str, Any]] = []
    for r in records:
        row = {key: r.get(key) for key in FIELDS}
        row["wait"] = _wait(r.get("wait"))
        row["muted"] = r.get("muted") is True  # docs/attention.md
        until = r.get("muted_until")
        ok = row["muted"] and isinstance(until, int | float) and not isinstance(until, bool)
        row["muted_until"] = until if ok else None
        pane, socket = r.get("tmux_pane"), r.get("tmux_socket")
        place = places.get((str(socket), pane)) if isinstance(pane, str) else None
        if isinstance(pane, str) and place is None:
            place = f"tmux pane {pane}"
        row["where"] = place or r.get("tty")
        row["tmux_socket"] = socket
        out.append(row)
    out.sort(key=lambda r: (URGENCY.get(str(r["state"]), len(URGENCY)), r["since"], r["pid"]))
    return out


def forget_windows(
    dead: list[dict[str, Any]], live: list[dict[str, Any]], env: Mapping[str, str]
) -> None:
    """A killed cuewrap could not unset its window's ``@cuewrap_state``: the reader that
    removed its entry does (or leaves the window the state of its other cuewrap panes). Only
    on the user's own tmux servers; a pane that is gone makes tmux fail, which is fine."""
    for rec in dead:
        pane, socket, window = rec.get("tmux_pane"), rec.get("tmux_socket"), rec.get("tmux_window")
        if not (isinstance(pane, str) and isinstance(socket, str) and _own_socket(socket)):
            continue
        states = [
            str(r["state"])
            for r in live
            if window and r.get("tmux_socket") == socket and r.get("tmux_window") == window
        ]
        states = [s for s in states if s in URGENCY]
        target = window if isinstance(window, str) and window else pane
        if states:
            value = min(states, key=URGENCY.__getitem__)
            args = ["set-option", "-w", "-t", target, "@cuewrap_state", value]
        else:
            args = ["set-option", "-w", "-u", "-t", target, "@cuewrap_state"]
        if rec.get("muted") is True:  # docs/attention.md
            args += [";", "set-option", "-w", "-u", "-t", target, "@cuewrap_muted"]
        _run(["tmux", "-S", socket, *args], _tmux_env(env))


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d"


def _clean(value: object) -> str:
    """A table cell: one line, no control characters."""
    text = "" if value is None else str(value)
    return "".join(c if c.isprintable() else "?" for c in text)


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "/" and (path + "/").startswith(home + "/") else path


def table(rows: Sequence[Mapping[str, Any]], now: float) -> str:
    head = ("PID", "STATE", "SINCE", "PROGRAM", "SOURCE", "SESSION", "WHERE")
    lines = [head]
    for r in rows:
        label = r.get("session") or _home(str(r.get("cwd") or ""))
        mark = f" {r['mark']}" if r.get("mark") else ""
        if r.get("muted"):
            mark += " muted"
        lines.append(
            (
                _clean(r["pid"]),
                _clean(r["state"]) + _clean(mark),
                _ago(now - float(r["since"])),
                _clean(r.get("program")),
                _clean(r.get("source") or "-"),
                _clean(label),
                _clean(r.get("where") or "?"),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + "  " + line[-1]
        + "\n"
        for line in lines
    )  # fmt: skip


def _public(row: Mapping[str, Any]) -> dict[str, Any]:
    return {key: row.get(key) for key in FIELDS}


def ls_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    as_json = False
    for a in argv:
        if a == "--json":
            as_json = True
        elif a in ("-h", "--help"):
            sys.stdout.write(LS_USAGE + "\n")
            return 0
        else:
            err(f"ls: unknown argument '{a}'\n{LS_USAGE}")
            return 2
    rows = sessions(env)
    if as_json:
        sys.stdout.write(json.dumps([_public(r) for r in rows], ensure_ascii=False) + "\n")
    elif not rows:
        sys.stdout.write("No sessions\n")
    else:
        sys.stdout.write(table(rows, time.time()))
    return 0


def _calling_client(env: Mapping[str, str]) -> str | None:
    """The user's client showing the caller's pane (``$TMUX_PANE``); None: let tmux choose
    (it could pick a control client of the session, e.g. an iTerm2 one)."""
    caller = env.get("TMUX_PANE", "")
    done = _run(
        ["tmux", "list-clients", "-F", "#{client_control_mode} #{pane_id} #{client_name}"], env
    )
    if not caller or done is None or done.returncode != 0:
        return None
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        control, pane, name = [*line.split(" ", 2), "", ""][:3]
        if control == "0" and pane == caller and name:
            return name
    return None


def go_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    if len(argv) == 1 and argv[0] in ("-h", "--help"):
        sys.stdout.write(GO_USAGE + "\n")
        return 0
    if len(argv) != 1 or not argv[0].isdigit():
        err(f"go: one PID expected (cuewrap ls lists them)\n{GO_USAGE}")
        return 2
    pid = int(argv[0])
    row = next((r for r in sessions(env) if r["pid"] == pid), None)
    if row is None:
        err(f"go: no running session with pid {pid} (cuewrap ls lists them)")
        return 1
    pane, socket = row.get("tmux_pane"), row.get("tmux_socket")
    inside = bool(env.get("TMUX")) and socket_of(env)
    if isinstance(pane, str) and inside and socket == socket_of(env) and _own_socket(socket):
        # the calling client to that session, window and pane
        client = _calling_client(env)
        args = ["switch-client", *(["-c", client] if client else []), "-t", pane]
        args += [";", "select-window", "-t", pane, ";", "select-pane", "-t", pane]
        done = _run(["tmux", *args], env)
        if done is None:
            err("go: tmux could not be run")
            return 1
        if done.returncode == 0:
            return 0
        why = done.stderr.decode("utf-8", "replace").strip() or f"status {done.returncode}"
        err(f"go: tmux could not switch to {row['where']}: {_clean(why)}")
        return 1
    where = row["where"] or "an unknown terminal"
    if isinstance(pane, str):
        where = f"tmux {where}" + (f" (server {socket})" if socket != socket_of(env) else "")
    label = row.get("session") or _home(str(row.get("cwd") or ""))
    sys.stdout.write(
        f"{pid}: {_clean(row.get('program'))} ({_clean(label)}), {row['state']}, "
        f"in {_clean(where)}\n"
    )
    return 0
