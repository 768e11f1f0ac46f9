"""Konsole's window title: where cuewrap's title marks show there (docs/terminals.md).

Konsole does not show the program's title (OSC 0 / 2) in its window or tab: it shows its tab
title format, ``%d : %n`` by default (the directory and the program's name); the program's
title is the format's ``%w``. Konsole's OSC 30 sets the session's tab title format. So in
Konsole (``KONSOLE_VERSION`` in the environment, not inside tmux or screen) cuewrap sets the
format to ``%w`` while it runs, and sets back the format the user's default profile names at
every way out (Ctrl-Z included). Konsole fills in a format's ``%d`` / ``%n`` at its next look
at the session (the next keystroke): until then the tab shows the format as written. A format
that has ``%w`` already is left alone. Konsole has no way to read the format back (no query):
the profile named in ``konsolerc`` is read, else Konsole's own default is taken (a profile
chosen some other way, ``--profile`` or a tab's own setting, cannot be known: its format is
then replaced by the default at exit).

Pure: ``tab_title`` takes the environment and a file reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from cuewrap.term.sequences import ST, sanitize

DEFAULT_FORMAT = "%d : %n"  # Konsole's LocalTabTitleFormat unless the profile says otherwise
SHOWS_TITLE = "%w"  # the program's own title (OSC 0 / 2)
_LIMIT = 200


def osc30(text: str) -> bytes:
    """Konsole's ``OSC 30 ; format ST``: the session's tab title format."""
    return b"\x1b]30;" + sanitize(text, _LIMIT).encode("utf-8", "replace") + ST


def in_konsole(env: Mapping[str, str]) -> bool:
    """Konsole's own environment, and no multiplexer between it and cuewrap."""
    return bool(env.get("KONSOLE_VERSION")) and not env.get("TMUX") and not env.get("STY")


def _section(text: str, name: str) -> Mapping[str, str]:
    import configparser  # only in Konsole: in_konsole is asked at every start

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    return parser[name] if parser.has_section(name) else {}


def user_format(env: Mapping[str, str], read: Callable[[Path], str | None]) -> str:
    """The local tab title format of the user's default Konsole profile, else Konsole's."""
    home = Path(env.get("HOME", "/"))
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    rc = read(config / "konsolerc")
    profile = _section(rc, "Desktop Entry").get("DefaultProfile", "") if rc else ""
    if not profile or "/" in profile:
        return DEFAULT_FORMAT
    text = read(data / "konsole" / profile)
    fmt = _section(text, "General").get("LocalTabTitleFormat", "") if text else ""
    return fmt.strip() or DEFAULT_FORMAT


def tab_title(
    env: Mapping[str, str], read: Callable[[Path], str | None]
) -> tuple[bytes, bytes] | None:
    """(what shows the program's title, what sets the user's format back), or None where
    nothing is to be done (not Konsole, or its format shows the title already)."""
    if not in_konsole(env):
        return None
    fmt = user_format(env, read)
    if SHOWS_TITLE in fmt:
        return None
    return osc30(SHOWS_TITLE), osc30(fmt)


def read_small(path: Path, limit: int = 65536) -> str | None:
    """A small text file's content, None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None
