"""Command line: ``cuewrap [OPTIONS] pi [PI_ARGS…]`` / ``cuewrap [OPTIONS] -- COMMAND [ARGS…]``.

``main`` parses the arguments (``args.py``), then hands over: ``doctor`` to the doctor package;
``config`` to the configure package; ``ls`` and ``go`` to ``sessions/overview.py``; a command
without a terminal on stdin or stdout to ``plain.exec_plain`` (exec as it is); any other command
to ``wiring/session.py``'s ``Session``, which wires the parts and starts the child as early as
possible (heavy modules — pyte, notify-py, prompt_toolkit — are imported only when needed).
"""

from __future__ import annotations

import os
import sys

from cuewrap.args import USAGE, Args, UsageError, err, parse_args
from cuewrap.wiring.startup import GcPause

PI_INSTALL_HINT = "install Pi with: npm install -g @earendil-works/pi-coding-agent"


def main(argv: list[str] | None = None) -> int:
    from cuewrap.plain import hold_std_fds

    hold_std_fds()  # before anything is opened
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # Ctrl-C before the terminal is raw: no traceback
        return 130


def _main(argv: list[str]) -> int:
    try:
        parsed = parse_args(argv)
    except UsageError as exc:
        err(f"{exc}\n{USAGE.splitlines()[0]}\ntry 'cuewrap --help'")
        return 2
    if isinstance(parsed, str):
        if sys.stdout is not None:  # None when started with fd 1 closed
            sys.stdout.write(parsed)
        return 0
    if parsed.subcommand == "doctor":
        from cuewrap.doctor import doctor

        return doctor(parsed)
    if parsed.subcommand == "config":
        from cuewrap.configure import config_command

        return config_command(parsed)
    if parsed.subcommand == "phone":
        from cuewrap.phone.setup import phone_command

        return phone_command(parsed)
    if parsed.subcommand == "answer":
        from cuewrap.answer.client import answer_command

        return answer_command(parsed.command)
    if parsed.subcommand in ("mute", "unmute"):
        from cuewrap.answer.client import mute_command

        return mute_command(parsed.command, muted=parsed.subcommand == "mute")
    if parsed.subcommand in ("ls", "go"):
        from cuewrap.sessions.overview import go_command, ls_command

        return (ls_command if parsed.subcommand == "ls" else go_command)(parsed.command)
    return run(parsed)


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def resolve(command: str) -> str | None:
    """Like ``shutil.which`` (which costs a few ms of imports on the start-up path)."""
    if os.sep in command:
        return command if _runnable(command) else None
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", command)
        if _runnable(path):
            return path
    return None


def run(args: Args) -> int:
    # the garbage collector pauses while cuewrap starts (cuewrap/wiring/startup.py): the session
    # ends the pause once the cue side is built, the ``with`` on every other way out
    with GcPause() as pause:
        return _run(args, pause)


def _run(args: Args, pause: GcPause) -> int:
    path = resolve(args.command[0])
    if path is None and os.sep in args.command[0] and os.path.exists(args.command[0]):
        # found but not runnable: what a shell says, with its status (126, not 127)
        why = "Is a directory" if os.path.isdir(args.command[0]) else "Permission denied"
        err(f"{args.command[0]}: {why}")
        return 126
    if path is None:
        from cuewrap.wiring.mode import runs_pi

        hint = f"; {PI_INSTALL_HINT}" if runs_pi(args.command[0]) else ""
        err(f"{args.command[0]}: command not found{hint}")
        return 127
    from cuewrap.host import is_tty

    # docs/design.md#guard: pipes and scripts get the command as it is
    if not (is_tty(0) and is_tty(1)):
        from cuewrap.plain import exec_plain

        try:
            exec_plain(path, args.command)
        except OSError as exc:
            err(f"{args.command[0]}: cannot run: {exc.strerror}")
            return 126
    from cuewrap.wiring.session import Session, SessionError

    try:
        session = Session(args, path, pause.end)
        status = session.run()
    except SessionError as exc:
        err(str(exc))
        return exc.status
    if status != 0 and session.mode.pi:
        _explain_pi_failure(path)
    return status


def _explain_pi_failure(path: str) -> None:
    """Pi failed: when its Node is older than its package needs (Pi 1.x on Node 20 dies with a
    raw SyntaxError), one line naming the Node found and the version needed. The terminal is
    already restored; this runs only after a failure."""
    try:
        from cuewrap.doctor.pi_install import find_pi, node_problem

        problem = node_problem(find_pi(os.environ, path))
    except Exception:  # an explanation must never turn into a crash
        return
    if problem is not None:
        err(problem)
