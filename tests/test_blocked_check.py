"""Pi mode without the bridge: a ``blocked`` report from the output counts only with Pi's
dialog on the screen (cuewrap/wiring/blocked.py, docs/terminal-guard.md). The pure rule
(``pi_screen.dialog_shown``, ``blocked.next_step``) on screens as pyte shows them, then the
check with a fake clock and a fake reader."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cuewrap.answer.screen import OutputRing
from cuewrap.decisionlog import DecisionLog
from cuewrap.facts import Fact, ProgramStatus
from cuewrap.loop import Loop
from cuewrap.screen.pi_screen import dialog_shown
from cuewrap.wiring import blocked as B

pytestmark = pytest.mark.unit

W = 100
BORDER = "─" * W
CWD = "/tmp/scr/home/work"
STATS = "↑1.5k ↓20 1.2%/128k (auto)" + " " * 64 + "fake-model"
HINT = " ↑↓ navigate  enter select  escape/ctrl+c cancel"
DIALOG = [" Here is the summary", "", BORDER, "", " Deploy", " Ship it?", "", " → Yes", "   No",
          "", HINT, "", BORDER, CWD, STATS]  # fmt: skip
WORKING = [" Here is the summary", "", "── ⠋ Working " + "─" * 80, "", BORDER, CWD, STATS]
IDLE = [" Here is the summary", "", BORDER, "", BORDER, CWD, STATS]
# the model's answer drew a dialog's lines itself, above the idle editor
FORGED = [" → Yes", "   No", "", HINT, "", BORDER, "", BORDER, CWD, STATS]
BLOCKED = ProgramStatus("blocked", app="pi", kind="permission")


# --------------------------------------------------------------------------------------------
# the pure rule


def test_a_dialog_in_the_editors_place_is_shown() -> None:
    assert dialog_shown(DIALOG)
    assert dialog_shown(DIALOG + [""] * 12)  # Pi's output does not fill the screen yet


def test_the_ask_questionnaire_is_shown() -> None:
    ask = [BORDER, " Which color?", " ❯ Blue", "   Red", "", " Enter to select · Esc to cancel",
           BORDER, CWD, STATS]  # fmt: skip
    assert dialog_shown(ask)


@pytest.mark.parametrize("screen", [WORKING, IDLE, FORGED, [], [""] * 30])
def test_no_dialog(screen: list[str]) -> None:
    assert not dialog_shown(screen)


def test_a_dialog_hint_while_pi_works_is_none() -> None:
    assert not dialog_shown([HINT, "", "── ⠙ Working " + "─" * 80, "", BORDER, CWD, STATS])


def test_next_step() -> None:
    assert B.next_step(DIALOG, 0) == "pass"
    assert B.next_step(WORKING, 2) == "again"
    assert B.next_step(WORKING, 0) == "refuse"
    assert B.next_step(None, 3) == "refuse"


def test_only_a_blocked_report_from_the_output_is_held() -> None:
    assert B.holds(BLOCKED)
    assert not B.holds(ProgramStatus("working", app="pi"))
    assert not B.holds(ProgramStatus("blocked", app="pi", source="bridge"))


# --------------------------------------------------------------------------------------------
# the check


class FakeReader:
    def __init__(self, screens: list[list[str] | None], *, starts: bool = True) -> None:
        self.screens = screens
        self.starts = starts
        self.fed: list[bytes] = []
        self.queries = 0
        self.stopped = False

    def start(self) -> bool:
        return self.starts

    def feed(self, data: bytes) -> None:
        self.fed.append(data)

    def resize(self, *, rows: int, cols: int) -> None:
        pass

    def query(self, on_lines: Callable[[list[str] | None], None]) -> None:
        self.queries += 1
        on_lines(self.screens.pop(0) if self.screens else None)

    def stop(self) -> None:
        self.stopped = True


class Rig:
    def __init__(self, tmp_path: Path, screens: list[list[str] | None], starts: bool = True):
        self.now = 100.0
        self.loop = Loop()
        self.loop.clock = lambda: self.now
        self.facts: list[Fact] = []
        self.readers: list[FakeReader] = []
        self.log_path = tmp_path / "log.jsonl"
        self.ring = OutputRing(24, 80)

        def make(cols: int, rows: int) -> Any:
            r = FakeReader(list(screens), starts=starts)
            self.readers.append(r)
            return r

        self.check = B.BlockedCheck(
            self.loop, DecisionLog(str(self.log_path)), self.ring, self.facts.append, make
        )

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = min(end, self.now + 0.05)
            self.loop.run_due_timers()

    def refused(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        recs = [json.loads(x) for x in self.log_path.read_text().splitlines()]
        return [r for r in recs if r.get("kind") == "fact_refused"]


def test_passed_on_once_the_dialog_is_drawn(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [WORKING, DIALOG])
    rig.ring.feed(b"frame 1")
    assert rig.check.offer(BLOCKED)
    assert rig.readers == [] and rig.facts == []  # no worker before Pi had time to draw
    rig.advance(1.5)
    assert rig.facts == [BLOCKED]
    (reader,) = rig.readers
    assert reader.fed == [b"frame 1"] and reader.queries == 2 and reader.stopped
    assert rig.ring.reader is None
    assert rig.refused() == []


def test_refused_without_a_dialog_within_a_second(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [WORKING] * 10)
    assert rig.check.offer(BLOCKED)
    rig.advance(2.0)
    assert rig.facts == []
    assert rig.readers[0].queries == B.LOOKS and rig.readers[0].stopped
    (rec,) = rig.refused()
    assert rec["source"] == "osc7501" and rec["why"] == "no dialog on the screen"


def test_a_reader_that_does_not_start_refuses(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [DIALOG], starts=False)
    assert rig.check.offer(BLOCKED)
    rig.advance(1.0)
    assert rig.facts == []
    assert [r["why"] for r in rig.refused()] == ["the screen could not be read"]


def test_another_report_passes_at_once_and_ends_the_held_one(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [DIALOG])
    assert rig.check.offer(BLOCKED)
    working = ProgramStatus("working", app="pi")
    assert not rig.check.offer(working)
    rig.advance(1.5)
    assert rig.facts == []  # the controller passes `working` on itself
    assert rig.readers == []
    assert [r["why"] for r in rig.refused()] == ["another report came first"]


def test_other_facts_pass_and_close_ends_all(tmp_path: Path) -> None:
    rig = Rig(tmp_path, [WORKING] * 10)
    assert not rig.check.offer(ProgramStatus("done", app="pi"))
    assert rig.check.offer(BLOCKED)
    rig.advance(0.2)
    rig.check.close()
    assert rig.readers[0].stopped
    rig.advance(2.0)
    assert rig.facts == [] and rig.refused() == []
