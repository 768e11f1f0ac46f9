"""The ``channels`` record (what is on, the channel plan and its reason), at start and again
once the host terminal has answered cuewrap's start-up query, whose answers make the plan
again (``deliver.plan.Answers``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from cuewrap.deliver.plan import Answers

if TYPE_CHECKING:
    from cuewrap.config import Settings
    from cuewrap.decisionlog import DecisionLog
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.term.answers import TerminalAnswer


class HostAnswers:
    def __init__(
        self, log: DecisionLog, settings: Settings, delivery: Delivery, *, bridge: bool
    ) -> None:
        """``bridge``: Pi's bridge is listening (said in the record)."""
        self.log = log
        self.settings = settings
        self.delivery = delivery
        self.bridge = bridge
        self._answers = Answers()  # the host terminal's answers to cuewrap's query so far

    def log_channels(self) -> None:
        """The ``channels`` record: what is on, and the channel plan with its reason."""
        settings = self.settings
        d = self.delivery
        plan = d.plan
        self.log.write(
            "channels",
            terminal=d.terminal_choice.terminal,
            protocol=d.terminal_choice.protocol,
            desktop=d.desktop_on,
            desktop_why=d.desktop_why,
            popup=plan.path,
            why=plan.why,
            terminal_osc=plan.terminal,
            desktop_notification=plan.desktop,
            duplicates=plan.duplicates,
            can_close=plan.can_close,
            close_why=plan.close_why,
            bell=settings.notify.bell,
            title_marks=settings.notify.title_marks,
            keep_awake=settings.keep_awake.enabled,
            bridge=self.bridge,
            command=settings.notify.command is not None,
        )

    def answer(self, answer: TerminalAnswer | None) -> None:
        """An answer of the host terminal to cuewrap's start-up query; None: no more will come
        (it did not answer in time). The plan is made again once the query is closed."""
        a = self._answers
        if a.complete:
            return
        if answer is None or answer.kind == "da1":
            self._answers = a = dataclasses.replace(a, complete=True)
            self.log.write(
                "terminal_answers",
                version=a.version,
                osc99=a.osc99,
                program_status=a.program_status,
                state="answered" if answer is not None else "no answer in time",
            )
            self.delivery.answered(a)
            self.log_channels()
        elif answer.kind == "xtversion":
            self._answers = dataclasses.replace(a, version=answer.text[:100])
        elif answer.kind == "osc99":
            self._answers = dataclasses.replace(a, osc99=answer.text[:500])
        elif answer.kind == "osc7501":  # the relay now passes the child's reports on
            self._answers = dataclasses.replace(a, program_status=True)
