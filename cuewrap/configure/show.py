"""How settings read for the user, in ``cuewrap config`` and ``cuewrap doctor``: a value as
it is typed, an unset optional value, where a value came from."""

from __future__ import annotations

import shlex

from cuewrap.config import ENV_PREFIX


def show_value(value: object, none: str = "(platform default)") -> str:
    """A value as the user types it: ``true``, ``60``, ``osc9``, a shell-quoted argv."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple | list):
        return shlex.join(str(a) for a in value)
    if value is None:
        return none
    return str(value)


def unset_text(name: str) -> str:
    """How an unset optional value reads: only the keep-awake command has a platform default
    (``notify.command`` has none)."""
    return "(platform default)" if name == "keep_awake.command" else "(none)"


def show_origin(origin: str) -> str:
    """``Settings.origin(name)`` in words: default, file PATH, env VAR or flag --FLAG."""
    if origin == "default":
        return "default"
    if origin.startswith("--"):
        return f"flag {origin}"
    if origin.startswith(ENV_PREFIX):
        return f"env {origin}"
    return f"file {origin}"
