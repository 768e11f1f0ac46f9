"""``cuewrap config``: the settings (docs/design.md#what-the-user-sees, #command-line-and-settings),
shown and changed.

Without an argument, the interactive editor (``editor.py``, prompt-toolkit, terminals only).
Scripted, git-config style::

    cuewrap config list              every key: effective value and where it comes from
    cuewrap config get KEY           the effective value, as `set` takes it
    cuewrap config set KEY VALUE     write KEY to the file (VALUE as in CUEWRAP_* variables)
    cuewrap config unset KEY         remove KEY from the file (back to the default)
    cuewrap config path              the file that is read and written

The file is ``--config PATH`` or ``$XDG_CONFIG_HOME/cuewrap/config.toml``. Bad key or value:
one line on stderr, exit 2, the file unchanged. An environment variable that overrides the key
is named on stderr after ``set``/``unset`` (it is never written to the file).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuewrap.args import err
from cuewrap.config import (
    KEYS,
    ConfigError,
    KeySpec,
    Settings,
    check_command,
    effective_value,
    find_key,
    listed_value,
    load_settings,
    parse_text,
    show_origin,
    show_value,
)

if TYPE_CHECKING:
    from cuewrap.args import Args
    from cuewrap.configure.store import ConfigFile

USAGE = "usage: cuewrap [--config PATH] config [list | get KEY | set KEY VALUE | unset KEY | path]"
HELP = f"""{USAGE}

Without an argument: an interactive editor of every setting (needs a terminal).
  list             every key, its value in effect and where it comes from
  get KEY          the value in effect of KEY (e.g. notify.bell)
  set KEY VALUE    write KEY = VALUE to the settings file (comments are kept)
  unset KEY        remove KEY from the settings file (its default applies again)
  path             the settings file read and written
VALUE is written as for the CUEWRAP_* variables: true/false, a number of seconds, one of the
listed choices, or a command line for argv keys (e.g. "systemd-inhibit --what=idle sleep inf").
"""


class _Usage(Exception):
    pass


def config_command(args: Args, env: Mapping[str, str] | None = None) -> int:
    environ = dict(os.environ if env is None else env)
    argv = list(args.command)
    try:
        if not argv:
            from cuewrap.configure.editor import run_editor

            return run_editor(args, environ)
        return _scripted(args, argv, environ)
    except _Usage as exc:
        err(f"config: {exc}\n{USAGE}")
        return 2
    except ConfigError as exc:
        err(str(exc))
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def _scripted(args: Args, argv: list[str], env: dict[str, str]) -> int:
    from cuewrap.configure.store import config_path

    verb, rest = argv[0], argv[1:]
    want = {"list": 0, "path": 0, "get": 1, "unset": 1, "set": 2}
    if verb in ("-h", "--help", "help"):
        sys.stdout.write(HELP)
        return 0
    if verb not in want:
        raise _Usage(f"unknown action '{verb}'")
    if len(rest) != want[verb]:
        raise _Usage(f"{verb} takes {_args_word(want[verb])}")
    path = config_path(args.config, env)
    if verb == "path":
        _out(path)
        return 0
    if verb == "list":
        settings = _settings(args, env)
        width = max(len(spec.name) for spec in KEYS)
        for spec in KEYS:
            shown = listed_value(settings, spec.name)
            _out(f"{spec.name:<{width}}  {shown:<20}  {show_origin(settings.origin(spec.name))}")
        return 0
    spec = _key(rest[0])
    if verb == "get":
        _out(show_value(effective_value(_settings(args, env), spec.name), ""))
        return 0
    file = _open(path)
    if verb == "set":
        value = parse_text(spec, rest[1])
        if spec.name == "notify.command" and isinstance(value, list | tuple):
            check_command([str(a) for a in value], path, env)
        file.set(spec, value)
        file.save()
    elif file.unset(spec):
        file.save()
    over = env.get(spec.env)
    if over:
        err(f"config: note: {spec.env}={over} overrides {spec.name} while it is set")
    return 0


def _settings(args: Args, env: Mapping[str, str]) -> Settings:
    flags = {"no_cues": args.no_cues, "keep_awake": args.keep_awake, "log": args.log}
    return load_settings(args.config, env, flags)


def _open(path: str) -> ConfigFile:
    from cuewrap.configure.store import ConfigFile

    return ConfigFile(path)


def _key(name: str) -> KeySpec:
    spec = find_key(name)
    if spec is None:
        raise ConfigError(f"unknown key {name!r} (cuewrap config list shows them all)", name)
    return spec


def _args_word(n: int) -> str:
    return ("no argument", "one argument: KEY", "two arguments: KEY VALUE")[n]


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _quiet_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError:
        pass
