"""The programs whose own dialogs cuewrap answers in generic mode: by the ``app`` of their
reports (OSC 7501 ``blocked``), or by the preset whose own notification says it waits
(engine/notices.py); one line each (``own.Dialogs``; docs/answering.md)."""

from __future__ import annotations

from cuewrap.answer.codex import CODEX
from cuewrap.answer.gemini import GEMINI
from cuewrap.answer.own import Dialogs
from cuewrap.answer.prompts import CLAUDE

BY_APP: dict[str, Dialogs] = {d.app: d for d in (CLAUDE, CODEX)}
BY_NOTICE: dict[str, Dialogs] = {"gemini": GEMINI}  # the preset's name


def for_report(app: str | None, kind: str | None) -> Dialogs | None:
    """The dialogs cuewrap reads for this report (``app``, ``kind``), or None: another
    program's, or a kind it does not read."""
    dialogs = BY_APP.get(app or "")
    return dialogs if dialogs is not None and kind in dialogs.kinds else None


def for_notice(preset: str, kind: str | None) -> Dialogs | None:
    """The dialogs cuewrap reads when ``preset``'s own notification says it waits (``kind``:
    what its words say), or None."""
    dialogs = BY_NOTICE.get(preset)
    return dialogs if dialogs is not None and kind in dialogs.kinds else None
