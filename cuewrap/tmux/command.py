"""One way to ask tmux: the command line, a blocking run, and what ``allow-passthrough`` means.

- ``tmux_argv(env, args)``: ``tmux -S <socket of $TMUX> ARGS…``, the one command line every
  tmux command of cuewrap uses (None outside tmux).
- ``run_blocking(env, args, timeout)``: for ``cuewrap doctor`` and the start-up question of
  ``deliver/terminal.py``, never on the relay loop; on the loop it is ``control.run_tmux``,
  with the same command line.
- ``literal(text)``: text for ``display-message``, which expands formats.
- ``passthrough_allowed(value, version)``: the one reading of ``allow-passthrough``. tmux
  3.3 added the option, off by default; an older tmux has no such option (``#{...}`` reads
  empty, ``show-options`` says "invalid option") and passes a pane's DCS passthrough always.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping


def socket_of(env: Mapping[str, str]) -> str:
    """The server of ``$TMUX`` (its socket path is the first field)."""
    return env.get("TMUX", "").split(",")[0]


def tmux_argv(env: Mapping[str, str], args: list[str]) -> list[str] | None:
    """``tmux -S <socket> ARGS…`` for the server of ``$TMUX``; None outside tmux."""
    socket = socket_of(env)
    return ["tmux", "-S", socket, *args] if socket else None


def run_blocking(
    env: Mapping[str, str], args: list[str], timeout: float
) -> tuple[int, str, str] | None:
    """``(status, stdout, stderr)`` of one tmux command, or None when it could not run or took
    longer than ``timeout`` seconds."""
    argv = tmux_argv(env, args)
    if argv is None:
        return None
    try:
        done = subprocess.run(
            argv,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            text=True,
            errors="replace",
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout, done.stderr


def older_than_3_3(version: str) -> bool:
    """``#{version}`` (``3.2a``, ``3.3a``, ``next-3.4``) is below 3.3; False when unknown."""
    m = re.search(r"(\d+)\.(\d+)", version)
    return m is not None and (int(m.group(1)), int(m.group(2))) < (3, 3)


def passthrough_allowed(value: str | None, version: str) -> bool:
    """Whether tmux passes a pane's DCS passthrough on: ``value`` is the pane's effective
    ``allow-passthrough`` (``on``/``all``, ``1`` in a format; None when tmux has no such
    option), ``version`` tmux's own."""
    if value is None or older_than_3_3(version):
        return True
    return value.strip().lower() in ("on", "all", "1", "yes")


def literal(text: str) -> str:
    """Text shown by ``display-message``, which expands formats: '#' doubled."""
    return text.replace("#", "##")
