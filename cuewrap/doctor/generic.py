"""``cuewrap doctor -- COMMAND``: what generic mode would use for that command, and why.

The preset (``presets.choose``), the facts listened for with what each would say, and what
happens to the program's own notifications here: passed as they are when the terminal shows
that protocol, otherwise taken out while the user is away and re-emitted on cuewrap's
channels (docs/generic-mode.md). Uses the deciders the session uses, so it says what
``cuewrap -- COMMAND`` would do in this terminal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from cuewrap.config import Settings
from cuewrap.deliver.desktop import desktop_available
from cuewrap.deliver.terminal import Choice
from cuewrap.generic.presets import choose
from cuewrap.generic.programs import PROGRAMS
from cuewrap.term.notices import NOTICE_PROTOCOLS

_NAMES = {"osc9": "OSC 9", "osc777": "OSC 777", "osc99": "OSC 99"}


def generic_lines(
    command: list[str], settings: Settings, env: Mapping[str, str], choice: Choice
) -> list[str]:
    name = os.path.basename(command[0])
    if name == "pi":
        return [
            f"For: {' '.join(command)}",
            "  Pi mode (the command is pi): the bridge and OSC 7501 drive cues; a BEL or a",
            "  notification from Pi is recorded only (see the Channels below)",
        ]
    preset, why = choose(command[0], settings.generic.preset)
    g = settings.generic
    quiet = (
        f"after {g.quiet_after:g} s of quiet: 'Seems to be waiting' [?]"
        if g.quiet_after > 0
        else "off (generic.quiet_after = 0)"
    )
    lines = [
        f"For: {' '.join(command)} (generic mode)",
        f"  preset: {preset.name} ({why}); notifications name it '{preset.app}'",
        f"    {preset.why}",
        "  facts listened for (source 'child'; while you look they pass and nothing is added):",
        f"    BEL                        '{preset.signal}' [?], once per wait",
        "    OSC 9 / OSC 777 / OSC 99   its own title and body [?] (OSC 9;4 progress is not one)",
        "    OSC 7501 with app=NAME     runs and waits named by NAME; stronger: the facts above",
        "                               and below are then recorded only (cuewrap answers the",
        "                               program's Program Status query: Claude Code and Pi then",
        "                               report working / done / blocked; source 'osc7501')",
        *_unasked(preset.status_app),
        f"    output, then quiet         {quiet} (generic.quiet_after,"
        f" {settings.origin('generic.quiet_after')})",
        "    output resuming            ends the wait",
        "    exit                       'Exited (status N)' / 'Was killed (signal N)'",
    ]
    lines += _programs(preset.name)
    desktop_on, _ = desktop_available(env, settings.notify.desktop)
    shown = choice.protocol if choice.protocol != "off" and not choice.tmux_passthrough else None
    outlets = []
    if choice.protocol != "off":
        outlets.append(
            _NAMES[choice.protocol] + (" through tmux" if choice.tmux_passthrough else "")
        )
    if desktop_on:
        outlets.append("a desktop notification")
    if env.get("TMUX"):
        outlets.append("a tmux status-line message (when the pane is not in view)")
    lines.append("  its own notifications while you are away:")
    for proto in NOTICE_PROTOCOLS:
        if proto == shown:
            what = "passed as they are (this terminal shows them); cuewrap adds the mark only"
        elif outlets:
            what = f"taken out and re-emitted once as {' and '.join(outlets)}"
        else:
            what = "passed as they are: cuewrap has no channel to re-emit them"
        lines.append(f"    {_NAMES[proto]:<8} {what}")
    return lines


def _unasked(app: str | None) -> list[str]:
    if app is None:
        return []
    return [
        f"                               this program reports unasked: its app={app} reports",
        "                               count without a query (its preset proves them its own)",
    ]


def _programs(chosen: str) -> list[str]:
    """The table of the programs measured (docs/generic-mode.md), this one's row first."""
    rows = sorted(PROGRAMS, key=lambda p: p.preset != chosen)
    lines = ["  programs measured (docs/generic-mode.md; certain: its own report, guessed: not):"]
    for p in rows:
        mark = "this one" if p.preset == chosen else "also"
        lines += [
            f"    {p.name} ({mark}; {p.versions})",
            f"      reports: {p.reports}",
            f"      cuewrap gives: {p.gives}",
            f"      missing: {p.missing}",
        ]
    return lines
