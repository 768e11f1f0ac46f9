"""What cuewrap supplies a program for the session so that it says more (docs/generic-mode.md,
"What cuewrap supplies"), without writing any of the user's files.

Gemini CLI notifies (its own OSC 777 / OSC 9 / bell: a turn ended, it needs an approval) only
with ``general.enableNotifications``, off by default. It reads, lowest precedence first, the
system defaults (``GEMINI_CLI_SYSTEM_DEFAULTS_PATH``, else ``system-defaults.json`` beside the
system settings), the user's settings, the workspace's, the system settings (an
administrator's policy, over everything: never touched). cuewrap gives it a system-defaults
file of its own for the session: the real system defaults, if any, with that key added and
``notificationMethod = "osc777"`` unless they say one (the user's own settings still win),
removed at exit.

Gemini CLI (0.61.0) reads a system file only when root owns it and every directory above it,
none writable by group or others; else it skips the file and shows a security warning. So the
file is supplied only where it would be read: cuewrap runs as root and a private directory
for it can be made under such a chain (``$XDG_RUNTIME_DIR``, else the home's ``.cache`` or
the home). Otherwise, or when the real system defaults say ``enableNotifications``
themselves, or cannot be read, nothing is supplied and the log says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

DEFAULTS_VAR = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"
SETTINGS_VAR = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
SYSTEM_SETTINGS = "/etc/gemini-cli/settings.json"  # Linux (Gemini CLI's getSystemSettingsPath)
# what cuewrap adds: its notifications on, as OSC 777 (the one it reads whatever the terminal:
# else Gemini CLI rings a bare bell in some terminals, which says nothing of what happened)
ADDED = {"enableNotifications": True, "notificationMethod": "osc777"}
MAX_DEFAULTS = 1 << 20  # bytes read of the real system defaults

Log = Callable[..., None]


def real_defaults_path(env: Mapping[str, str]) -> str:
    """Where Gemini CLI would read its system defaults without cuewrap."""
    if env.get(DEFAULTS_VAR):
        return env[DEFAULTS_VAR]
    settings = env.get(SETTINGS_VAR) or SYSTEM_SETTINGS
    return os.path.join(os.path.dirname(settings), "system-defaults.json")


def secure_for_gemini(path: str, uid_of: Callable[[str], os.stat_result] = os.stat) -> bool:
    """Would Gemini CLI read a system file at ``path`` (or in the directory ``path``)? Root owns
    it and every directory above it, none writable by group or others."""
    current = os.path.abspath(path)
    while True:
        try:
            st = uid_of(current)
        except OSError:
            return False
        if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


_COMMENTS = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)


def _strip_comments(text: str) -> str:
    return _COMMENTS.sub(lambda m: m.group(1) or "", text)


def merged_defaults(real: str | None) -> dict[str, Any] | str:
    """The real system defaults' text (None: there are none) with ``ADDED`` under ``general``
    (what they set themselves wins); or why not (they set ``enableNotifications`` themselves,
    or are not a JSON object: left as they are)."""
    if real is None:
        return {"general": dict(ADDED)}
    try:
        found = json.loads(_strip_comments(real))
    except (ValueError, RecursionError):
        return "the system defaults are not JSON"
    if not isinstance(found, dict):
        return "the system defaults are not a JSON object"
    general = found.get("general", {})
    if not isinstance(general, dict):
        return "the system defaults' general is not an object"
    if "enableNotifications" in general:
        return "the system defaults set general.enableNotifications themselves"
    return {**found, "general": {**ADDED, **general}}


def _read_real(path: str) -> str | None:
    """The real system defaults' text, None when there is no such file; OSError/ValueError
    when one is there but cannot be read whole."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_DEFAULTS + 1)
    except FileNotFoundError:
        return None
    if len(raw) > MAX_DEFAULTS:
        raise ValueError("the system defaults are too long")
    return raw.decode("utf-8-sig")


def gemini_defaults(
    env: dict[str, str], log: Log, *, root: bool | None = None
) -> Callable[[], None]:
    """Give Gemini CLI a system-defaults file of cuewrap's for the session (``env``: the
    child's, ``GEMINI_CLI_SYSTEM_DEFAULTS_PATH`` set in it). Returns what removes it (a no-op
    when nothing was supplied)."""
    nothing: Callable[[], None] = lambda: None  # noqa: E731
    if not (os.geteuid() == 0 if root is None else root):
        why = "Gemini CLI reads a system defaults file only when root owns it: cuewrap is not root"
        log("supply", program="gemini", supplied=False, why=why)
        return nothing
    real_path = real_defaults_path(env)
    try:
        real = _read_real(real_path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        log("supply", program="gemini", supplied=False, why=f"the system defaults: {exc}")
        return nothing
    if real is not None and not secure_for_gemini(real_path):
        why = "the system defaults are not root's: Gemini CLI skips them, so does cuewrap"
        log("supply", program="gemini", supplied=False, why=why)
        return nothing
    merged = merged_defaults(real)
    if isinstance(merged, str):
        log("supply", program="gemini", supplied=False, why=merged)
        return nothing
    base = next((d for d in _bases(env) if secure_for_gemini(d)), None)
    if base is None:
        why = "no directory root owns all the way up to put the file in"
        log("supply", program="gemini", supplied=False, why=why)
        return nothing
    _remove_stale(base)
    try:
        where = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base)
        path = os.path.join(where, "system-defaults.json")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(merged, fh)
    except OSError as exc:
        log("supply", program="gemini", supplied=False, why=f"the file: {exc.strerror}")
        return nothing
    env[DEFAULTS_VAR] = path
    log("supply", program="gemini", supplied=True, merged=real is not None)

    def remove() -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(where)

    return remove


PREFIX = "cuewrap-gemini-"
_STALE = re.compile(re.escape(PREFIX) + r"(\d+)-")


def _remove_stale(base: str) -> None:
    """The directories of cuewraps that were killed before they removed theirs."""
    with contextlib.suppress(OSError):
        for name in os.listdir(base):
            m = _STALE.match(name)
            if m is None or _alive(int(m.group(1))):
                continue
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _bases(env: Mapping[str, str]) -> list[str]:
    """Where the file's directory may go: the runtime directory, the home's cache, the home,
    the account's (a test's private HOME may sit under a world-writable /tmp)."""
    homes = [env.get("HOME") or ""]
    with contextlib.suppress(KeyError, OSError):
        homes.append(pwd.getpwuid(os.geteuid()).pw_dir)
    found = [env.get("XDG_RUNTIME_DIR") or ""]
    for home in homes:
        if home:
            found += [os.path.join(home, ".cache"), home]
    return [d for d in found if d and os.path.isdir(d)]


SUPPLIERS: dict[str, Callable[[dict[str, str], Log], Callable[[], None]]] = {
    "gemini": gemini_defaults,
}


def supply(preset: str, env: dict[str, str], log: Log) -> Callable[[], None]:
    """What the program of ``preset`` is given for the session (``env``: the child's); the
    returned callable takes it back at exit."""
    supplier = SUPPLIERS.get(preset)
    return supplier(env, log) if supplier is not None else (lambda: None)
