"""The command line's model: ``USAGE``, ``Args``, ``parse_args``, ``UsageError``, and ``err()``,
cuewrap's one-line message on stderr.

A ground-floor module: it imports nothing of cuewrap but the version, so the CLI, the session
and the doctor all build on it without importing each other.
"""

from __future__ import annotations

import os

from cuewrap import __version__

USAGE = """\
usage: cuewrap [OPTIONS] pi [PI_ARGS...]
       cuewrap [OPTIONS] -- COMMAND [ARGS...]
       cuewrap [OPTIONS] doctor [--check]
       cuewrap [--config PATH] config [list | get KEY | set KEY VALUE | unset KEY | path]
       cuewrap ls [--json]      every running session and its state
       cuewrap go PID           take me to that session (inside tmux: switch to its pane)
       cuewrap answer PID CHOICE | --token TOKEN CHOICE
                                answer the dialog that session shows (Pi's confirm,
                                select; Claude Code's permission prompt, question):
                                CHOICE is the option's number or its label
       cuewrap mute PID [DURATION]
                                no reminders from that session (for 30m, 2h, 1d…; marks
                                and its state stay)
       cuewrap unmute PID       reminders again
       cuewrap [--config PATH] phone [--check]
                                reminders and answers on your phone (ntfy): set up in
                                one step, or say what works
       cuewrap --version | --help

Run Pi (or any command) in a pseudo-terminal, passing every byte through, and remind you
(title mark, terminal and desktop notification) when Pi needs you or has stopped while you
were away from the terminal.

options:
  --config PATH   settings file (default: $XDG_CONFIG_HOME/cuewrap/config.toml)
  --log PATH      decision log, one JSON object per line (also: CUEWRAP_LOG)
  --events PATH   the session's state changes, one JSON object per line, for scripts
                  (also: CUEWRAP_EVENTS; docs/scripting.md)
  --no-cues       start with cues off (/cue on in Pi turns them on)
  --no-bridge     do not inject the Pi bridge extension
  --keep-awake    keep the machine awake while Pi works
  --version       print the version and exit
  -h, --help      show this help and exit
"""


class UsageError(Exception):
    pass


class Args:
    """The parsed command line (a plain class: dataclasses cost ~17 ms of start-up)."""

    def __init__(self) -> None:
        self.command: list[str] = []
        self.subcommand: str | None = None  # run | doctor | config | ls | go | answer
        self.config: str | None = None
        self.log: str | None = None
        self.events: str | None = None
        self.no_cues = False
        self.no_bridge = False
        self.keep_awake = False


def parse_args(argv: list[str]) -> Args | str:
    """Parse; returns Args, or a string to print and exit 0 with (help, version)."""
    args = Args()
    i = 0
    with_value = {"--config": "config", "--log": "log", "--events": "events"}
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
            args.subcommand = "config"
            args.command = argv[i + 1 :]  # list | get KEY | set KEY VALUE | unset KEY | path
            return args
        elif a == "phone":
            args.subcommand = "phone"
            args.command = argv[i + 1 :]  # cuewrap.phone.setup parses them
            return args
        elif a in ("ls", "go", "answer", "mute", "unmute"):
            args.subcommand = a
            # ls: [--json]; go: PID (cuewrap.sessions.overview parses);
            # answer: cuewrap.answer.client; mute, unmute: cuewrap.answer.client too
            args.command = argv[i + 1 :]
            return args
        else:
            raise UsageError(f"unknown command '{a}' (to wrap any command: cuewrap -- {a})")
        i += 1
    if not args.command:
        raise UsageError("nothing to run")
    args.subcommand = "run"
    return args


def err(msg: str) -> None:
    """``cuewrap: MSG`` on stderr, one line per message; a closed stderr is not an error.
    Written to fd 2 directly: ``sys.stderr`` is None when Python started with fd 2 closed."""
    try:
        os.write(2, f"cuewrap: {msg}\n".encode(errors="replace"))
    except OSError:
        pass
