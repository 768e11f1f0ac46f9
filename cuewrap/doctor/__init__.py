"""``cuewrap doctor [--check]``: what this terminal supports, which channels cuewrap would use
and why (docs/design.md#what-the-user-sees), and an interactive check.

The report (``report.py``) reuses the deciders the session uses (``load_settings``,
``detect_terminal_protocol``, ``desktop_available``, ``default_inhibitor``, and
``term_allows_cues``, the TERM half of ``guard_holds``), so what it says is what ``cuewrap pi``
would do in this terminal (the other half, both ends a terminal, is reported as a fact: the
report itself is often piped). Terminfo (``terminfo.py``)
is read with ``curses.setupterm``/``tigetstr`` in a short child process (curses keeps the
first ``setupterm`` of a process for good). Terminfo has no capability for OSC 777/9/99
notifications, and most entries predate focus reporting (``fe``/``fd``), so it is shown as
a fact, never used to decide: the interactive check tests the terminal itself.

``--check`` (``check.py``; both stdin and stdout must be terminals): raw mode, focus
reporting on; the user switches away and back within 15 s (``q``, Escape or Ctrl+C abort);
then one test notification over the chosen protocol and a ``[?]`` title mark for 2 s, and
the user answers y/n. The terminal is restored (focus reporting off, title popped, termios)
on every path. Exit status: 0 all confirmed, 1 something did not work or the check was
aborted, 2 usage or config error, 128+N on Ctrl+C (130) or a signal.

This module parses doctor's arguments and runs the two; ``check.py`` is imported only for
``--check``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuewrap.args import UsageError, err, parse_args
from cuewrap.config import ConfigError, load_settings
from cuewrap.doctor.report import report
from cuewrap.host import is_tty

if TYPE_CHECKING:
    from cuewrap.args import Args

USAGE = "usage: cuewrap [OPTIONS] doctor [--check] [-- COMMAND [ARGS...]]"
HELP = f"""{USAGE}

Show what this terminal supports (focus reports, title, notification protocol, tmux
options), the settings in effect and where each came from, and which channels cuewrap
would use, and why.

  --check   interactive: switch away and back (focus reports), then confirm that a test
            notification and a title mark were shown. Needs a terminal.
  -- COMMAND
            also say what `cuewrap -- COMMAND` would use for that program: the preset, the
            facts listened for, and what happens to its own notifications here.
"""


class _UsageError(Exception):
    pass


def doctor(args: Args, *, env: Mapping[str, str] | None = None) -> int:
    environ = dict(os.environ if env is None else env)
    try:
        check, command = _parse(args)
    except _UsageError as exc:
        err(f"doctor: {exc} ({USAGE})")
        return 2
    if check is None:
        sys.stdout.write(HELP)
        return 0
    try:
        settings = load_settings(
            args.config,
            environ,
            {"no_cues": args.no_cues, "keep_awake": args.keep_awake, "log": args.log},
        )
    except ConfigError as exc:
        err(str(exc))
        return 2
    if check and not (is_tty(0) and is_tty(1)):
        err("doctor --check is interactive: stdin and stdout must both be a terminal")
        return 2
    from cuewrap.doctor.ask import ask_terminal

    answers = ask_terminal(environ)
    text, choice = report(
        settings, environ, log_flag=bool(args.log), command=command, answers=answers
    )
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # cuewrap doctor | head
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if not check:
        return 0
    from cuewrap.doctor.check import run_check

    return run_check(settings, choice, environ)


def _parse(args: Args) -> tuple[bool | None, list[str]]:
    """doctor's own arguments (after ``doctor``): (True for --check, None for --help; the
    COMMAND after ``--``, or []).

    Global options given after ``doctor`` (``--config PATH`` …) are parsed by the CLI's own
    parser and merged into ``args``.
    """
    check = False
    rest: list[str] = []
    words = list(args.command)
    command: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, command = words[:at], words[at + 1 :]
        if not command:
            raise _UsageError("missing COMMAND after --")
    for a in words:
        if a == "--check":
            check = True
        elif a in ("-h", "--help"):
            return None, command
        else:
            rest.append(a)
    if rest:
        try:
            more = parse_args([*rest, "doctor"])
        except UsageError as exc:
            raise _UsageError(str(exc)) from None
        if isinstance(more, str) or more.subcommand != "doctor" or more.command:
            raise _UsageError(f"unexpected argument {rest[0]}")
        args.config = more.config or args.config
        args.log = more.log or args.log
        args.no_cues = more.no_cues or args.no_cues
        args.keep_awake = more.keep_awake or args.keep_awake
    return check, command
