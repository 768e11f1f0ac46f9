"""Answering opencode's permission dialog from elsewhere (docs/answering.md, "opencode").

The wait: opencode's own words, "Permission needs input" (its OSC 99, read as the engine's
wait ``said``: ``engine/said.py``), and its dialog on the screen in its words, as 1.18.33 draws
it at the bottom of its screen (rows begin with its border ``┃``)::

      ┃  △ Permission required                          the header
      ┃    # Shell command                              what is asked (its icon, its title)
      ┃
      ┃  $ echo RAN > ran.txt                           the body (the command, a URL …)
      ┃
      ┃   Allow once   Allow always   Reject      ctrl+f fullscreen  ⇆ select  enter confirm
      ┃

The buttons carry no number and no letter: the selected one is told only by its background
(read from the screen's cells: ``bgworker.py``), and its keys are relative (left / right, ``h`` /
``l``, wrapping; Enter confirms; Escape rejects). So the keys are computed from the screen read
right before typing: the moves to the option (right, as many as it takes), then the screen read
again, and Enter only if the selection stands on that option in the same dialog. "Allow always"
opens opencode's own confirmation (``△ Always allow`` … ``Confirm   Cancel``): Enter there too,
once the screen shows it with ``Confirm`` selected.

"Allow always" widens what opencode may do without asking (until it restarts): never a button,
never chosen by number or through a token, only by its exact label with the session's pid, as
Claude Code's "always" options. The buttons offered: "Allow once" and "Reject".

The close: the dialog gone from the screen in two reads in a row (every ``LOOK`` s after
Enter, up to ``CLOSE``); opencode's next words ("Session done", its error) end it too.
A read can land in the middle of one of its frames (large, they reach the reader in pieces):
each check reads again for a while (``SETTLED``) before it gives up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import machine as M
from cuewrap.answer.generic import OwnProgram, by_label_only, not_read
from cuewrap.answer.keysin import Shell, Typing
from cuewrap.answer.screen import DialogReader
from cuewrap.answer.wire import Request
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.words import said
from cuewrap.loop import Loop

PERMISSION = ("△ Permission required", ("Allow once", "Allow always", "Reject"))
ALWAYS = ("△ Always allow", ("Confirm", "Cancel"))
ONCE, WIDER, REJECT = 0, 1, 2  # the permission dialog's options
RIGHT, ENTER = b"\x1b[C", b"\r"
LOOK = 0.1  # seconds between reads of the screen after a key
SETTLED = 1.0  # seconds a frame has to show what a check waits for before the keys
# seconds its dialog has to close after Enter: opencode took up to 2 s to redraw on a loaded
# 2-CPU machine (load 8), where the 2 s Pi and Claude Code get refused answers it did take
CLOSE = 5.0
_BORDER = "  ┃"
_HINTS = re.compile(r"^(?:\S+ (?:fullscreen|minimize)\s+)?⇆ select\s+enter confirm$")


def read(
    rows: list[str] | None, stage: tuple[str, tuple[str, ...]] = PERMISSION
) -> D.Dialog | None:
    """The dialog of ``stage`` opencode shows, from the bgworker's rows (the screen's lines,
    then their background signatures), or None: not exactly that, as the last thing on the
    screen, with one option's background unlike the others'."""
    if not rows or len(rows) % 2:
        return None
    n = len(rows) // 2
    lines, bgs = rows[:n], rows[n:]
    header, labels = stage
    last = next((i for i in range(n - 1, -1, -1) if lines[i].strip()), None)
    if last is None:
        return None
    if lines[last].rstrip() == _BORDER:  # its bottom padding
        last -= 1
    if last < 1 or not lines[last].startswith(_BORDER + " "):
        return None
    buttons = lines[last]
    parts = re.split(r"\s{2,}", buttons[len(_BORDER) :].strip())
    if tuple(parts[: len(labels)]) != labels:
        return None
    if not _HINTS.match("  ".join(parts[len(labels) :])):
        return None
    selected = _selected(buttons, bgs[last], labels)
    if selected is None:
        return None
    top = next(
        (i for i in range(last - 1, -1, -1) if lines[i].rstrip() == _BORDER + "  " + header), None
    )
    if top is None:
        return None
    body = []
    for line in lines[top + 1 : last]:
        if not line.startswith(_BORDER):
            return None  # not one box: something else stands between
        if line[len(_BORDER) :].strip():
            body.append(line[len(_BORDER) :].strip())
    title = " ".join(body)
    if not title or len(title) > D.MAX_TITLE:
        return None
    return D.Dialog(title, labels, selected)


def _selected(row: str, bg: str, labels: tuple[str, ...]) -> int | None:
    """The one option whose background differs from the button row's (its panel's, right of
    the border), or None."""
    panel = len(_BORDER)
    if len(bg) <= panel:
        return None
    at = panel
    odd = []
    for i, label in enumerate(labels):
        at = row.find(label, at)
        if at < 0 or at >= len(bg):
            return None
        if bg[at] != bg[panel]:
            odd.append(i)
        at += len(label)
    return odd[0] if len(odd) == 1 else None


def bg_reader(loop: Loop, log: DecisionLog) -> Callable[[int, int], DialogReader]:
    """The dialog reader's factory, its worker the one that reads backgrounds too."""
    return lambda cols, rows: DialogReader(
        loop, cols, rows, on_error=log.error, worker="cuewrap.answer.bgworker"
    )


