"""Terminfo facts for the doctor report: a few capabilities of a TERM, read with
``curses.setupterm``/``tigetstr`` in a short child process (curses keeps the first
``setupterm`` of a process for good). Shown as a hint, never used to decide."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping

# terminfo capabilities worth showing (strings, then flags); ncurses names
_TI_STRINGS = ("fe", "fd", "kxIN", "kxOUT", "tsl", "fsl", "TS")
_TI_FLAGS = ("hs", "XT")
_TI_PROBE = """
import curses, json, sys
try:
    curses.setupterm(sys.argv[1], 1)
except curses.error as exc:
    print(json.dumps({"error": str(exc)}))
    raise SystemExit(0)
out = {}
for name in sys.argv[2].split(","):
    value = curses.tigetstr(name)
    out[name] = value.decode("latin-1") if value else None
for name in sys.argv[3].split(","):
    out[name] = curses.tigetflag(name) > 0
print(json.dumps(out))
"""


def terminfo_facts(term: str, env: Mapping[str, str]) -> dict[str, object]:
    """``{cap: value}`` for ``term`` from curses in a child process; ``{"error": …}`` if none."""
    if not term:
        return {"error": "TERM is not set"}
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-I",
                "-c",
                _TI_PROBE,
                term,
                ",".join(_TI_STRINGS),
                ",".join(_TI_FLAGS),
            ],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=5,
        )
        facts: dict[str, object] = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return {"error": f"cannot read terminfo: {exc.__class__.__name__}"}
    return facts
