"""What the settings editor shows and changes, without a terminal: one row per key of
``config.KEYS`` (so a new key appears by itself), its value, where it comes from, its help,
and the edits made to the file (checked with the loader's rules and messages)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from cuewrap.config import (
    KEYS,
    ConfigError,
    KeySpec,
    Settings,
    check_command,
    load_settings,
    parse_text,
    show_value,
    unset_text,
)

if TYPE_CHECKING:
    from cuewrap.configure.store import ConfigFile

FLAG_KEYS = {
    "cues.enabled": ("no_cues", "--no-cues"),
    "keep_awake.enabled": ("keep_awake", "--keep-awake"),
}


class Row(NamedTuple):
    spec: KeySpec
    value: str  # as the user types it
    source: str  # default | file | env VAR | flag --FLAG, "*" when changed and not saved
    changed: bool


def message(exc: ConfigError) -> str:
    return str(exc).removeprefix("config: ")


class Model:
    def __init__(self, file: ConfigFile, env: Mapping[str, str], flags: Mapping[str, bool]):
        self.file = file
        self.env = env
        self.flags = flags
        self.keys = KEYS
        self._saved = file.text()
        self._was: dict[str, object] = {spec.name: file.get(spec) for spec in KEYS}

    # -- what is shown ------------------------------------------------------------------
    def row(self, spec: KeySpec) -> Row:
        own = self.file.get(spec)
        changed = own != self._was[spec.name]
        flag = FLAG_KEYS.get(spec.name)
        if flag is not None and self.flags.get(flag[0]):
            return Row(
                spec, "false" if flag[1] == "--no-cues" else "true", f"flag {flag[1]}", changed
            )
        over = self.env.get(spec.env)
        if over:
            return Row(spec, over.strip(), f"env {spec.env}", changed)
        if own is not None:
            return Row(spec, show_value(own), "file*" if changed else "file", changed)
        value = show_value(spec.default, unset_text(spec.name))
        return Row(spec, value, "default*" if changed else "default", changed)

    def rows(self) -> list[Row]:
        return [self.row(spec) for spec in self.keys]

    def help(self, spec: KeySpec) -> str:
        choices = self.choices(spec)
        values = " / ".join(choices) if choices else _kind_words(spec)
        default = show_value(spec.default, unset_text(spec.name))
        return f"{spec.help} · {values} · default {default}"

    def note(self, spec: KeySpec) -> str:
        """What the user should know about this key's source (an override), or ""."""
        over = self.env.get(spec.env)
        flag = FLAG_KEYS.get(spec.name)
        if flag is not None and self.flags.get(flag[0]):
            return f"{flag[1]} on the command line overrides the file for this run"
        if over:
            return f"{spec.env} is set: it overrides the file (edits here go to the file only)"
        return ""

    def choices(self, spec: KeySpec) -> tuple[str, ...]:
        if spec.kind == "bool":
            return ("true", "false")
        return tuple(spec.choices)

    def file_text_of(self, spec: KeySpec) -> str:
        """The value to edit: the file's, else the default (empty for "none")."""
        own = self.file.get(spec)
        return show_value(own if own is not None else spec.default, "")

    # -- changes --------------------------------------------------------------------------
    def check(self, spec: KeySpec, text: str) -> str | None:
        """The loader's message for ``text``, or None when it is a valid value."""
        try:
            self._parse(spec, text)
        except ConfigError as exc:
            return message(exc)
        return None

    def set_text(self, spec: KeySpec, text: str) -> str | None:
        """Put ``text`` in the file (in memory); the loader's message when it is refused."""
        try:
            value = self._parse(spec, text)
        except ConfigError as exc:
            return message(exc)
        self.file.set(spec, value)
        return None

    def _parse(self, spec: KeySpec, text: str) -> object:
        value = parse_text(spec, text)
        if spec.name == "notify.command" and isinstance(value, list | tuple):
            # as at start and in `config set`: a notifier that is not there stops cuewrap pi
            check_command([str(a) for a in value], self.file.path, self.env)
        return value

    def cycle(self, spec: KeySpec, step: int) -> None:
        choices = self.choices(spec)
        if not choices:
            return
        current = self.file_text_of(spec)
        i = choices.index(current) if current in choices else -step
        self.file.set(spec, parse_text(spec, choices[(i + step) % len(choices)]))

    def reset(self, spec: KeySpec) -> None:
        self.file.unset(spec)

    @property
    def dirty(self) -> bool:
        return self.file.text() != self._saved

    def save(self) -> None:
        self.file.save()
        self._saved = self.file.text()
        self._was = {spec.name: self.file.get(spec) for spec in KEYS}

    def settings(self) -> Settings:
        """The settings this file (as edited, not yet saved) gives, with the environment."""
        with tempfile.TemporaryDirectory(prefix="cuewrap-config.") as d:
            path = os.path.join(d, "config.toml")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.file.text())
            return load_settings(path, self.env, dict(self.flags))


def _kind_words(spec: KeySpec) -> str:
    if spec.kind == "seconds":
        return "seconds (0 = off)" if getattr(spec, "zero_ok", False) else "seconds"
    if spec.kind == "argv":
        return "a command line"
    if spec.kind == "hours":
        return 'ranges "HH:MM-HH:MM", space separated'
    return spec.kind