class MovesThenEnter:
    """opencode's keys (``OpencodeProgram.typing``): not one write but moves, each checked on
    the screen, then Enter; every decision still the machine's. Its own watches keep the
    time. A read may land in the middle of one of its frames (they are large, and reach the
    reader in pieces): each check reads again every LOOK s for a while before it gives up."""

    def keys_in(self, shell: Shell) -> None:
        pass  # its own watches keep the time (``_watch``)

    def verified(self, shell: Shell, claim: B.Claim, lines: list[str] | None) -> None:
        if shell.book.in_flight is not claim:
            return
        dialog = claim.ticket.dialog
        if read(lines) != dialog:
            again = lambda: self._move(shell, claim)  # noqa: E731
            self._watch(shell, claim, lambda rows: read(rows) == dialog, again,
                        "the screen changed", SETTLED)  # fmt: skip
            return
        self._move(shell, claim)

    def _move(self, shell: Shell, claim: B.Claim) -> None:
        """The moves to the option (right, wrapping), then Enter once the selection stands on
        it in the same dialog."""
        dialog = claim.ticket.dialog
        moves = (claim.option - dialog.selected) % len(dialog.options)
        if moves == 0:
            self._enter(shell, claim, PERMISSION)
            return
        if not shell.write(claim, RIGHT * moves):
            return
        wanted = dialog._replace(selected=claim.option)
        on = lambda rows: read(rows) == wanted  # noqa: E731
        self._watch(shell, claim, on, lambda: self._enter(shell, claim, PERMISSION),
                    "the selection is not on that option", SETTLED)  # fmt: skip

    def _enter(self, shell: Shell, claim: B.Claim, stage: tuple[str, tuple[str, ...]]) -> None:
        if not shell.write(claim, ENTER):
            return
        if claim.option == WIDER and stage is PERMISSION:  # its confirmation: Enter there too
            confirm = lambda rows: (d := read(rows, ALWAYS)) is not None and d.selected == 0  # noqa: E731
            self._watch(shell, claim, confirm, lambda: self._enter(shell, claim, ALWAYS),
                        "its confirmation did not show", CLOSE, B.NOT_CLOSED)  # fmt: skip
            return
        gone = lambda rows: read(rows) is None and read(rows, ALWAYS) is None  # noqa: E731
        closed = lambda: shell.run(shell.machine.closed())  # noqa: E731
        self._watch(shell, claim, gone, closed, "the dialog is still shown", CLOSE,
                    B.NOT_CLOSED, times=2)  # fmt: skip

    def _watch(
        self,
        shell: Shell,
        claim: B.Claim,
        test: Callable[[list[str]], bool],
        then: Callable[[], None],
        why: str,
        within: float,
        line: str = B.NOT_SHOWN,
        *,
        times: int = 1,
    ) -> None:
        """Read the screen every ``LOOK`` s until ``test`` holds in ``times`` reads in a row,
        then ``then()``; after ``within`` s the answer has failed (``line``, ``why``)."""
        deadline = shell.loop.clock() + within

        def look(rows: list[str] | None, run: int = 0) -> None:
            if shell.book.in_flight is not claim:
                return  # over meanwhile (its words, the exit)
            run = run + 1 if rows is not None and test(rows) else 0
            if run >= times:
                then()
            elif shell.loop.clock() >= deadline:
                shell.run(shell.machine.fail(line, why))
            else:
                shell.look_after(LOOK, lambda more: look(more, run))

        shell.look_after(LOOK, look)


class OpencodeProgram(OwnProgram):
    """opencode's permission dialog: read from the cells (lines and backgrounds), its token
    once the same dialog was read twice in a row (a read may land inside a frame); its wait
    opened and closed by its own words."""

    name = "opencode"
    twice = True
    # its token takes 0.7-2 s on a busy machine (the reader starts at its words, then reads
    # twice): its notification, already 2.5 s after its dialog, waits that much for buttons
    ready_within = 3.0
    typing: Typing = MovesThenEnter()  # its keys: moves checked on the screen, then Enter

    def fact(self, m: M.Machine, fact: F.Fact, waits: Collection[str]) -> list[M.Action]:
        if isinstance(fact, F.ChildExit):
            return m.end("the program exited")
        meaning = said("opencode", fact.body) if isinstance(fact, F.ChildNotice) else None
        if meaning is None:
            return []
        acts = m.over("opencode said more") if m.open else []  # its next words: it is over
        if meaning == ("blocked", "permission") and "said" in waits:
            return [*acts, *m.opened("permission", None)]
        if meaning[0] == "blocked":
            return [*acts, *not_read(meaning[1] or "", "not a dialog cuewrap reads")]
        return acts

    def read(self, kind: str, lines: list[str] | None) -> D.Dialog | None:
        return read(lines) if kind == "permission" else None

    def allow(self, ticket: B.Ticket, index: int, req: Request, source: str) -> str | None:
        if index != WIDER:
            return None
        return by_label_only(ticket.dialog.options[index], req, source)

    def buttons(self, ticket: B.Ticket, summary: bool) -> list[tuple[int, str]]:
        return [(ONCE, "Allow once"), (REJECT, "Reject")]

    def shown(self, ticket: B.Ticket, summary: bool) -> bool:
        return True  # opencode's own fixed words, never the model's
