"""Which session this is, decided once: Pi with its bridge, Pi without it, or a program in
generic mode with its preset (docs/generic-mode.md).

``mode_of`` builds the one ``Mode`` value from the command line and the ``generic.preset``
setting, at the composition root (``wiring/session.py``), before the child is spawned; what
follows from the mode is read from that value, never decided again: the preset (looked up
once), whether the bridge is injected, the output guards' settings, which dialogs are
answered, and the engine's settings (``cueside.engine_config``, built from it in one place).
Imported before the spawn: no ``typing``, no ``dataclasses`` (``records.NamedTuple``); the
preset's table is imported only in generic mode.
"""

from __future__ import annotations

import os

from cuewrap.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuewrap.generic.presets import Preset

PI = "pi"  # the command whose base name makes a session Pi mode


def runs_pi(command: str) -> bool:
    """Is ``command`` (argv[0]) Pi? The one test of the program table's Pi row."""
    return os.path.basename(command) == PI


class Mode(NamedTuple):
    """One session's mode. ``pi``: the program is Pi (else generic mode, ``preset`` set);
    ``bridge``: Pi with its bridge extension asked for (not ``--no-bridge``; opening its
    channel can still fail, the session then runs as without); ``preset`` and ``preset_why``:
    generic mode's preset for the command and why it was chosen; ``program``: the name the
    session is published under (``pi``, or the command's base name); ``args``: the command's
    arguments (Pi's say whether it draws its TUI)."""

    pi: bool
    bridge: bool = False
    preset: Preset | None = None
    preset_why: str = ""
    program: str = PI
    args: tuple[str, ...] = ()

    @property
    def generic(self) -> bool:
        """Generic mode: a program other than Pi, read through its preset."""
        return self.preset is not None

    @property
    def app(self) -> str:
        """How notifications name the program: Pi, or its preset's name for it."""
        return self.preset.app if self.preset is not None else "Pi"

    @property
    def answers_child(self) -> bool:
        """Generic mode, a preset that asks (opencode): cuewrap answers the program's own
        queries (DECRQM 1004, kitty's OSC 99) and tells it the user's presence."""
        return self.preset is not None and self.preset.answers_child

    @property
    def own_status_app(self) -> str | None:
        """Generic mode: the ``app=`` of the OSC 7501 reports the program's preset proves
        are its own without a query (Codex CLI); None otherwise."""
        return self.preset.status_app if self.preset is not None else None

    @property
    def content_only(self) -> bool:
        """Every sequence in the program's output is content (docs/terminal-guard.md): in Pi
        mode, a Pi that draws no frames (``-p``, ``--mode json`` / ``rpc``: what it writes is
        the model's text, its extensions' own writes come through the bridge); in generic
        mode, a program whose preset says it writes no title, notification or status report
        of its own (aider)."""
        if self.preset is not None:
            return not self.preset.own_sequences
        from cuewrap.term.provenance import headless

        return headless(list(self.args))

    @property
    def answering(self) -> str:
        """Whose dialogs cuewrap answers from elsewhere (docs/answering.md): ``pi`` (Pi's,
        through the bridge's channel), ``program`` (generic mode: the program's own, its
        preset's), or ``""`` (Pi without the bridge: none)."""
        if self.preset is not None:
            return "program"
        return PI if self.bridge else ""


def mode_of(command: Sequence[str], *, no_bridge: bool, preset: str) -> Mode:
    """The session's mode for ``command`` (argv), ``--no-bridge`` and the ``generic.preset``
    setting (``auto``: by the command's name): the one place that decides it."""
    if runs_pi(command[0]):
        return Mode(True, not no_bridge, args=tuple(command[1:]))
    from cuewrap.generic.presets import choose

    chosen, why = choose(command[0], preset)
    return Mode(False, False, chosen, why, os.path.basename(command[0]), tuple(command[1:]))
