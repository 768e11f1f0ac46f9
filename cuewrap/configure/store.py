"""The settings file as the user wrote it: read, change one key, write back atomically.

tomlkit (imported here only, never on the start-up path) keeps the user's comments, blank
lines and ordering. Values are checked with the loader's own rules (``config.parse_text``), so
a message here reads like one from ``cuewrap pi``; a file that the loader refuses is never
rewritten (the refusal is the one-line error).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cuewrap.config import ConfigError, KeySpec, load_settings

if TYPE_CHECKING:
    from tomlkit import TOMLDocument


class ConfigFile:
    """One TOML settings file: the document (``doc``) and where it lives (``path``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.exists = os.path.exists(path)
        if self.exists:
            # the loader's verdict first: its one-line message, and never a rewrite of a file
            # that cuewrap pi would refuse (the environment plays no part in the file)
            load_settings(path, {}, {})
            self.doc = _parse(_read(path), path)
        else:
            import tomlkit

            self.doc = tomlkit.document()

    def get(self, spec: KeySpec) -> Any:
        """The file's value of ``spec`` (plain Python), or None when the file does not set it."""
        table = self.doc.get(spec.section)
        if table is None or spec.key not in table:
            return None
        value = table[spec.key]
        return value.unwrap() if hasattr(value, "unwrap") else value

    def set(self, spec: KeySpec, value: object) -> None:
        import tomlkit

        item = to_toml(value)
        table = self.doc.get(spec.section)
        if table is None:
            table = tomlkit.table()
            self.doc.add(spec.section, table)
        table[spec.key] = item

    def unset(self, spec: KeySpec) -> bool:
        """Remove the key; an emptied table goes too unless it holds a comment. False when the
        file did not set it."""
        table = self.doc.get(spec.section)
        if table is None or spec.key not in table:
            return False
        del table[spec.key]
        if not table and "#" not in table.as_string():
            del self.doc[spec.section]
        return True

    def text(self) -> str:
        return self.doc.as_string()

    def save(self) -> None:
        """Write atomically (a temporary file in the same directory, fsync, rename), keeping
        the file's permissions; the directory is made when missing."""
        write_atomic(self.path, self.text())
        self.exists = True


def to_toml(value: object) -> object:
    """A checked value as a TOML value: whole seconds as integers, argv as a list."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def config_path(explicit: str | None, env: Mapping[str, str]) -> str:
    from cuewrap.config import default_config_path

    return explicit if explicit is not None else default_config_path(env)


def write_atomic(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None


def _parse(text: str, path: str) -> TOMLDocument:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
