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
import subprocess
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
    #: the Debian 12 package version proven (the matrix checks the installed one)
    version: str = ""
    #: why it is not in the matrix ("" = it is)
    not_run: str = ""

    @property
    def focus_cell(self) -> str:
        return "reports (CSI I / O)" if self.focus else "none: away by the idle rule"

    @property
    def popup_cell(self) -> str:
        return "cuewrap's (D-Bus)" if self.popup == "Pi" else f"its own ({self.popup})"

    @property
    def title_cell(self) -> str:
        shown = self.shown.format("[✓] π - work").replace("|", "\\|")
        back = "restored at exit" if self.restores else "Pi's stays at exit (no title stack)"
        if self.after:
            back = "its tab format back at exit"
        return f"`{shown}`; {back}"


def _bash(inner: str) -> list[str]:
    return ["bash", "-c", inner]


ROWS: dict[str, Row] = {
    r.name: r
    for r in (
        Row("xterm", "xterm", "xterm", version="379",
            argv=lambda n, c: ["xterm", "-name", n, "-geometry", "120x40", "-e", *_bash(c)]),
        Row("kitty", "kitty", "kitty", version="0.26.5",
            argv=lambda n, c: ["kitty", "--config", "NONE", "-o", "update_check_interval=0",
                          "-o", "linux_display_server=x11", "--name", n, "--class", n,
                          *_bash(c)],
            env={"LIBGL_ALWAYS_SOFTWARE": "1"}, popup="kitty"),
        Row("gnome-terminal", "gnome-terminal", "gnome-terminal", version="3.46.8",
            argv=lambda n, c: ["gnome-terminal", "--app-id", "org.cuewrap.Term", "--wait",
                          "--geometry", "100x30", "--", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"},
            instance="gnome-terminal-server",
            server=("/usr/libexec/gnome-terminal-server", "--app-id", "org.cuewrap.Term")),
        Row("xfce4-terminal", "xfce4-terminal", "xfce4-terminal", version="1.0.4",
            argv=lambda n, c: ["xfce4-terminal", "--disable-server", "--geometry", "100x30",
                          "-x", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"},
            instance="xfce4-terminal", shown="Terminal - {}"),
        Row("tilix", "tilix", "tilix", version="1.9.5",
            argv=lambda n, c: ["tilix", "--new-process", "-e", *_bash(c)],
            env={"GSETTINGS_BACKEND": "memory", "NO_AT_BRIDGE": "1"}, instance="tilix",
            shown="Tilix: {}"),
        Row("konsole", "konsole", "konsole", version="4:22.12.3",
            argv=lambda n, c: ["konsole", "--separate", "--nofork", "-e", *_bash(c)],
            env={"QT_QPA_PLATFORM": "xcb"}, instance="konsole", shown="{} — Konsole",
            popup="Konsole", after="work : bash — Konsole"),
        Row("qterminal", "qterminal", "qterminal", version="1.2.0",
            must_set="presence.idle_after, if 60 s is not the absence you mean",
            argv=lambda n, c: ["qterminal", "-e", *_bash(c)],
            env={"QT_QPA_PLATFORM": "xcb"}, instance="qterminal", focus=False, restores=False),
        Row("alacritty", "alacritty", "alacritty", version="0.11.0",
            argv=lambda n, c: ["alacritty", "--class", f"{n},{n}", "-e", *_bash(c)],
            env={"LIBGL_ALWAYS_SOFTWARE": "1"}),
        Row("urxvt", "urxvt", "rxvt-unicode", version="9.30",
            argv=lambda n, c: ["urxvt", "-name", n, "-geometry", "100x30", "-e", *_bash(c)],
            restores=False),
        Row("st", "stterm", "stterm", version="0.9",
            argv=lambda n, c: ["stterm", "-n", n, "-g", "100x30", "-e", *_bash(c)],
            restores=False),
        Row("terminology", "terminology", "terminology", version="1.13.0",
            argv=lambda n, c: ["terminology", "--name", n, "-e", *_bash(c)],
            env={"ELM_ENGINE": "software_x11", "ELM_ACCEL": "none"}, instance="main",
            not_run="under Xvfb it sends CSI O once and never CSI I (X focus given by xdotool,"
                    " with or without twm): presence cannot be shown here"),
    )
}  # fmt: skip


#: GNU screen, run inside xterm (not a terminal of its own: tests/test_realterm_matrix.py)
SCREEN = Row("screen", "screen", "screen", argv=lambda n, c: [], version="4.9.0")

MATRIX = [name for name, row in ROWS.items() if not row.not_run]
HEAD = [
    "| terminal | version | focus | popup per cue | title while away | model's OSC 52"
    " | the user must set | evidence |",
    "|---|---|---|---|---|---|---|---|",
]


def table_lines() -> list[str]:
    """docs/terminals.md's table: one line per row, each cell what its matrix test asserts."""
    lines = list(HEAD)
    for name, r in ROWS.items():
        if r.not_run:
            lines.append(f"| {name} | {r.version} | — | — | — | — | — | not run: {r.not_run} |")
            continue
        lines.append(
            f"| {name} | {r.version} | {r.focus_cell} | {r.popup_cell} | {r.title_cell}"
            f" | removed: clipboard unchanged | {r.must_set or 'nothing'}"
            f" | test_realterm_matrix.py[{name}] |"
        )
    return lines


def installed_version(row: Row) -> str | None:
    """The installed package's version (dpkg), None where there is no dpkg."""
    if shutil.which("dpkg-query") is None:
        return None
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", row.package],
                          capture_output=True, text=True, timeout=20)  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else ""


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
