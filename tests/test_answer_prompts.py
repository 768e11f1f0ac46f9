"""A program's own dialogs (cuewrap/answer/prompts.py, pure) and the generic answerer with a
fake screen reader (cuewrap/answer/generic.py; the real thing: tests/test_answer_claude.py).
The screens are Claude Code 2.1.328's as pyte read them (30x120, trailing blanks cut)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared import FakeReader

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import prompts as P
from cuewrap.answer import wire
from cuewrap.answer.generic import NOT_GONE, WIDENS
from cuewrap.decisionlog import DecisionLog
from cuewrap.loop import Loop

pytestmark = pytest.mark.unit

SOLID = "─" * 120
DASHED = "╌" * 120
ALWAYS = "Yes, and always allow access to /home/me/proj from this project"
TRANSCRIPT = [" ▐▛███▛█   Claude Code v2.1.328", "", "❯ go", "", "● Running the release step"]
BASH = [
    *TRANSCRIPT,
    "  ⎿  $ echo RELEASED > released.txt",
    "",
    SOLID,
    " Bash command",
    " Run the release step",
    DASHED,
    " echo RELEASED > released.txt",
    DASHED,
    " Do you want to proceed?",
    " ❯ 1. Yes",
    f"   2. {ALWAYS}",
    "   3. No",
    "",
    " Esc to cancel · Tab to amend",
    "",
    "",
]
FETCH = [
    *TRANSCRIPT,
    SOLID,
    " Fetch",
    " Claude wants to fetch content from example.com",
    DASHED,
    " url: https://example.com/",
    " prompt: summarize",
    DASHED,
    " Do you want to allow Claude to fetch this content?",
    " ❯ 1. Yes",
    "   2. Yes, and don't ask again for example.com",
    "   3. No, and tell Claude what to do differently (esc)",
    "",
]
ASK = [
    *TRANSCRIPT,
    SOLID,
    " ☐ Color",
    "",
    "Which color should the button be?",
    "",
    "❯ 1. Blue",
    "     The calm default",
    "  2. Red",
    "     Loud",
    "  3. Type something.",
    SOLID,
    "  4. Chat about this",
    "",
    "Enter to select · ↑/↓ to navigate · Esc to cancel",
    "",
]


def test_claude_codes_permission_prompts_are_read() -> None:
    bash = P.parse_permission(BASH)
    assert bash is not None
    assert bash.options == ("Yes", ALWAYS, "No") and bash.selected == 0
    assert bash.title == (
        "Bash command Run the release step echo RELEASED > released.txt Do you want to proceed?"
    )
    fetch = P.read("permission", FETCH)
    assert fetch is not None and fetch.options[2].startswith("No, and tell Claude")
    assert P.read("question", BASH) is None and P.read("auth", BASH) is None
    # the selection moved: the same dialog, read with its selection
    moved = [ln.replace(" ❯ 1.", "   1.").replace("   3. No", " ❯ 3. No") for ln in BASH]
    assert P.parse_permission(moved) == bash._replace(selected=2)
    # a long option wrapped onto the next row is one option
    wrapped: list[str] = []
    for ln in BASH:
        split = ["   2. Yes, and always allow access to /home/me/proj", "      from this project"]
        wrapped += split if ALWAYS in ln else [ln]
    assert P.parse_permission(wrapped) == bash


def test_the_question_is_read() -> None:
    d = P.parse_question(ASK)
    assert d is not None
    assert d.options == ("Blue", "Red") and d.selected == 0
    assert d.title == "Color Which color should the button be?"
    assert P.read("permission", ASK) is None


@pytest.mark.parametrize(
    "broken",
    [
        [*BASH[:-5], "   3. Maybe", "", " Esc to cancel · Tab to amend"],  # no "No"
        [ln.replace("1. Yes", "1. Sure") for ln in BASH],  # the first is not "Yes"
        [ln.replace("   2.", " ❯ 2.") for ln in BASH],  # two selected
        [ln.replace("   3. No", "   4. No") for ln in BASH],  # a gap in the numbers
        [ln for ln in BASH if ln != SOLID],  # no border above
        [ln.replace("Do you want to proceed?", "Proceed?") for ln in BASH],  # no question
        [*BASH, "● the model's text below the dialog"],  # not the last thing on the screen
        [ln for ln in BASH if "1. Yes" not in ln],  # no selection, numbering from 2
    ],
)
def test_what_does_not_fit_is_no_permission_prompt(broken: list[str]) -> None:
    assert P.parse_permission(broken) is None


@pytest.mark.parametrize(
    "broken",
    [
        [ln.replace(" ☐ Color", " ←  ☐ Color  ☐ Size  ✔ Submit  →") for ln in ASK],  # tabs
        [ln.replace("1. Blue", "1. [ ] Blue").replace("2. Red", "2. [ ] Red") for ln in ASK],
        [ln for ln in ASK if "Type something" not in ln],  # no free-text row
        [ln.replace("❯ 1.", "  1.").replace("  3. Type", "❯ 3. Type") for ln in ASK],
        [ln for ln in ASK if "☐" not in ln],  # no header
        ASK[:-2],  # no key hints
    ],
)
def test_what_does_not_fit_is_no_question(broken: list[str]) -> None:
    assert P.parse_question(broken) is None


def test_a_dialog_drawn_by_the_model_in_the_transcript_is_not_read() -> None:
    # the same rows as text in the transcript, with the input box under them
    posing = [*BASH[:-3], "", SOLID, "❯ ", SOLID, "  ⏸ manual mode on · ? for shortcuts"]
    assert P.parse_permission(posing) is None
    assert P.parse_question([*ASK, SOLID, "❯ ", SOLID]) is None


def test_what_widens_and_the_keys() -> None:
    assert not P.widens("permission", "Yes") and not P.widens("permission", "No")
    assert not P.widens("permission", "No, and tell Claude what to do differently (esc)")
    for label in (ALWAYS, "Yes, and switch to auto mode · auto mode handles these prompts",
                  "Yes, and don't ask again for example.com", "Yes, allow all edits",
                  "Something new"):  # fmt: skip
        assert P.widens("permission", label)
    assert not P.widens("question", "Yes, and always allow")  # a question's options: the model's
    assert [P.key_for(i) for i in range(9)] == [str(n).encode() for n in range(1, 10)]
    with pytest.raises(ValueError):
        P.key_for(9)


@given(st.lists(st.text(max_size=130), max_size=40), st.sampled_from([BASH, FETCH, ASK]))
def test_the_readers_never_raise(lines: list[str], real: list[str]) -> None:
    for kind in ("permission", "question", "auth", None):
        P.read(kind, lines)
        P.read(kind, [*lines, *real])
        P.read(kind, [*real[: len(lines)], *lines])


# -- the generic answerer, with a fake screen reader ------------------------------------------


def _loop_until(loop: Loop, pred: Callable[[], bool], seconds: float = 5.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < end, "timed out"
        loop.run_once(max_timeout=0.05)


def _answerer(
    lines: list[str],
    kind: str = "permission",
    summary: bool = False,
    settle: float = 0.0,
    app: str = "claude-code",
) -> Any:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.generic import OwnProgram
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    reader = FakeReader(lines)
    a = Answerer(loop, DecisionLog(None), OutputRing(30, 120), OwnProgram(), summary=summary,
                 make_reader=lambda c, r: reader)  # type: ignore[arg-type,return-value]  # fmt: skip
    a.typed_keys = []

    def type_keys(data: bytes) -> str | None:
        a.typed_keys.append(data)
        return None

    a.type_keys = type_keys
    a.settle = settle  # (the hold before typing: its own test below)
    a.fact(F.ProgramStatus("blocked", app, kind, True), ("osc",))
    _loop_until(loop, lambda: a.book.current is not None)
    a.test_loop = loop
    a.test_reader = reader
    return a


def _ask(a: Any, choice: str, token: str | None = None, source: str | None = None) -> list[Any]:
    replies: list[tuple[bool, str]] = []
    a.request(wire.Request(choice, token), lambda ok, why: replies.append((ok, why)), source)
    return replies


def test_a_report_and_the_screen_make_a_token_and_a_digit_answers() -> None:
    a = _answerer(BASH)
    assert a.wait_info() == {"kind": "permission", "token": a.book.current.token,
                             "options": None, "count": 3}  # fmt: skip
    assert _ask(a, "yes") == [] and a.typed_keys == [b"1"]
    a.fact(F.ProgramStatus("working", "claude-code"), ())
    assert a.last is not None and "option 1: answered" in a.last and a.wait_info() is None


def test_a_report_without_the_dialog_or_of_another_kind_gives_no_token() -> None:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.generic import OwnProgram
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    a = Answerer(loop, DecisionLog(None), OutputRing(30, 120), OwnProgram(), summary=True,
                 make_reader=lambda c, r: FakeReader(ASK))  # type: ignore[arg-type,return-value]  # fmt: skip
    a.fact(F.ProgramStatus("blocked", "claude-code", "permission", True), ("osc",))
    _loop_until(loop, lambda: not a.reading, seconds=10)
    assert a.book.current is None  # a question on the screen, a permission reported
    a.fact(F.ProgramStatus("blocked", "claude-code", "auth", True), ("osc",))
    assert not a.reading and a.book.current is None  # a kind cuewrap does not read
    a.fact(F.ProgramStatus("blocked", "claude-code", "question", True), ())
    assert not a.reading  # the engine opened no wait
    for app in ("some-agent", None):  # a program cuewrap reads no dialogs of: no reader
        a.fact(F.ProgramStatus("blocked", app, "permission", True), ("osc",))
        assert not a.reading and a._reader is None


def test_widening_options_only_by_exact_label_with_the_pid() -> None:
    a = _answerer(BASH)
    token = a.book.current.token
    assert _ask(a, "2") == [(False, WIDENS)]
    assert _ask(a, ALWAYS, token) == [(False, WIDENS)]
    assert _ask(a, ALWAYS.lower()) == [(False, WIDENS)]
    assert _ask(a, "2", source="desktop") == [(False, WIDENS)]
    assert a.typed_keys == [] and a.book.current.token == token  # still alive
    assert _ask(a, ALWAYS) == [] and a.typed_keys == [b"2"]


def test_buttons_are_the_one_time_yes_and_the_no() -> None:
    a = _answerer(BASH, summary=True)
    assert [(b.key, b.label) for b in a.buttons(7)] == [("answer-1", "Yes"), ("answer-3", "No")]
    a.buttons(8)
    a.button(8, "answer-2")  # a key never offered (a forged click): nothing happens
    assert a.typed_keys == [] and a.last is None
    a.button(7, "answer-3")
    assert a.typed_keys == [b"3"]
    q = _answerer(ASK, kind="question")
    assert [(b.key, b.label) for b in q.buttons(1)] == [("answer-1", "1"), ("answer-2", "2")]
    assert q.wait_info()["options"] is None
    q2 = _answerer(ASK, kind="question", summary=True)
    assert [b.label for b in q2.buttons(1)] == ["Blue", "Red"]
    assert q2.wait_info()["options"] == ["Blue", "Red"]


def test_keys_the_screen_and_the_close() -> None:
    a = _answerer(BASH)
    a.typed()  # the user's key: the token dies, nothing typed
    assert _ask(a, "1") == [(False, B.NOTHING)] and a.typed_keys == []
    # a new report: a new wait, a new token
    a.fact(F.ProgramStatus("blocked", "claude-code", "permission", True), ("osc",))
    _loop_until(a.test_loop, lambda: a.book.current is not None)
    moved = [ln.replace(" ❯ 1.", "   1.").replace("   3. No", " ❯ 3. No") for ln in BASH]
    a.test_reader.lines = moved
    assert _ask(a, "1") == [(False, B.NOT_SHOWN)] and a.typed_keys == []
    # no report and the dialog still shown after the keys: failed, nothing more typed
    b = _answerer(BASH)
    replies = _ask(b, "1")
    _loop_until(b.test_loop, lambda: bool(replies))
    assert replies == [(False, B.NOT_CLOSED)] and b.typed_keys == [b"1"]
    assert b.last is not None and NOT_GONE in b.last
    # no report, but the dialog left the screen: answered
    c = _answerer(BASH)
    replies = _ask(c, "3")
    c.test_reader.lines = BASH[:6]
    _loop_until(c.test_loop, lambda: bool(replies))
    assert replies == [(True, B.took_line(3, None, "the program"))]
    # the program exits: the token dies
    d = _answerer(BASH)
    d.fact(F.ChildExit(0, None), ())
    assert d.wait_info() is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "3", "yes", "no", "No", ALWAYS, ALWAYS.lower(), " 2 ", "x"]),
            st.booleans(),  # by token (else by pid)
            st.sampled_from([None, "desktop"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_only_a_pid_with_the_exact_label_ever_types_the_widening_digit(
    asks: list[tuple[str, bool, str | None]],
) -> None:
    a = _answerer(BASH)
    for choice, by_token, source in asks:
        token = a.book.current.token if by_token and a.book.current is not None else None
        before = list(a.typed_keys)
        _ask(a, choice, token, source)
        new = a.typed_keys[len(before) :]
        assert new in ([], [b"1"], [b"2"], [b"3"])
        if new == [b"2"]:
            assert (choice, token, source) == (ALWAYS, None, None)
        if new:
            break  # one answer per token


def test_an_answer_right_after_the_token_waits_for_the_dialog_to_settle() -> None:
    """Claude Code drops a key that comes right after its dialog is drawn: an answer within
    ``settle`` of the token is typed only once that much has passed, after the screen was read
    again; a key of the user meanwhile refuses it, nothing typed."""
    import time

    from cuewrap.answer.generic import SETTLE

    a = _answerer(BASH, settle=SETTLE)
    replies = _ask(a, "1")
    assert a.typed_keys == [] and replies == [] and a._hold is not None  # held
    _loop_until(a.test_loop, lambda: bool(a.typed_keys))
    assert a.typed_keys == [b"1"]
    b = _answerer(BASH, settle=SETTLE)
    replies = _ask(b, "1")
    b.typed()  # the user's key during the hold
    assert replies == [(False, B.STALE)]
    deadline = time.monotonic() + SETTLE + 0.2
    while time.monotonic() < deadline:
        b.test_loop.run_once(max_timeout=0.05)
    assert b.typed_keys == []


# -- Codex CLI's approval dialog (cuewrap/answer/codex.py), as 0.171.0 draws it ---------------

AGAIN = "Yes, and don't ask again for commands that start with `touch made-by-the-tool`"
CODEX = [
    "",
    "  >_ OpenAI Codex (v0.171.0)",
    "",
    "› make a file",
    "",
    "• Running touch made-by-the-tool",
    "",
    "  Would you like to run the following command?",
    "",
    "  Environment: local",
    "",
    "  Reason: Make a file",
    "",
    "  $ touch made-by-the-tool",
    "",
    "",
    "› 1. Yes, proceed (y)",
    f"  2. {AGAIN} (p)",
    "  3. No, and tell Codex what to do differently (esc)",
    "",
    "  Press enter to confirm or esc to cancel",
    "",
]


def test_codexs_approval_is_read_without_its_shortcuts() -> None:
    from cuewrap.answer import codex

    d = codex.parse(CODEX)
    assert d is not None
    assert d.options == ("Yes, proceed", AGAIN, "No, and tell Codex what to do differently")
    assert d.selected == 0
    assert d.title == ("Would you like to run the following command? Environment: local"
                       " Reason: Make a file $ touch made-by-the-tool")  # fmt: skip
    moved = [ln.replace("› 1.", "  1.").replace("  2. Yes, and", "› 2. Yes, and") for ln in CODEX]
    assert codex.parse(moved) == d._replace(selected=1)
    cut = CODEX[17].rfind(" ", 0, 60)  # wrapped at a space, the rest indented
    wrapped = [*CODEX[:17], CODEX[17][:cut], "     " + CODEX[17][cut + 1 :], *CODEX[18:]]
    assert codex.parse(wrapped) == d
    edits = [ln.replace("run the following command", "make the following edits") for ln in CODEX]
    assert codex.parse(edits) is not None
    assert codex.CODEX.read("question", CODEX) is None  # Codex reports only permission waits
    assert P.parse_permission(CODEX) is None and codex.parse(BASH) is None


@pytest.mark.parametrize(
    "broken",
    [
        CODEX[:-2],  # no key hint
        [*CODEX[:-1], "• the model's text below the dialog"],
        [ln for ln in CODEX if "Would you like" not in ln],  # no question
        [ln for ln in CODEX if "3. No" not in ln],  # no refusal
        [ln.replace("1. Yes, proceed", "1. Yes, sure") for ln in CODEX],  # no one-time yes
        [ln.replace("› 1.", "  1.") for ln in CODEX],  # no selection
        [ln.replace("  3. No", "  4. No") for ln in CODEX],  # a gap in the numbers
        [*CODEX[:8], *[f"  line {i}" for i in range(70)], *CODEX[8:]],  # taller than it reads
    ],
)
def test_what_does_not_fit_is_no_codex_approval(broken: list[str]) -> None:
    from cuewrap.answer import codex

    assert codex.parse(broken) is None


def test_codexs_widening_options_and_buttons() -> None:
    from cuewrap.answer import codex

    for label in ("Yes, proceed", "Yes, just this once", *codex.NO):
        assert not codex.CODEX.widens("permission", label)
    for label in (AGAIN, "Yes, and allow this host in the future",
                  "Yes, grant these permissions for this session",
                  "No, and block this host in the future", "Something new"):  # fmt: skip
        assert codex.CODEX.widens("permission", label)
    a = _answerer(CODEX, app="codex", summary=True)
    assert a.wait_info()["options"] == ["Yes, proceed", AGAIN,
                                        "No, and tell Codex what to do differently"]  # fmt: skip
    assert [(x.key, x.label) for x in a.buttons(1)] == [("answer-1", "Yes"), ("answer-3", "No")]
    assert _ask(a, "2") == [(False, WIDENS)] and a.typed_keys == []
    assert _ask(a, AGAIN, token=a.book.current.token) == [(False, WIDENS)]
    assert _ask(a, AGAIN) == [] and a.typed_keys == [b"2"]  # its exact label with the pid


# -- Gemini CLI's approval box (cuewrap/answer/gemini.py), as 0.61.0 draws it -----------------

W = 118


def _box(rows: list[str]) -> list[str]:
    return ["╭" + "─" * W + "╮", *("│ " + r.ljust(W - 2) + " │" for r in rows), "╰" + "─" * W + "╯"]


GEMINI_BOX = [
    "? Shell  touch made-by-the-tool",
    "╭" + "─" * (W - 4) + "╮",
    "│ touch made-by-the-tool".ljust(W - 3) + "│",
    "╰" + "─" * (W - 4) + "╯",
    "Allow execution of [Shell]?",
    "",
    "● 1. Allow once",
    "  2. Allow for this session",
    "  3. No, suggest changes (esc)",
]
GEMINI = [" ▝▜▄     Gemini CLI v0.61.0", "", " > make a file", "", *_box(GEMINI_BOX), "", "", ""]


def test_geminis_approval_box_is_read() -> None:
    from cuewrap.answer import gemini

    d = gemini.parse(GEMINI)
    assert d is not None
    assert d.options == ("Allow once", "Allow for this session", "No, suggest changes")
    assert d.selected == 0
    assert d.title == "Shell touch made-by-the-tool Allow execution of [Shell]?"
    moved = [r.replace("● 1.", "  1.").replace("  2. Allow", "● 2. Allow") for r in GEMINI_BOX]
    assert gemini.parse(_box(moved)) == d._replace(selected=1)
    assert gemini.GEMINI.widens("permission", "Allow for this session")
    assert not gemini.GEMINI.widens("permission", "Allow once")
    assert not gemini.GEMINI.widens("permission", "No, suggest changes")
    assert codex_parse(GEMINI) is None and P.parse_permission(GEMINI) is None


def codex_parse(lines: list[str]) -> object:
    from cuewrap.answer import codex

    return codex.parse(lines)


@pytest.mark.parametrize(
    "broken",
    [
        [*GEMINI, " > the prompt under it"],  # not the last thing on the screen
        _box([r for r in GEMINI_BOX if "Allow execution" not in r]),  # no question
        _box([r for r in GEMINI_BOX if "3. No" not in r]),  # no refusal
        _box([r.replace("● 1.", "  1.") for r in GEMINI_BOX]),  # no selection
        _box([r for r in GEMINI_BOX if not r.startswith("?")]),  # no header
        _box(GEMINI_BOX)[1:],  # no top
        [*_box(GEMINI_BOX)[:-1], "╰" + "─" * 10 + "╯"],  # a bottom of another width
        _box([GEMINI_BOX[0], *[f"line {i}" for i in range(70)], *GEMINI_BOX[1:]]),  # too tall
    ],
)
def test_what_does_not_fit_is_no_gemini_approval(broken: list[str]) -> None:
    from cuewrap.answer import gemini

    assert gemini.parse(broken) is None


def test_a_gemini_notice_opens_the_answerable_wait_and_its_next_word_closes_it() -> None:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.generic import OwnProgram
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    reader = FakeReader(GEMINI)
    a = Answerer(loop, DecisionLog(None), OutputRing(30, 120), OwnProgram("gemini"),
                 summary=False, make_reader=lambda c, r: reader)  # type: ignore[arg-type,return-value]  # fmt: skip
    typed: list[bytes] = []
    a.type_keys = lambda data: typed.append(data)  # type: ignore[assignment,func-returns-value]
    a.settle = 0.0
    asks = F.ChildNotice("osc777", "Gemini CLI needs your attention", "Approval required | x", True)
    a.fact(asks, ())  # the engine opened no wait (the user looks): nothing
    assert not a.reading and a.book.current is None
    a.fact(F.ChildNotice("osc777", "Other", "Approval required", True), ("child",))
    assert not a.reading  # not its words
    a.fact(asks, ("child",))
    _loop_until(loop, lambda: a.book.current is not None)
    assert _ask(a, "2") == [(False, WIDENS)] and typed == []
    assert _ask(a, "1") == [] and typed == [b"1"]
    ended = F.ChildNotice("osc777", "Gemini CLI session complete", "Run finished | x", True)
    a.fact(ended, ())
    assert a.last is not None and "option 1: answered" in a.last and a.wait_info() is None


def test_a_dialog_that_cannot_be_read_is_refused_with_its_own_line() -> None:
    """Claude Code waits on a multi-select (checkboxes) or on several questions (tabs), or on
    a dialog taller than the screen: no token, and an answer says why, not "nothing"."""
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.generic import OwnProgram
    from cuewrap.answer.screen import OutputRing

    multi = [ln.replace("1. Blue", "1. [ ] Blue").replace("2. Red", "2. [ ] Red") for ln in ASK]
    loop = Loop()
    a = Answerer(loop, DecisionLog(None), OutputRing(30, 120), OwnProgram(), summary=False,
                 make_reader=lambda c, r: FakeReader(multi))  # type: ignore[arg-type,return-value]  # fmt: skip
    assert _ask(a, "1") == [(False, B.NOTHING)]  # no wait at all
    a.fact(F.ProgramStatus("blocked", "claude-code", "question", True), ("osc",))
    _loop_until(loop, lambda: not a.reading, seconds=10)
    assert a.book.current is None
    assert _ask(a, "1") == [(False, B.NOT_READ)]
    a.fact(F.ProgramStatus("working", "claude-code"), ())  # it closed: nothing open again
    assert _ask(a, "1") == [(False, B.NOTHING)]
