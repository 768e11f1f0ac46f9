"""Presets for known terminal programs in generic mode (docs/design.md#generic-mode): what their
signals mean.

A preset names the program in notifications and says, in the user's words, what its bell or
text-less notification means. It never claims more than the program's signal supports: where
one signal covers two situations (Codex notifies both when a turn completes and when it asks
for approval) the wording covers both ("Waiting for you"); "needs your input" only where the
program uses the signal for nothing else. Output going quiet is always "seems to be waiting",
whatever the preset. A notification that carries the program's own text is shown with that
text; the preset only supplies the app name.

Detected from the command's base name (``generic.preset = auto``), overridable with
``generic.preset`` (``none``: an unknown program).
"""

from __future__ import annotations

import os

from cuewrap.records import NamedTuple


class Preset(NamedTuple):
    name: str  # the generic.preset value
    app: str  # how notifications name the program
    commands: tuple[str, ...]  # command base names that select it under "auto"
    signal: str  # what its BEL or a notification without text means, for the user
    why: str  # the evidence, for `cuewrap doctor`
    # it writes titles, OSC notifications or status reports of its own; False: any in its
    # output is content it prints (a model's text), never a fact (docs/terminal-guard.md)
    own_sequences: bool = True
    # the ``app=`` of the OSC 7501 reports it writes without asking the Program Status query
    # first (it reports to any terminal): those reports count as its own (docs/generic-mode.md);
    # None: only a program that asked counts
    status_app: str | None = None
    # cuewrap answers its DECRQM 1004 and kitty OSC 99 queries, tells it the user's presence
    # as focus reports, and reads its OSC 99 notifications' words (docs/generic-mode.md)
    answers_child: bool = False


UNKNOWN = Preset(
    "none",
    "",  # the command's base name is used
    (),
    "Wants your attention",
    "an unknown program's bell or notification says only that it wants attention",
)

PRESETS: tuple[Preset, ...] = (
    Preset(
        "claude",
        "Claude Code",
        ("claude", "claude-code"),
        "Needs your input",
        "Claude Code reports its state (OSC 7501, app=claude-code) once cuewrap answers its"
        " query, and those reports decide (measured with 2.1.328); its bell or own notification"
        " (OSC 9/777/99), when it sends one, means it waits for you",
    ),
    Preset(
        "codex",
        "Codex",
        ("codex",),
        "Waiting for you",
        "Codex CLI reports its state (OSC 7501, app=codex) to any terminal, unasked, and those"
        " reports decide (measured with 0.171.0); its bell (unfocused) comes both when a turn"
        " completes and when it asks for approval: the bell alone does not say which",
        status_app="codex",
    ),
    Preset(
        "aider",
        "aider",
        ("aider",),
        "Waiting for your input",
        "aider --notifications rings the bell when its reply is ready and it waits for input"
        " (it runs notify-send or --notifications-command instead when it finds one)",
        own_sequences=False,  # no title, OSC notification or status report of its own
    ),
    Preset(
        "gemini",
        "Gemini CLI",
        ("gemini",),
        "Waiting for you",
        "Gemini CLI (general.enableNotifications on) notifies while unfocused both when a turn"
        " ends (after an error or a cancel too) and when it needs an approval: it waits for"
        " you either way; its notifications carry its own text (0.61.0's shipped code)",
    ),
    Preset(
        "opencode",
        "opencode",
        ("opencode",),
        "Waiting for you",
        "opencode's terminal notifications mark a finished session or a permission or"
        " question prompt: it waits for you, not necessarily for input; it notifies (OSC 99)"
        " only once its queries are answered and it knows it is unfocused: cuewrap answers"
        " them, tells it the user's presence and reads its words (measured with 1.18.33)",
        answers_child=True,
    ),
)
_BY_NAME = {p.name: p for p in PRESETS}


def choose(command: str, setting: str) -> tuple[Preset, str]:
    """The preset for ``command`` (argv[0]) under ``generic.preset`` and why it was chosen.

    The returned preset always has an ``app`` (an unknown program gets its base name)."""
    base = os.path.basename(command)
    if setting == "none":
        return UNKNOWN._replace(app=base), "generic.preset = none"
    if setting != "auto":
        preset = _BY_NAME.get(setting)
        if preset is not None:
            return preset, f"generic.preset = {setting}"
    for preset in PRESETS:
        if base in preset.commands:
            return preset, f"detected from the command name {base!r}"
    return UNKNOWN._replace(app=base), f"no preset for {base!r}: an unknown program"
