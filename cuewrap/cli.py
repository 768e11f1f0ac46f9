"""Command line: ``cuewrap [OPTIONS] pi [PI_ARGS…]`` / ``cuewrap [OPTIONS] -- COMMAND [ARGS…]``.

This is the one place that knows every part; it wires them and starts the child as early as
possible (heavy modules — pyte, notify-py, prompt_toolkit — are imported only when needed).
"""

from __future__ import annotations

import os
import sys

from cuewrap import __version__

USAGE = """\
usage: cuewrap [OPTIONS] pi [PI_ARGS...]
       cuewrap [OPTIONS] -- COMMAND [ARGS...]
       cuewrap [OPTIONS] doctor [--check]
       cuewrap --version | --help

Run Pi (or any command) in a pseudo-terminal, passing every byte through, and remind you
(title mark, terminal and desktop notification) when Pi needs you or has stopped while you
were away from the terminal.

options:
  --config PATH   settings file (default: $XDG_CONFIG_HOME/cuewrap/config.toml)
  --log PATH      decision log, one JSON object per line (also: CUEWRAP_LOG)
  --no-cues       start with cues off (/cue on in Pi turns them on)
  --no-bridge     do not inject the Pi bridge extension
  --keep-awake    keep the machine awake while Pi works
  --version       print the version and exit
  -h, --help      show this help and exit
"""

PI_INSTALL_HINT = "install Pi with: npm install -g @earendil-works/pi-coding-agent"


class UsageError(Exception):
    pass


class Args:
    """The parsed command line (a plain class: dataclasses cost ~17 ms of start-up)."""

    def __init__(self) -> None:
        self.command: list[str] = []
        self.subcommand: str | None = None  # "run" | "doctor"
        self.config: str | None = None
        self.log: str | None = None
        self.no_cues = False
        self.no_bridge = False
        self.keep_awake = False
        self.pi_mode = False


def parse_args(argv: list[str]) -> Args | str:
    """Parse; returns Args, or a string to print and exit 0 with (help, version)."""
    args = Args()
    i = 0
    with_value = {"--config": "config", "--log": "log"}
    flags = {"--no-cues": "no_cues", "--no-bridge": "no_bridge", "--keep-awake": "keep_awake"}
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            return USAGE
        if a == "--version":
            return f"cuewrap {__version__}\n"
        if a == "--":
            args.command = argv[i + 1 :]
            if not args.command:
                raise UsageError("missing COMMAND after --")
            break
        name, eq, value = a.partition("=")
        if name in with_value:
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value")
                i += 1
                value = argv[i]
            setattr(args, with_value[name], value)
        elif a in flags:
            setattr(args, flags[a], True)
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a}")
        elif a == "pi":
            args.command = argv[i:]
            break
        elif a == "doctor":
            args.subcommand = "doctor"
            args.command = argv[i + 1 :]  # doctor's own arguments (cuewrap.doctor parses them)
            return args
        elif a == "config":
            raise UsageError(
                "'cuewrap config' (the interactive editor) is not built yet; edit"
                " $XDG_CONFIG_HOME/cuewrap/config.toml (keys in the README)"
            )
        else:
            raise UsageError(f"unknown command '{a}' (to wrap any command: cuewrap -- {a})")
        i += 1
    if not args.command:
        raise UsageError("nothing to run")
    args.subcommand = "run"
    args.pi_mode = os.path.basename(args.command[0]) == "pi"
    return args


def err(msg: str) -> None:
    try:
        sys.stderr.write(f"cuewrap: {msg}\n")
        sys.stderr.flush()
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parsed = parse_args(argv)
    except UsageError as exc:
        err(f"{exc}\n{USAGE.splitlines()[0]}\ntry 'cuewrap --help'")
        return 2
    if isinstance(parsed, str):
        sys.stdout.write(parsed)
        return 0
    if parsed.subcommand == "doctor":
        from cuewrap.doctor import doctor

        return doctor(parsed)
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
    path = resolve(args.command[0])
    if path is None:
        hint = f"; {PI_INSTALL_HINT}" if args.pi_mode else ""
        err(f"{args.command[0]}: command not found{hint}")
        return 127
    from cuewrap.session import Session, SessionError

    try:
        return Session(args, path).run()
    except SessionError as exc:
        err(str(exc))
        return exc.status
