"""The real-terminal matrix's rows: how each terminal emulator is started on the test's Xvfb
display with a shell command, and what it is known to do (docs/terminals.md).

One row per terminal: its binary and Debian package, the argv that runs ``bash -c COMMAND`` in
a window named NAME, the environment it needs, and what the matrix expects of it under
``cuewrap pi`` with default settings: whose popup shows a cue, whether it reports focus, how
its window shows the program's title, whether it restores the title at exit. Used by
tests/termrig.py (``launch``) and tests/test_realterm_matrix.py.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

Argv = Callable[[str, str], list[str]]  # (window name, shell command) -> argv


@dataclass(frozen=True)
class Row:
    name: str
    binary: str
    package: str
    argv: Argv
    env: dict[str, str] = field(default_factory=dict)
    #: the app name of the one popup a cue gives ("Pi": cuewrap's own D-Bus notification)
    popup: str = "Pi"
    #: the terminal sends CSI I / CSI O for mode 1004
    focus: bool = True
    #: how the window's title shows the program's title (``{}``)
    shown: str = "{}"
    #: the title pushed before Pi comes back at exit (a title stack, CSI 22/23 t)
    restores: bool = True
    #: the window's title after Pi exits and a key is pressed, where it is not ``shown``'s
    after: str = ""
    #: the window is found by this WM_CLASS instance name ("" = the name given to ``argv``)
    instance: str = ""
    #: a server it needs on the private bus first (GNOME Terminal)
    server: tuple[str, ...] = ()
    #: what a user of it must set for cuewrap ("" = nothing)
    must_set: str = ""


def _bash(inner: str) -> list[str]:
    return ["bash", "-c", inner]


ROWS: dict[str, Row] = {
    r.name: r
    for r in (
        Row("xterm", "xterm", "xterm",
            lambda n, c: ["xterm", "-name", n, "-geometry", "120x40", "-e", *_bash(c)]),
        Row("kitty", "kitty", "kitty",
            lambda n, c: ["kitty", "--config", "NONE", "-o", "update_check_interval=0",
                          "-o", "linux_display_server=x11", "--name", n, "--class", n,
                          *_bash(c)],
            env={"LIBGL_ALWAYS_SOFTWARE": "1"}, popup="kitty"),
        Row("gnome-terminal", "gnome-terminal", "gnome-terminal",
            lambda n, c: ["gnome-terminal", "--app-id", "org.cuewrap.Term", "--wait",
                          "--geometry", "100x30", "--", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"},
            instance="gnome-terminal-server",
            server=("/usr/libexec/gnome-terminal-server", "--app-id", "org.cuewrap.Term")),
        Row("xfce4-terminal", "xfce4-terminal", "xfce4-terminal",
            lambda n, c: ["xfce4-terminal", "--disable-server", "--geometry", "100x30",
                          "-x", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"},
            instance="xfce4-terminal", shown="Terminal - {}"),
        Row("tilix", "tilix", "tilix",
            lambda n, c: ["tilix", "--new-process", "-e", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"}, instance="tilix",
            shown="Tilix: {}"),
        Row("konsole", "konsole", "konsole",
            lambda n, c: ["konsole", "--separate", "--nofork", "-e", *_bash(c)],
            env={"QT_QPA_PLATFORM": "xcb"}, instance="konsole", shown="{} — Konsole",
            popup="Konsole", after="work : bash — Konsole"),
        Row("qterminal", "qterminal", "qterminal",
            lambda n, c: ["qterminal", "-e", *_bash(c)],
            env={"QT_QPA_PLATFORM": "xcb"}, instance="qterminal", focus=False, restores=False),
        Row("alacritty", "alacritty", "alacritty",
            lambda n, c: ["alacritty", "--class", f"{n},{n}", "-e", *_bash(c)],
            env={"LIBGL_ALWAYS_SOFTWARE": "1"}),
        Row("urxvt", "urxvt", "rxvt-unicode",
            lambda n, c: ["urxvt", "-name", n, "-geometry", "100x30", "-e", *_bash(c)],
            restores=False),
        Row("st", "stterm", "stterm",
            lambda n, c: ["stterm", "-n", n, "-g", "100x30", "-e", *_bash(c)],
            restores=False),
        Row("terminology", "terminology", "terminology",
            lambda n, c: ["terminology", "--name", n, "-e", *_bash(c)],
            env={"ELM_ENGINE": "software_x11", "ELM_ACCEL": "none"}),
    )
}  # fmt: skip


def need_terminal(row: Row) -> None:
    """Skip without the terminal, saying how to get it; but where scripts/install-test-deps
    could have installed it (root with apt-get) a missing one is a failure: the matrix must
    not go green by skipping."""
    if shutil.which(row.binary) is not None:
        return
    why = f"missing {row.binary} (Debian package {row.package}; run scripts/install-test-deps)"
    if os.geteuid() == 0 and shutil.which("apt-get") is not None:
        pytest.fail(f"{why}: root with apt-get, so install-test-deps should have installed it")
    pytest.skip(why)
