"""opencode, heard (docs/generic-mode.md, "opencode, measured"): what cuewrap supplies so that
it says what it does, and what its words mean.

opencode (1.18.33) notifies — kitty's OSC 99, "Session done", its error, "Permission needs
input" — only when all of these hold:

- its TUI setting ``attention.enabled`` is on (off by default);
- the terminal answered kitty's OSC 99 capability query (cuewrap does:
  ``term/childqueries.py``);
- it knows its window is blurred, from focus reports it turns on only where the terminal
  says mode 1004 is supported (cuewrap answers that too, and tells it the truth of presence).

The setting is the user's. opencode reads its TUI settings from, lowest first: the user's
global ``tui.json`` / ``tui.jsonc`` (``$XDG_CONFIG_HOME/opencode``), the file named by
``OPENCODE_TUI_CONFIG``, then the project's. cuewrap writes none of those: where the user has
not set ``OPENCODE_TUI_CONFIG`` and their global file does not mention ``attention`` at all, it
names a file of its own there, for this session, holding only ``attention.enabled`` (on) and
``attention.sound`` (off: opencode plays no sound it did not play before). A user who set
anything about ``attention`` keeps exactly what they set (a project's setting outranks
cuewrap's file anyway).

Its words (the notification's body): ``engine/words.py``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping

ENV = "OPENCODE_TUI_CONFIG"
SUPPLIED = {"attention": {"enabled": True, "sound": False}}
MAX_CONFIG = 1 << 20  # bytes of the user's global file looked at


def _global_files(env: Mapping[str, str]) -> list[str]:
    config = env.get("XDG_CONFIG_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".config"
    )
    return [os.path.join(config, "opencode", name) for name in ("tui.json", "tui.jsonc")]


def user_says(env: Mapping[str, str]) -> str | None:
    """Why cuewrap supplies nothing: the user named a TUI settings file of their own, or their
    global one mentions ``attention`` (or cannot be read); None: nothing of theirs is about it."""
    if env.get(ENV):
        return f"{ENV} is set: the user's own file"
    for path in _global_files(env):
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_CONFIG)
        except FileNotFoundError:
            continue
        except OSError:
            return f"{path} cannot be read: its settings are unknown"
        if b"attention" in text:
            return f"{path} sets attention: the user's choice"
    return None


def supply(env: Mapping[str, str]) -> tuple[str | None, str]:
    """A private directory holding cuewrap's TUI settings file for this session (the caller
    sets ``OPENCODE_TUI_CONFIG`` to ``<dir>/tui.json`` and removes the directory at the end),
    or None; and why."""
    why = user_says(env)
    if why is not None:
        return None, why
    folder = tempfile.mkdtemp(prefix="cuewrap-opencode-")  # 0700, the user's own
    with open(os.path.join(folder, "tui.json"), "w", encoding="utf-8") as fh:
        json.dump(SUPPLIED, fh)
    return folder, "attention.enabled on (sound off) for this session: no setting of the user's"
