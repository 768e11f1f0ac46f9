"""Answering's state machine alone (cuewrap/answer/machine.py; pure: no clock, no I/O): each
transition, each refusal, and the security properties over any sequence of events."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import machine as M
from cuewrap.answer.machine import Machine, Phase

pytestmark = pytest.mark.unit

DIALOG = D.Dialog("Pick a color", ("Red", "Green", "Blue"), 1)
MOVED = DIALOG._replace(selected=2)
TOKEN = "t" * 32


def _yes(ticket: B.Ticket, index: int) -> str | None:
    return None


def _at(phase: Phase) -> Machine:
    """A machine in ``phase`` (its dialog ``DIALOG``, token ``TOKEN``), by its own events."""
    m = Machine()
    if phase is Phase.IDLE:
        return m
    m.opened("select", "check")
    m.started(True)
    if phase is Phase.READING:
        return m
    if phase is Phase.SHUT:
        m.give_up(M.UNREAD)
        return m
    m.seen(m.wait, 0, DIALOG, True, TOKEN)
    if phase is Phase.ANSWERABLE:
        return m
    m.request(TOKEN, "2", _yes)
    if phase is Phase.CLAIMED:
        return m
    claim = m.book.in_flight
    assert claim is not None
    m.verified(claim, DIALOG)
    m.wrote(claim, None)
    assert m.phase is Phase.TYPED
    return m


def _kinds(actions: list[M.Action]) -> list[str]:
    return [type(a).__name__ for a in actions]


def _claim(m: Machine) -> B.Claim:
    assert m.book.in_flight is not None
    return m.book.in_flight


# -- each transition: (the phase before, the event, the phase after, the actions' kinds) ---
TRANSITIONS: list[tuple[Phase, str, Callable[[Machine], list[M.Action]], Phase, list[str]]] = [
    (Phase.IDLE, "opened", lambda m: m.opened("select", "c"), Phase.READING,
     ["StopReader", "StartReader"]),
    (Phase.READING, "started", lambda m: m.started(True), Phase.READING, ["Look"]),
    (Phase.READING, "reader failed", lambda m: m.started(False), Phase.SHUT,
     ["Log", "StopReader", "Release"]),
    (Phase.READING, "seen the dialog", lambda m: m.seen(m.wait, 0, DIALOG, True, TOKEN),
     Phase.ANSWERABLE, ["Issued", "Log", "Changed", "Release"]),
    (Phase.READING, "seen nothing", lambda m: m.seen(m.wait, 0, None, True, TOKEN),
     Phase.READING, ["Look"]),
    (Phase.READING, "seen nothing, last look",
     lambda m: m.seen(m.wait, M.LOOKS - 1, None, True, TOKEN), Phase.SHUT,
     ["Log", "StopReader", "Release"]),
    (Phase.READING, "no screen", lambda m: m.seen(m.wait, 0, None, False, TOKEN), Phase.SHUT,
     ["Log", "StopReader", "Release"]),
    (Phase.READING, "an old look", lambda m: m.seen(m.wait - 1, 0, DIALOG, True, TOKEN),
     Phase.READING, []),
    (Phase.READING, "a key", lambda m: m.key(), Phase.SHUT, ["Log", "StopReader", "Release"]),
    (Phase.ANSWERABLE, "a key", lambda m: m.key(), Phase.SHUT,
     ["Log", "Changed", "Log", "StopReader", "Release"]),
    (Phase.ANSWERABLE, "request", lambda m: m.request(TOKEN, "3", _yes), Phase.CLAIMED,
     ["Changed", "Claimed", "Verify"]),
    (Phase.ANSWERABLE, "closed", lambda m: m.closed(), Phase.IDLE,
     ["Log", "Changed", "Release", "StopReader"]),
    (Phase.CLAIMED, "verified", lambda m: m.verified(_claim(m), DIALOG), Phase.CLAIMED,
     ["Type"]),
    (Phase.CLAIMED, "wrote", lambda m: m.wrote(_claim(m), None), Phase.TYPED, ["AwaitClose"]),
    (Phase.CLAIMED, "a key", lambda m: m.key(), Phase.SHUT,
     ["Finish", "StopReader", "Log", "StopReader", "Release"]),
    (Phase.CLAIMED, "the screen changed", lambda m: m.verified(_claim(m), MOVED), Phase.SHUT,
     ["Finish", "StopReader"]),
    (Phase.TYPED, "more keys", lambda m: m.wrote(_claim(m), None), Phase.TYPED, []),
    (Phase.TYPED, "closed", lambda m: m.closed(2), Phase.IDLE,
     ["Finish", "StopReader", "Release", "StopReader"]),
    (Phase.TYPED, "too late", lambda m: m.fail(B.NOT_CLOSED, "late"), Phase.SHUT,
     ["Finish", "StopReader"]),
    (Phase.TYPED, "a key", lambda m: m.key(), Phase.TYPED, ["Log", "StopReader", "Release"]),
    (Phase.TYPED, "the deadline", lambda m: m.deadline(), Phase.SHUT, ["Finish", "StopReader"]),
    (Phase.TYPED, "the program says more", lambda m: m.over("more"), Phase.IDLE,
     ["Finish", "StopReader", "Release", "StopReader"]),
    (Phase.ANSWERABLE, "the program says more", lambda m: m.over("more"), Phase.IDLE,
     ["Log", "Changed", "Release", "StopReader"]),
    (Phase.SHUT, "a key", lambda m: m.key(), Phase.SHUT, []),
    (Phase.SHUT, "closed", lambda m: m.closed(), Phase.IDLE, ["Release", "StopReader"]),
    (Phase.SHUT, "opened", lambda m: m.opened("confirm", "c"), Phase.READING,
     ["Release", "StopReader", "StopReader", "StartReader"]),
    (Phase.IDLE, "a key", lambda m: m.key(), Phase.IDLE, []),
    (Phase.IDLE, "closed", lambda m: m.closed(), Phase.IDLE, ["Release", "StopReader"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("before", "event", "after", "kinds"),
    [pytest.param(b, f, a, k, id=f"{b.value}-{e}") for b, e, f, a, k in TRANSITIONS],
)
def test_each_transition(
    before: Phase, event: Callable[[Machine], list[M.Action]], after: Phase, kinds: list[str]
) -> None:
    m = _at(before)
    assert m.phase is before
    assert _kinds(event(m)) == kinds
    assert m.phase is after


def test_a_token_is_the_dialog_read_and_the_keys_go_only_for_it() -> None:
    m = _at(Phase.READING)
    [issued, record, *_] = m.seen(m.wait, 3, DIALOG, True, TOKEN)
    assert issued == M.Issued(B.Ticket(TOKEN, m.wait, "select", DIALOG))
    assert isinstance(record, M.Log) and record.fields == {
        "state": "answerable", "wait": m.wait, "dialog": "select", "count": 3, "selected": 2
    }  # fmt: skip
    assert m.book.current == issued.ticket
    acts = m.request(TOKEN, "blue", _yes)
    claim = _claim(m)
    assert claim == B.Claim(issued.ticket, 2) and acts[-1] == M.Verify(claim)
    assert m.book.current is None  # spent at the claim
    assert m.verified(claim, DIALOG) == [M.Type(claim)]


# -- each refusal: (the phase, the request or event, the line, the record's why) -------------
REFUSALS: list[tuple[Phase, Callable[[Machine], list[M.Action]], M.Refuse]] = [
    (Phase.IDLE, lambda m: m.request(None, "1", _yes), M.Refuse(B.NOTHING, 1)),
    (Phase.IDLE, lambda m: m.request(TOKEN, "1", _yes), M.Refuse(B.STALE, 1)),
    (Phase.READING, lambda m: m.request(None, "2", _yes), M.Refuse(B.NOTHING, 2)),
    (Phase.SHUT, lambda m: m.request(None, "1", _yes), M.Refuse(B.NOT_READ, 1)),
    (Phase.ANSWERABLE, lambda m: m.request("x" * 32, "1", _yes), M.Refuse(B.STALE, 1)),
    (Phase.ANSWERABLE, lambda m: m.request(TOKEN, "9", _yes), M.Refuse(B.NO_OPTION, 9)),
    (Phase.ANSWERABLE, lambda m: m.request(TOKEN, "purple", _yes), M.Refuse(B.NO_OPTION, None)),
    (Phase.ANSWERABLE, lambda m: m.request(TOKEN, "Blue", lambda t, i: "not so"),
     M.Refuse("not so", 3)),
    (Phase.ANSWERABLE, lambda m: m.request(None, "1", _yes, "keys unknown"),
     M.Refuse("keys unknown", None)),
    (Phase.CLAIMED, lambda m: m.request(None, "1", _yes), M.Refuse(B.BUSY, 1)),
    (Phase.TYPED, lambda m: m.request(TOKEN, "1", _yes), M.Refuse(B.BUSY, 1)),
]  # fmt: skip


@pytest.mark.parametrize(("phase", "event", "refusal"), REFUSALS)
def test_each_refusal_of_a_request(
    phase: Phase, event: Callable[[Machine], list[M.Action]], refusal: M.Refuse
) -> None:
    m = _at(phase)
    token = m.book.current
    assert event(m) == [refusal]
    assert m.phase is phase and m.book.current == token  # nothing else moved


FAILURES: list[tuple[Phase, Callable[[Machine], list[M.Action]], str, str]] = [
    (Phase.CLAIMED, lambda m: m.verified(_claim(m), MOVED), B.NOT_SHOWN, "the screen changed"),
    (Phase.CLAIMED, lambda m: m.verified(_claim(m), None), B.NOT_SHOWN, "the screen changed"),
    (Phase.CLAIMED, lambda m: m.verified(_claim(m), None, screen=False), B.NOT_SHOWN,
     "no screen model"),
    (Phase.CLAIMED, lambda m: m.verified(_claim(m), DIALOG, can_type=False), B.NOT_SHOWN,
     "no input to type into"),
    (Phase.CLAIMED, lambda m: m.wrote(_claim(m), B.UNSAFE), B.UNSAFE, B.UNSAFE),
    (Phase.CLAIMED, lambda m: m.key(), B.STALE, M.KEY),
    (Phase.CLAIMED, lambda m: m.end("another dialog opened"), B.NOT_SHOWN,
     "another dialog opened"),
    (Phase.TYPED, lambda m: m.end("exit"), B.NOT_CLOSED, "exit"),
    (Phase.TYPED, lambda m: m.fail(B.NOT_CLOSED, "no close"), B.NOT_CLOSED, "no close"),
    (Phase.TYPED, lambda m: m.closed(1), "Pi took option 1, not 2", "another option was taken"),
    (Phase.TYPED, lambda m: m.closed(0), "Pi closed the dialog without an option, not 2",
     "another option was taken"),
]  # fmt: skip


@pytest.mark.parametrize(("phase", "event", "line", "why"), FAILURES)
def test_each_refusal_of_an_answer_in_flight(
    phase: Phase, event: Callable[[Machine], list[M.Action]], line: str, why: str
) -> None:
    m = _at(phase)
    [done] = [a for a in event(m) if isinstance(a, M.Finish)]
    assert (done.ok, done.line, done.why, done.option) == (False, line, why, 2)
    assert done.typed is (phase is Phase.TYPED)
    assert m.book.in_flight is None and m.book.current is None
    assert isinstance(m.request(TOKEN, "2", _yes)[0], M.Refuse)  # nothing more for it


@pytest.mark.parametrize(("took", "line"), [(None, B.took_line(2, None)), (2, "Pi took option 2")])
def test_an_answer_is_done_when_the_dialog_closes_on_its_option(
    took: int | None, line: str
) -> None:
    m = _at(Phase.TYPED)
    [done, *_] = m.closed(took)
    assert done == M.Finish(True, line, "the dialog closed", 2, True, took)
    assert m.phase is Phase.IDLE


def test_twice_a_token_only_for_the_same_dialog_read_twice_in_a_row() -> None:
    m = Machine("opencode", twice=True)
    m.opened("permission", None)
    m.started(True)
    assert m.seen(m.wait, 0, DIALOG, True, TOKEN) == [M.Look(m.wait, 1)]
    assert m.seen(m.wait, 1, MOVED, True, TOKEN) == [M.Look(m.wait, 2)]  # another frame
    assert _kinds(m.seen(m.wait, 2, MOVED, True, TOKEN))[0] == "Issued"
    assert m.book.current is not None and m.book.current.dialog == MOVED
    last = Machine("opencode", twice=True)
    last.opened("permission", None)
    last.started(True)
    assert _kinds(last.seen(last.wait, M.LOOKS - 1, DIALOG, True, TOKEN))[0] == "Issued"


def test_a_key_after_the_keys_leaves_the_answer_to_the_close() -> None:
    m = _at(Phase.TYPED)
    m.key()
    assert m.phase is Phase.TYPED and m.why == M.KEY
    [done, *_] = m.closed(2)
    assert isinstance(done, M.Finish) and done.ok and done.option == 2


# -- the properties over any sequence of events --------------------------------------------
EVENTS = st.sampled_from(
    ["opened", "started", "failed", "seen", "seen-moved", "seen-none", "gone", "key",
     "request", "request-pid", "request-bad", "verified", "verified-moved", "wrote",
     "wrote-unsafe", "fail", "closed", "closed-other", "end"]
)  # fmt: skip


@settings(max_examples=400)
@given(
    st.sampled_from(list(Phase)), st.lists(st.tuples(EVENTS, st.integers(0, M.LOOKS)), max_size=30)
)
def test_keys_only_for_the_dialog_read_one_answer_per_dialog_the_token_dies_at_a_key(
    start: Phase, events: list[tuple[str, int]]
) -> None:
    m = _at(start)
    issued: dict[int, B.Ticket] = {}  # wait -> the ticket issued for it
    claimed: set[int] = set()  # the waits an answer claimed
    verified: set[int] = set()  # claims whose screen showed their very dialog
    if start in (Phase.ANSWERABLE, Phase.CLAIMED, Phase.TYPED):
        issued[m.wait] = B.Ticket(TOKEN, m.wait, "select", DIALOG)
    if m.book.in_flight is not None:
        claimed.add(m.wait)
    if start is Phase.TYPED:
        verified.add(id(m.book.in_flight))
    for n, (event, tries) in enumerate(events):
        claim = m.book.in_flight
        token = f"{n:032d}"
        if event == "opened":
            acts = m.opened("select", "c")
        elif event in ("started", "failed"):
            acts = m.started(event == "started")
        elif event.startswith("seen"):
            dialog = {"seen": DIALOG, "seen-moved": MOVED, "seen-none": None}[event]
            acts = m.seen(m.wait, tries, dialog, True, token)
        elif event == "gone":
            acts = m.seen(m.wait, tries, None, False, token)
        elif event == "key":
            live = m.book.current
            acts = m.key()
            assert m.book.current is None
            if live is not None:  # its token is refused from now on
                assert m.request(live.token, "1", _yes)[0] == M.Refuse(B.STALE, 1)
        elif event.startswith("request"):
            live = m.book.current
            by = {"request": live.token if live else token, "request-pid": None,
                  "request-bad": token}[event]  # fmt: skip
            acts = m.request(by, "2", _yes)
        elif event.startswith("verified") and claim is not None:
            seen = claim.ticket.dialog if event == "verified" else D.Dialog("other", ("a",), 0)
            acts = m.verified(claim, seen)
        elif event.startswith("wrote") and claim is not None and id(claim) in verified:
            # (the shell writes only what a ``Type`` asked for)
            acts = m.wrote(claim, None if event == "wrote" else B.UNSAFE)
        elif event == "fail":
            acts = m.fail(B.NOT_CLOSED, "late")
        elif event.startswith("closed"):
            acts = m.closed(2 if event == "closed" else 1)
        elif event == "end":
            acts = m.end("exit")
        else:
            acts = []
        for act in acts:
            if isinstance(act, M.Issued):
                assert act.ticket.token == token and act.ticket.dialog in (DIALOG, MOVED)
                assert act.ticket.wait not in issued  # one token per dialog
                issued[act.ticket.wait] = act.ticket
            elif isinstance(act, M.Claimed):
                assert issued.get(act.claim.ticket.wait) == act.claim.ticket
                assert act.claim.ticket.wait not in claimed  # one answer per dialog
                claimed.add(act.claim.ticket.wait)
            elif isinstance(act, M.Type):
                # keys only for a claim whose screen, read again, showed the dialog read
                assert event == "verified" and act.claim == claim
                verified.add(id(act.claim))
            elif isinstance(act, M.Refuse | M.Finish):  # never a label in a reply
                text = act.why if isinstance(act, M.Refuse) else f"{act.line} {act.why}"
                assert "Red" not in text and "Green" not in text and "Blue" not in text
                if isinstance(act, M.Finish) and act.ok:  # done: closed on its option
                    assert event == "closed" and act.typed and id(claim) in verified
        # the phase and the book agree
        assert (m.book.current is not None) == (m.phase is Phase.ANSWERABLE)
        assert (m.book.in_flight is not None) == (m.phase in (Phase.CLAIMED, Phase.TYPED))


def test_by_screen_the_dialog_gone_from_the_screen_closed_it() -> None:
    """A program that does not always say its dialog closed (generic mode): at the deadline
    the screen is read; gone, it closed (answered); still shown then, failed; before the
    deadline, still shown is nothing yet."""
    for gone, final, ok in ((True, True, True), (True, False, True), (False, True, False)):
        m = _at(Phase.TYPED)
        m.by_screen = True
        claim = _claim(m)
        assert m.deadline() == [M.CheckGone(claim, True)] and m.phase is Phase.TYPED
        [done, *_] = m.shown(claim, gone, final)
        assert isinstance(done, M.Finish) and done.ok is ok
        assert done.why == ("the dialog closed" if ok else M.NOT_GONE)
        assert m.shown(claim, gone, final) == []  # over: a late read changes nothing
    m = _at(Phase.TYPED)
    assert m.shown(_claim(m), False, False) == [] and m.phase is Phase.TYPED
