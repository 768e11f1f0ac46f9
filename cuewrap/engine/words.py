"""A program's own notification words read as facts (pure; docs/generic-mode.md).

Some programs notify in fixed words of their own that say what happened: opencode's
"Session done", its error, "Permission needs input". Where the preset names such a program
(``Preset.words``), the notification's body — only the body: a title may be the session's,
which the model writes — is looked up here; a match is the program's own outcome or wait,
with the certainty its words carry. Anything else stays a notification with its own text.
"""

from __future__ import annotations

# per program (its preset's ``words``): its words -> (what it says, the kind of a wait)
#   done | error | aborted: the turn's outcome; blocked: it waits (permission | question)
WORDS: dict[str, dict[str, tuple[str, str | None]]] = {
    # opencode 1.18.33's notifications plugin (its TUI's "attention")
    "opencode": {
        "Session done": ("done", None),
        "Session error": ("error", None),
        "Model stopped responding": ("error", None),
        "Session aborted": ("aborted", None),
        "Permission needs input": ("blocked", "permission"),
        "Question needs input": ("blocked", "question"),
    },
}


def said(program: str, body: str) -> tuple[str, str | None] | None:
    """What ``program``'s notification ``body`` says, or None (not one of its own words)."""
    return WORDS.get(program, {}).get(body)
