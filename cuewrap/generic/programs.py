"""What each coding agent says about itself, measured, and what cuewrap makes of it: the one
table of docs/generic-mode.md ("Programs, measured") and of ``cuewrap doctor -- COMMAND``.

Each row names the versions it was measured with (the suite runs the ones marked so: a change
in what a program says shows up as a failing test), what the program reports, what cuewrap
gives from that (``certain``: the program's own report of the outcome; ``guessed``: its
output going quiet, or a notification that does not say which outcome), and what is missing
and why. tests/test_docs.py keeps docs/generic-mode.md's table equal to these rows.
"""

from __future__ import annotations

from typing import NamedTuple


class Program(NamedTuple):
    preset: str  # the generic.preset it belongs to (generic/presets.py)
    name: str
    versions: str  # measured with (the suite's: tested)
    reports: str  # what it says about itself
    gives: str  # what cuewrap gives from it, certain / guessed
    missing: str  # what is missing, and why


PROGRAMS: tuple[Program, ...] = (
    Program(
        "claude",
        "Claude Code",
        "2.1.328 and the latest (2.1.332), in the suite",
        "OSC 7501 once its query is answered (idle, working, done, error,"
        " blocked:kind=permission; idle after Esc); no bell or notification of its own seen",
        "cuewrap answers its query: Finished, Failed, Needs your input, Cancelled: certain",
        "nothing seen missing; its reminder after a longer wait was not measured",
    ),
    Program(
        "codex",
        "Codex CLI",
        "0.171.0, in the suite",
        "OSC 7501 unasked, to any terminal (app=codex: idle, working, done, error,"
        " blocked:kind=permission; idle after Esc; working then idle while it starts);"
        " a bell at a turn's end while unfocused; OSC 21337 only in iTerm2",
        "its preset counts its reports without a query: Finished, Failed, Needs your input,"
        " Cancelled: certain; its start-up idle (no key typed, or within 0.25 s) gives nothing;"
        " its approvals (command, edits, permissions, network) answerable: a digit,"
        " don't-ask-again only by exact label with the pid",
        "nothing to supply; a cancel is told only when a key was typed in the run and it ran"
        " a quarter of a second; an approval taller than the screen is not answerable",
    ),
    Program(
        "opencode",
        "opencode",
        "1.18.33, in the suite",
        "no OSC 7501; title 'OC | <session title>'; kitty's OSC 99 ('Session done', its"
        " error, 'Session aborted', 'Permission needs input') with its setting"
        " attention.enabled (off by default), only after the terminal answered kitty's"
        " query, only while it knows it is unfocused (focus reports, after DECRQM 1004)",
        "cuewrap answers both queries, tells it the user's presence as focus reports and"
        " turns the setting on for the session (a file of its own, only where the user set"
        " nothing about it): Finished, Failed, Cancelled, Needs your input from its words:"
        " certain; its OSC 99 always taken out (one popup, cuewrap's)",
        "its permission dialog is not answerable from elsewhere yet; a user who set"
        " attention themselves keeps their choice (off: 'Seems to be waiting', guessed)",
    ),
    Program(
        "gemini",
        "Gemini CLI",
        "0.61.0, in the suite",
        "no OSC 7501 and no query; title '◇ Ready' / '✦ Working…' / '✋ Action Required';"
        " with general.enableNotifications (off by default) OSC 777 unless it thinks it is"
        " focused (a key counts as focus): 'session complete' when a turn ends (after an API"
        " error too), 'needs your attention' / 'Approval required' at an approval",
        "cuewrap supplies the setting (a system-defaults file of its own for the session, the"
        " user's own false wins) and reads its words: Finished (outcome unknown) [?], Needs"
        " your input: certain that it waits; its notification taken out, cuewrap's cue the one"
        " popup; its shell approval answerable (a digit; Allow for this session only by exact"
        " label with the pid); after cuewrap's key it hears the focus-out again",
        "no outcome: an error reads as a finished turn; the file is read only when root owns"
        " it and every directory above (Gemini's check): cuewrap not root supplies nothing,"
        " turn general.enableNotifications on yourself; its other waits (answer requested,"
        " confirmations) not answerable",
    ),
    Program(
        "aider",
        "aider",
        "0.86.2, in the suite",
        "no OSC 7501 and no query; a bell with --notifications when its reply is ready",
        "its bell: 'Waiting for your input' [?]; quiet",
        "it reports no state",
    ),
)

_BY_PRESET = {p.preset: p for p in PROGRAMS}


def program(preset: str) -> Program | None:
    """The measured row for a preset, or None (an unknown program)."""
    return _BY_PRESET.get(preset)


def table_lines() -> list[str]:
    """The table as Markdown (docs/generic-mode.md holds exactly these lines)."""
    lines = [
        "| program | measured with | what it reports | what cuewrap gives | missing, and why |",
        "|---|---|---|---|---|",
    ]
    for p in PROGRAMS:
        lines.append(f"| {p.name} | {p.versions} | {p.reports} | {p.gives} | {p.missing} |")
    return lines
