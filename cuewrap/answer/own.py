"""A program's own dialogs, one strategy per program (generic mode; pure; docs/answering.md).

Each program that cuewrap answers in generic mode draws its dialogs in its own words and takes
its own keys. A ``Dialogs`` says, for one program (the ``app`` of its reports): which kinds of
dialog it reads, how it reads one from the screen's lines, which key picks an option, and
which options are the one-time yes, the refusal, or widen what the program may do without
asking. ``generic.OwnProgram`` (the answerer's strategy) holds the one its wait's report names
(``layouts.py``: one line per program; Claude Code's in ``prompts.py``, Codex CLI's in
``codex.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from cuewrap.answer.dialog import MAX_LABEL, Dialog, numbered_options

MAX_DIGITS = 9  # options picked by one digit each
_SHORTCUT = re.compile(r"\s+\((?:esc|[a-z])\)$")  # "(y)", "(esc)" after a label: no part of it


class Dialogs:
    """One program's dialogs. The defaults: options picked by their digit (absolute, confirmed
    in the same key), every permission option but the one-time yes and a refusal widens."""

    app = ""  # the ``app=`` of its reports
    kinds: tuple[str, ...] = ()  # the kinds of dialog it reads (``blocked:kind=…``)

    def read(self, kind: str, lines: Sequence[str]) -> Dialog | None:
        """The dialog of ``kind`` as the last thing on the screen, or None."""
        raise NotImplementedError

    def once(self, label: str) -> bool:
        """The option that allows this one request, and only it."""
        raise NotImplementedError

    def is_no(self, label: str) -> bool:
        """The option that refuses."""
        raise NotImplementedError

    def widens(self, kind: str, label: str) -> bool:
        """Does picking this option let the program do more without asking? In a permission
        prompt everything but the one-time yes and a refusal counts so (an option not known
        too); a question's options are the model's words, none widens."""
        return kind == "permission" and not (self.once(label) or self.is_no(label))

    def key_for(self, dialog: Dialog, option: int) -> bytes:
        """The key that picks option ``option`` (0-based) and confirms it: its digit."""
        if not 0 <= option < min(MAX_DIGITS, len(dialog.options)):
            raise ValueError(f"option {option + 1} has no digit")
        return str(option + 1).encode()


class Listed(Dialogs):
    """A program with one layout of permission prompt (``parse``), its one-time yes and its
    refusals listed by label (Codex CLI, Gemini CLI)."""

    kinds = ("permission",)

    def __init__(
        self,
        app: str,
        parse: Callable[[Sequence[str]], Dialog | None],
        once: Sequence[str],
        no: Sequence[str],
    ) -> None:
        self.app = app
        self._parse = parse
        self._once = tuple(once)
        self._no = tuple(no)

    def read(self, kind: str, lines: Sequence[str]) -> Dialog | None:
        return self._parse(lines) if kind in self.kinds else None

    def once(self, label: str) -> bool:
        return label in self._once

    def is_no(self, label: str) -> bool:
        return label in self._no


def listed_options(
    block: Sequence[str],
    option: re.Pattern[str],
    other: Callable[[str, list[str]], bool],
    once: Sequence[str],
    no: Sequence[str],
) -> tuple[tuple[str, ...], int] | None:
    """A permission prompt's numbered options (``dialog.numbered_options``) as labels, their
    shortcut cut off, and the selected one; None unless one is selected, there are 2 to
    ``MAX_DIGITS``, one is a one-time yes (``once``) and one a refusal (``no``)."""
    found = numbered_options(block, option, other)
    if found is None:
        return None
    options, selected = found
    if selected is None or not 2 <= len(options) <= MAX_DIGITS:
        return None
    labels = tuple(_SHORTCUT.sub("", " ".join(o.split()))[:MAX_LABEL] for o in options)
    if not any(o in once for o in labels) or not any(o in no for o in labels):
        return None
    return labels, selected
