"""What a known program's own notification says (generic mode; pure; docs/generic-mode.md).

A program that reports no state but notifies in fixed words of its own says, by its words,
which of its few situations it is in. ``meaning(program, title, body)`` reads them for the
programs whose words are known (the preset's name, ``EngineConfig.notices``):

Gemini CLI (0.61.0, ``utils/terminalNotifications.ts``; OSC 777 ``title;subtitle | body``):

- "Gemini CLI session complete" — a turn ended (responding, then idle): after an answer, and
  after an API error or a cancel too, in the same words: a Finished whose outcome it does not
  say (``ended``).
- "Gemini CLI needs your attention" — it waits for the user; its subtitle says for what:
  "Approval required" (a tool's approval: ``permission``), "Answer requested by agent",
  "Confirmation required", "Authentication confirmation required", "Filesystem permission
  required" … (``attention``).

Anything else is not read (None): the program's notification as any other's.
"""

from __future__ import annotations

from typing import Literal

Meaning = Literal["ended", "permission", "attention"]

_GEMINI_ENDED = "Gemini CLI session complete"
_GEMINI_ATTENTION = "Gemini CLI needs your attention"
_GEMINI_APPROVAL = "Approval required"


def meaning(program: str, title: str, body: str) -> Meaning | None:
    """What ``program``'s notification (``title``, ``body``) says, or None: not read."""
    if program == "gemini":
        if title == _GEMINI_ENDED:
            return "ended"
        if title == _GEMINI_ATTENTION:
            head = body.split(" | ", 1)[0].strip()
            return "permission" if head == _GEMINI_APPROVAL else "attention"
    return None


def read_for(program: str) -> bool:
    """Are ``program``'s notifications read here?"""
    return program == "gemini"
