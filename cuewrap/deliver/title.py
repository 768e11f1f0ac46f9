"""Title marks: ``<mark> <child title>`` composed onto the child's own title
(docs/design.md#delivery).

Pure: every method returns the bytes to inject (b"" for nothing); the relay writes them at a safe
point, after the child's own title sequence when there is one. The child's title is learned from its
OSC 0 / OSC 2 (the tracker reports the text; OSC 1, the icon name, is not a title) and passed
through untouched (docs/design.md#cue-rules rule 11): cuewrap only re-composes after it.

Clearing a mark restores exactly the child's last title. If the child never set one, there
is nothing of the child's to restore, so the title the user had before cuewrap started comes
back from the terminal's title stack: ``TITLE_POP`` then ``TITLE_PUSH`` — pop restores the
title the relay saved at start (``CSI 22;0 t``) and push saves it again, so the pop at exit
still finds it. A terminal without a title stack ignores both (the mark then stays until the
child sets a title or cuewrap exits) — there is no way to read the old title back.

A child title that already starts with a mark is a cuewrap inside this one (``cuewrap --
cuewrap pi``, or ``cuewrap pi`` run in a wrapped shell): it is shown as it is, never marked
twice (``[?] [✓] π``); the inner cuewrap knows more about its child than this one does.

A child title that carried control characters, or came from content the child draws, is not
one a program writes for itself (a model's answer can carry an ``OSC 2`` that Pi passes on raw,
docs/terminal-guard.md): it is never the title cuewrap composes its mark onto or puts back.
While a mark is up, the mark (on the child's own last title) is written again right after it,
so it never replaces the mark; clearing the mark puts the child's own last title back, never
that one.
"""

from __future__ import annotations

from cuewrap.engine.effects import MARK_CANCELLED, MARK_COMPLETED, MARK_FAILED, MARK_WAITING
from cuewrap.term.sequences import TITLE_POP, TITLE_PUSH, set_title

MARKED = tuple(f"{m} " for m in (MARK_WAITING, MARK_COMPLETED, MARK_FAILED, MARK_CANCELLED))


class TitleMarks:
    def __init__(self) -> None:
        self.child_title: str | None = None  # None: the child has not set a title yet
        self.mark: str | None = None

    def composed(self) -> str | None:
        """The title cuewrap shows while a mark is up, else None."""
        if self.mark is None:
            return None
        if self.child_title:
            if self.child_title.startswith(MARKED):  # an inner cuewrap marked it already
                return self.child_title
            return f"{self.mark} {self.child_title}"
        return self.mark

    def on_child_title(self, title: str, controls: bool = False) -> bytes:
        """The child set its title (already passed through). Re-compose if a mark is up.
        ``controls``: it carried control characters or came from content (never the title
        cuewrap marks or restores: the mark on the child's own last title is written again)."""
        if not controls:
            self.child_title = title
        composed = self.composed()
        return set_title(composed) if composed is not None else b""

    def set_mark(self, mark: str | None) -> bytes:
        """Show ``mark`` (``"[?]"`` …) in front of the child's title, or clear it (None)."""
        if mark == self.mark:
            return b""
        self.mark = mark
        return self.current()

    def current(self) -> bytes:
        """The title as it should stand now: the mark on the child's title, else the child's
        own last title, else the user's from the terminal's title stack (written again when
        a terminal may have missed it: ``deliver.delivery``, Konsole)."""
        composed = self.composed()
        if composed is not None:
            return set_title(composed)
        if self.child_title is not None:
            return set_title(self.child_title)
        return TITLE_POP + TITLE_PUSH

    def reapply(self) -> bytes:
        """The mark again (after the terminal was given back to the shell and taken again)."""
        composed = self.composed()
        return set_title(composed) if composed is not None else b""
