"""Issue 50 without Pi (docs/terminal-guard.md, docs/bridge-protocol.md, "A lost bridge"):
Pi's command line read for a Pi without its TUI, a title posing as cuewrap's mark removed
wherever it stands and however the reads cut it, a ``blocked`` report held for the screen
check under the frame rule, the relay going back to the frame rule when the bridge is lost
and to content when it is back, and the watch that decides when."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_provenance import FORGED, MARK, TITLE, Clip, _read, relay  # noqa: F401  (fixture)

from cuewrap.decisionlog import DecisionLog
from cuewrap.factbase import ProgramStatus
from cuewrap.facts import BridgeGone, BridgeHello, Fact, SessionShutdown
from cuewrap.relay.events import Provenance
from cuewrap.relay.relay import Relay
from cuewrap.term.clipboard import GuardedSequence
from cuewrap.term.provenance import headless
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import OutputTracker, TitleChange
from cuewrap.wiring import bridgewatch as W

pytestmark = pytest.mark.unit

MARKS = tuple(m.encode() for m in ("[?] ", "[✓] ", "[!] ", "[-] "))
POSING = b"\x1b]0;[?] owned by the model\x07"


# -- Pi's command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["-p", "summarise"], True),
        (["--print"], True),
        (["-e", "x.ts", "--mode", "json", "hi"], True),
        (["--mode", "rpc"], True),
        (["--mode", "text"], False),
        ([], False),
        (["-e", "x.ts", "-n", "work"], False),
        (["--model", "-p"], False),  # the model's name, as Pi reads it
        (["--", "-p"], False),  # a message
    ],
)
def test_a_pi_without_its_tui_is_read_from_its_command_line(argv: list[str], want: bool) -> None:
    assert headless(argv) is want


# -- titles posing as cuewrap's mark --------------------------------------------------------


def tracker(status: StatusGuard | None = None) -> OutputTracker:
    return OutputTracker(status, guard_frames=True, marked_titles=MARKS)


@pytest.mark.parametrize(
    "title",
    [
        POSING,
        b"\x1b]2;[\xe2\x9c\x93] done\x1b\\",
        b"\x1b]02;[?] leading zero\x07",
        b"\x1b]l[!] xterm's spelling\x1b\\",
        b"\x1b]0;[?] ended by a bare ESC\x1b[0m",
    ],
)
def test_a_title_posing_as_the_mark_between_frames_is_removed(title: bytes) -> None:
    t = tracker()
    scan = t.feed(b"\x1b[?2026hx\x1b[?2026l" + title + b"after")
    assert b"[" not in scan.out.replace(b"\x1b[", b""), scan.out
    assert scan.out.endswith(b"after")
    assert any(isinstance(e, GuardedSequence) and e.what in ("osc0", "osc2") for e in scan.events)
    assert not any(isinstance(e, TitleChange) for e in scan.events)


@pytest.mark.parametrize("cut", range(1, len(POSING)))
def test_a_posing_title_cut_by_the_reads_is_removed_whole(cut: int) -> None:
    t = tracker()
    out = t.feed(POSING[:cut]).out + t.flush() + t.feed(POSING[cut:] + b"after").out
    assert out == b"after", (cut, out)


def test_pis_own_title_passes_and_is_the_title() -> None:
    t = tracker()
    scan = t.feed(b"\x1b[?2026hx\x1b[?2026l" + TITLE)
    assert scan.out.endswith(TITLE)
    assert TitleChange("π - work") in scan.events
    cut = tracker()
    out = cut.feed(TITLE[:3]).out + cut.feed(TITLE[3:]).out
    assert out == TITLE


def test_generic_mode_keeps_an_inner_cuewraps_title() -> None:
    t = OutputTracker(guard_frames=True)
    assert t.feed(POSING).out == POSING


# -- a blocked report under the frame rule ---------------------------------------------------

BLOCKED = b"\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\"
WORKING = b"\x1b]7501;state=working:app=pi\x1b\\"


def test_a_blocked_report_is_held_for_a_terminal_that_speaks_the_protocol() -> None:
    t = tracker(StatusGuard(consume=False, hold_blocked=True))
    scan = t.feed(b"text" + BLOCKED + b"more")
    assert scan.out == b"textmore"
    assert [e.state for e in scan.events if isinstance(e, ProgramStatus)] == ["blocked"]
    assert t.status.held == BLOCKED
    assert t.feed(WORKING).out == WORKING  # another passes at once, and ends the wait
    assert t.status.held == b""


def test_a_blocked_report_inside_a_character_leaves_esc_can() -> None:
    t = tracker(StatusGuard(consume=False, hold_blocked=True))
    scan = t.feed(b"\xc3" + BLOCKED)
    assert scan.out == b"\xc3\x1b\x18"


# -- the relay: lost and back ------------------------------------------------------------------


def test_the_relay_goes_back_to_the_frame_rule_when_the_bridge_is_lost(
    relay: tuple[Relay, int, list[object]],  # noqa: F811
) -> None:
    rel, r, events = relay
    assert not rel.reactions.provenance_lost("before the mark")  # nothing to lose
    rel._output(MARK + b"\x1b[?2026hx\x1b[?2026l")
    _read(r)
    assert rel.reactions.provenance_lost("gone")
    assert Provenance("lost", "gone") in events
    rel._output(TITLE)  # Pi's own, between frames, as before the mark
    assert _read(r) == TITLE
    rel._output(b"\x1b[?2026h" + TITLE + b"\x1b[?2026l")  # inside a frame: content still
    assert TITLE not in _read(r)
    assert rel.reactions.provenance_back()
    assert Provenance("restored") in events
    rel._output(TITLE)
    assert _read(r) == b""
    assert not rel.reactions.provenance_back()


# -- the watch ---------------------------------------------------------------------------------


class _Relay:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.marked = True

    def provenance_lost(self, why: str) -> bool:
        self.calls.append(f"lost: {why}")
        lost, self.marked = self.marked, False
        return lost

    def provenance_back(self) -> bool:
        self.calls.append("back")
        back, self.marked = not self.marked, True
        return back


class _Timer:
    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Loop:
    def __init__(self) -> None:
        self.timers: list[tuple[float, _Timer]] = []

    def call_later(self, delay: float, fn: Callable[[], None]) -> _Timer:
        t = _Timer(fn)
        self.timers.append((delay, t))
        return t

    def fire(self) -> None:
        timers, self.timers = self.timers, []
        for _, t in timers:
            if not t.cancelled:
                t.fn()


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[tuple[W.BridgeWatch, _Relay, _Loop, list[str], list[Fact]]]:
    rel, loop, said, facts = _Relay(), _Loop(), [], []
    log = DecisionLog(str(tmp_path / "log"))
    w = W.BridgeWatch(loop, log, rel, facts.append, lambda t: said.append(t) or True)  # type: ignore[arg-type]
    yield w, rel, loop, said, facts
    log.close()


HELLO = BridgeHello(1, "1.4.0", "tui", True, "id", None, None, None, 1)


def test_a_connection_that_fails_is_lost_at_once_and_said_when_one_is_back(
    watch: tuple[W.BridgeWatch, _Relay, _Loop, list[str], list[Fact]],
) -> None:
    w, rel, loop, said, facts = watch
    w.fact(BridgeGone())
    assert rel.calls == [f"lost: {W.WHY_FAILED}"]
    assert "lost at" in w.note and said == []
    w.fact(HELLO)
    loop.fire()
    assert rel.calls[-1] == "back" and len(said) == 1 and "was lost at" in said[0]
    assert "back at" in w.note
    assert facts == [BridgeGone(), HELLO]  # every fact goes on


def test_a_refused_write_is_lost_at_once(
    watch: tuple[W.BridgeWatch, _Relay, _Loop, list[str], list[Fact]],
) -> None:
    w, rel, _loop, _said, _facts = watch
    w.fact(BridgeGone(why="refused"))
    assert rel.calls == [f"lost: {W.WHY_REFUSED}"]


def test_a_reload_has_its_grace_and_a_quit_loses_nothing(
    watch: tuple[W.BridgeWatch, _Relay, _Loop, list[str], list[Fact]],
) -> None:
    w, rel, loop, said, _facts = watch
    w.fact(SessionShutdown("reload"))
    w.fact(BridgeGone())
    assert rel.calls == [] and loop.timers[0][0] == W.GRACE
    w.fact(HELLO)  # the new runtime came in time
    loop.fire()
    assert rel.calls == ["back"] and said == []  # nothing was lost
    w.fact(SessionShutdown("reload"))
    w.fact(BridgeGone())
    loop.fire()  # none came: a failed /reload
    assert rel.calls[-1].startswith("lost: no new connection 3 s after session_shutdown reload")
    w.fact(SessionShutdown("quit"))
    w.fact(BridgeGone())
    assert loop.timers == []
