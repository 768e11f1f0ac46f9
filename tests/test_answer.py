"""The pure parts of answering (cuewrap/answer/: dialog.py, book.py, wire.py) and the control
socket's reader over a real socket (docs/answering.md)."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared import FakeReader

from cuewrap import facts as F
from cuewrap.answer import book as B
from cuewrap.answer import dialog as D
from cuewrap.answer import wire
from cuewrap.answer.control import ControlServer
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.effects import Action
from cuewrap.loop import Loop

pytestmark = pytest.mark.unit

BORDER = "─" * 100
# Pi 1.4.0's confirm and select (30x100), as pyte read them (tests/test_answer_pi.py's run)
CONFIRM = [
    "",
    BORDER,
    "",
    " Test",
    " Really?",
    "",
    " → Yes",
    "   No",
    "",
    " ↑↓ navigate  enter select  escape/ctrl+c cancel",
    "",
    BORDER,
    "/tmp/work",
    "0.0%/128k (auto)                                                   fake-model",
]
SELECT = [
    " earlier transcript line",
    BORDER,
    "",
    " Pick a color",
    "",
    "   Red",
    " → Green",
    "   Blue",
    "",
    " ↑↓ navigate  enter select  escape/ctrl+c cancel",
    "",
    BORDER,
]


def test_confirm_and_select_are_read() -> None:
    assert D.parse(CONFIRM) == D.Dialog("Test Really?", ("Yes", "No"), 0)
    assert D.parse(SELECT) == D.Dialog("Pick a color", ("Red", "Green", "Blue"), 1)


@pytest.mark.parametrize(
    "broken",
    [
        [ln for ln in SELECT if "→" not in ln],  # no selection
        [ln.replace("   Red", " → Red") for ln in SELECT],  # two selections
        [ln for ln in SELECT if "navigate" not in ln],  # no hint
        [ln for ln in SELECT if ln != BORDER],  # no border above the title
        [*SELECT[:8], "  (2/12)", *SELECT[8:]],  # a scrolled list
        [ln.replace("   Blue", "Blue") for ln in SELECT],  # an option out of the layout
        [ln for ln in SELECT if "Pick" not in ln],  # no title
    ],
)
def test_what_does_not_fit_the_layout_is_no_dialog(broken: list[str]) -> None:
    assert D.parse(broken) is None


ASK = [
    BORDER,
    "",
    "  Color",
    "",
    " Which color should the button",
    " be?",
    "",
    "  1. Blue",
    "     The calm default",
    "❯ 2. Red",
    "     Loud and urgent",
    "  3. Type something.",
    "",
    BORDER,
    "",
    " Enter to select · ↑/↓ to navigate · n to add notes · Esc to cancel · Ctrl+] to collapse",
]


def test_the_ask_question_is_read_and_checked() -> None:
    got = D.parse_ask(ASK)
    assert got == D.Dialog("Which color should the button be?", ("Blue", "Red"), 1)
    check = D.title_check("Which color should the button be?\0Blue\0Red", "k")
    assert D.ask_matches(got, check, "k")
    assert not D.ask_matches(got, D.title_check("Which color?\0Blue\0Red", "k"), "k")
    assert not D.ask_matches(got, check, "another key")
    assert D.parse(ASK) is None and D.parse_ask(SELECT) is None
    assert D.parse_ask([ln.replace("3. Type", "3. Tipe") for ln in ASK]) is None
    assert D.parse_ask([ln.replace("❯ 2.", "  2.") for ln in ASK]) is None  # no selection
    boxes = [ln.replace("1. Blue", "1. [ ] Blue").replace("2. Red", "2. [ ] Red") for ln in ASK]
    assert D.parse_ask(boxes) is None  # a multi-select


def test_the_bridge_cross_check() -> None:
    confirm = D.parse(CONFIRM)
    select = D.parse(SELECT)
    assert confirm is not None and select is not None
    key = "k" * 32

    def check(title: str, k: str = key) -> str:
        return D.title_check(title, k)

    assert D.matches_bridge(confirm, "confirm", check("Test"), key)
    assert not D.matches_bridge(confirm, "confirm", check("Other"), key)
    assert not D.matches_bridge(confirm, "confirm", check("Test", "another key"), key)
    assert not D.matches_bridge(confirm, "confirm", None, key)
    assert not D.matches_bridge(confirm, "confirm", "4:nothex", key)
    assert D.matches_bridge(select, "select", check("Pick a color"), key)
    assert not D.matches_bridge(select, "confirm", check("Pick a color"), key)  # not Yes / No
    assert not D.matches_bridge(select, "input", check("Pick a color"), key)
    wrapped = D.parse([*SELECT[:3], " Pick a", " color", *SELECT[4:]])
    assert wrapped is not None and D.matches_bridge(wrapped, "select", check("Pick a color"), key)


def test_choices() -> None:
    opts = ("Red", "Green", "Blue")
    assert D.resolve_choice(opts, "2") == 1
    assert D.resolve_choice(opts, "GREEN") == 1
    assert D.resolve_choice(opts, " blue ") == 2
    for bad in ("0", "4", "-1", "purple", "", "99999999999"):
        assert D.resolve_choice(opts, bad) is None
    assert D.resolve_choice(("A", "a"), "a") is None  # ambiguous


def test_keys() -> None:
    assert D.keys_for(0, 0) == b"\r"
    assert D.keys_for(0, 2) == b"\x1b[B\x1b[B\r"
    assert D.keys_for(2, 0) == b"\x1b[A\x1b[A\r"
    assert D.selector_keys({}) == D.DEFAULT_KEYS
    assert D.selector_keys(["not", "an", "object"]) == D.DEFAULT_KEYS
    remapped = D.selector_keys({"tui.select.up": "ctrl+k", "tui.select.down": ["ctrl+j"]})
    assert remapped == D.Keys(b"\x0b", b"\x0a", b"\r")
    assert D.selector_keys({"selectConfirm": "tab"}) == D.Keys(b"\x1b[A", b"\x1b[B", b"\t")
    why = D.selector_keys({"tui.select.down": "shift+alt+pageDown"})
    assert isinstance(why, str) and "cannot type" in why
    taken = D.selector_keys({"app.tools.expand": "down"})
    assert isinstance(taken, str) and "another action" in taken
    assert isinstance(D.selector_keys({"tui.select.up": "ctrl+o"}), str)  # expand's default


def _ticket(token: str = "t" * 32, wait: int = 1) -> B.Ticket:
    return B.Ticket(token, wait, "select", D.Dialog("Pick", ("Red", "Green", "Blue"), 0))


def test_a_token_is_single_use() -> None:
    book = B.Book()
    assert book.claim(None, "1") == B.NOTHING
    assert book.claim("x", "1") == B.STALE
    book.issue(_ticket())
    assert book.claim("t" * 32, "purple") == B.NO_OPTION  # a bad choice leaves it alive
    claim = book.claim("t" * 32, "green")
    assert claim == B.Claim(_ticket(), 1)
    assert book.claim("t" * 32, "green") == B.BUSY
    assert book.settle() == claim
    assert book.claim("t" * 32, "green") == B.STALE  # used
    assert book.claim(None, "green") == B.NOTHING


def test_a_token_dies_with_its_dialog_and_a_new_one_replaces_it() -> None:
    book = B.Book()
    book.issue(_ticket("a" * 32, 1))
    book.issue(_ticket("b" * 32, 2))  # another dialog (same title) opened
    assert book.claim("a" * 32, "1") == B.STALE
    assert book.kill() == _ticket("b" * 32, 2)
    assert book.claim("b" * 32, "1") == B.STALE
    assert book.claim(None, "1") == B.NOTHING


REQUEST = wire.request_line("2", "tok")


def test_wire_round_trip() -> None:
    assert wire.read_request(REQUEST) == wire.Request("2", "tok")
    assert wire.read_request(wire.request_line("Yes", None)) == wire.Request("Yes", None)
    assert wire.read_request(REQUEST[:-1]) == wire.Incomplete()
    assert wire.read_request(REQUEST + REQUEST) == "more than one request"
    assert wire.read_request(b"x" * wire.MAX_REQUEST) == "request too long"
    assert wire.read_request(b"[1]\n") == "not an object"
    assert wire.read_request(b'{"v": 2, "op": "answer", "choice": "1"}\n') == "unknown request"
    assert wire.read_reply(wire.reply_line(True)) == (True, "")
    said = wire.reply_line(True, "Pi took option 2")
    assert json.loads(said) == {"ok": True, "said": "Pi took option 2"}
    assert wire.read_reply(said) == (True, "Pi took option 2")
    # what the command prints is one printable line, bounded, or nothing
    for bad in ("two\nlines", "\x1b]0;t\x07", "x" * (wire.MAX_CHOICE + 1), 7):
        assert wire.read_reply(json.dumps({"ok": True, "said": bad}).encode()) == (True, "")
    assert wire.read_reply(wire.reply_line(False, B.STALE)) == (False, B.STALE)
    assert wire.read_reply(b"garbage") == (False, "the session gave no answer")


FUZZ = settings(
    max_examples=300, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=2 * wire.MAX_REQUEST),
        _json.map(lambda v: json.dumps(v).encode() + b"\n"),
        st.builds(
            lambda c, t: (
                json.dumps({"v": 1, "op": "answer", "choice": c, "token": t}).encode() + b"\n"
            ),
            _json,
            _json,
        ),
    )
)
def test_the_request_reader_never_raises_and_stays_bounded(data: bytes) -> None:
    got = wire.read_request(data)
    assert isinstance(got, wire.Request | wire.Incomplete | str)
    if isinstance(got, wire.Incomplete):
        assert b"\n" not in data and len(data) < wire.MAX_REQUEST
    if isinstance(got, wire.Request):
        assert len(data) <= wire.MAX_REQUEST
        assert 0 < len(got.choice) <= wire.MAX_CHOICE
        assert got.token is None or 0 < len(got.token) <= wire.MAX_TOKEN


@FUZZ
@given(st.lists(st.text(max_size=40), max_size=30), st.lists(st.text(max_size=20), max_size=3))
def test_the_dialog_reader_never_raises(lines: list[str], extra: list[str]) -> None:
    got = D.parse([*lines, *SELECT[:4], *extra, *SELECT[4:]])
    if got is not None:
        assert 1 <= len(got.options) <= D.MAX_OPTIONS
        assert 0 <= got.selected < len(got.options)
    D.selector_keys(dict(zip(lines, extra, strict=False)))


@FUZZ
@given(st.lists(st.integers(min_value=0, max_value=700), max_size=200))
def test_the_output_ring_keeps_the_last_bytes_as_whole_chunks(sizes: list[int]) -> None:
    """What the dialog reader replays (answer/screen.py): the last chunks fed, themselves, in
    order; never more than the ring's size unless the last chunk alone is; at least 3/4 of it,
    unless that is everything fed or the chunk before them would have passed the size."""
    from cuewrap.answer.screen import OutputRing

    ring, fed = OutputRing(10, 40, size=1000), []
    for i, n in enumerate(sizes):
        chunk = bytes([65 + i % 26]) * n
        ring.feed(chunk)
        fed.append(chunk)
        kept = ring.kept()
        assert kept and all(a is b for a, b in zip(kept, fed[-len(kept) :], strict=True))
        size = sum(map(len, kept))
        assert size <= 1000 or kept == [chunk]
        if size < 750 and len(kept) < len(fed):
            assert size + len(fed[-len(kept) - 1]) > 1000


# -- the control socket, for real -----------------------------------------------------------


def _serve(requests: list[bytes]) -> list[bytes]:
    """Each request on its own connection to a real control server; the replies."""
    loop = Loop()
    seen: list[wire.Request] = []

    def handler(req: wire.Request, reply: Callable[[bool, str], None]) -> None:
        seen.append(req)
        reply(False, B.NOTHING)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "1.sock")
        server = ControlServer(loop, DecisionLog(None), path, handler)
        assert server.start()
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        out = []
        for data in requests:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(path)
            c.sendall(data)
            if not data.endswith(b"\n"):
                c.shutdown(socket.SHUT_WR)
            c.setblocking(False)
            got = b""
            for _ in range(200):
                loop.run_once(max_timeout=0.01)
                try:
                    chunk = c.recv(4096)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                got += chunk
            c.close()
            out.append(got)
        server.close()
        assert not os.path.exists(path)
    return out


def test_the_control_socket_answers_one_request_per_connection() -> None:
    good, garbage, empty = _serve([REQUEST, b"\xff\xfe{{\n", b""])
    assert wire.read_reply(good) == (False, B.NOTHING)
    assert wire.read_reply(garbage) == (False, "not JSON")
    assert empty == b""  # closed without a request: closed, no reply


# -- the answerer, with a fake screen reader (the real one: tests/test_answer_pi.py) ---------

KEY = "k" * 32


def _answerer(lines: list[str]) -> tuple[Any, FakeReader, list[bytes], Loop]:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.pi import PiDialogs
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    reader = FakeReader(lines)
    typed: list[bytes] = []
    a = Answerer(loop, DecisionLog(None), OutputRing(14, 100),
                 PiDialogs(KEY, lambda: D.DEFAULT_KEYS), summary=False,
                 make_reader=lambda c, r: reader)  # type: ignore[arg-type,return-value]  # fmt: skip

    def type_keys(data: bytes) -> str | None:
        typed.append(data)
        return None

    a.type_keys = type_keys
    a.ring.feed(b"earlier output")
    a.fact(F.UiPromptStart("select", None, D.title_check("Pick a color", KEY)), ("ui",))
    wait_until_loop(loop, lambda: a.book.current is not None)
    assert reader.fed == [b"earlier output"]  # the ring replayed
    return a, reader, typed, loop


def wait_until_loop(loop: Loop, pred: Callable[[], bool], seconds: float = 5.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < end, "timed out"
        loop.run_once(max_timeout=0.05)


def _ask(a: Any, choice: str, token: str | None = None) -> list[tuple[bool, str]]:
    replies: list[tuple[bool, str]] = []
    a.request(wire.Request(choice, token), lambda ok, why: replies.append((ok, why)))
    return replies


def test_answerer_types_once_and_waits_for_the_dialog_to_close() -> None:
    a, _reader, typed, _loop = _answerer(SELECT)
    assert a.wait_info() == {"kind": "select", "token": a.book.current.token, "options": None,
                             "count": 3}  # fmt: skip
    replies = _ask(a, "blue")
    assert typed == [b"\x1b[B\r"] and replies == []  # from Green (selected) one down
    a.fact(F.UiPromptEnd("select"), ())  # (a bridge that does not say which it took)
    assert replies == [(True, B.took_line(3, None))]
    assert a.last is not None and "option 3: answered" in a.last
    assert _ask(a, "1") == [(False, B.NOTHING)]


@pytest.mark.parametrize(
    ("took", "ok", "line", "result"),
    [
        (3, True, "Pi took option 3", "answered"),
        (1, False, "Pi took option 1, not 3", "other option taken"),
        (0, False, "Pi closed the dialog without an option, not 3", "other option taken"),
    ],
)
def test_answerer_says_the_option_pi_took(took: int, ok: bool, line: str, result: str) -> None:
    """``ui_prompt_end`` says which option the dialog closed with: the answer's line, its
    exit (not the one asked for: failed), its decision-log record and /cue say it."""
    a, _reader, typed, _loop = _answerer(SELECT)
    records: list[dict[str, Any]] = []
    a.log.write = lambda kind, **f: records.append({"kind": kind, **f})  # type: ignore[method-assign]
    replies = _ask(a, "3")
    assert typed == [b"\x1b[B\r"]
    a.fact(F.UiPromptEnd("select", took), ())
    assert replies == [(ok, line)]
    [record] = [r for r in records if r["kind"] == "answer" and "result" in r]
    assert (record["option"], record["took"], record["result"]) == (3, took, result)
    assert a.last is not None and result in a.last


def test_answerer_refuses_when_the_screen_changed() -> None:
    a, reader, typed, _loop = _answerer(SELECT)
    reader.lines = [ln.replace("→ Green", "  Green").replace("   Red", " → Red") for ln in SELECT]
    assert _ask(a, "3") == [(False, B.NOT_SHOWN)]
    assert typed == []
    assert _ask(a, "3") == [(False, B.NOTHING)]  # the token was spent


def test_answerer_fails_when_the_dialog_does_not_close() -> None:
    a, _reader, typed, loop = _answerer(SELECT)
    replies = _ask(a, "2")
    assert typed == [b"\r"]
    wait_until_loop(loop, lambda: bool(replies), seconds=5.0)
    assert replies == [(False, B.NOT_CLOSED)]
    assert typed == [b"\r"]  # nothing more typed


def test_answerer_key_or_unsafe_input_or_another_dialog() -> None:
    a, _reader, typed, _loop = _answerer(SELECT)
    a.typed()  # the user pressed a key
    assert a.book.current is None and _ask(a, "1") == [(False, B.NOTHING)]

    a, _reader, typed, _loop = _answerer(SELECT)
    a.type_keys = lambda data: B.UNSAFE
    assert _ask(a, "1") == [(False, B.UNSAFE)]

    a, _reader, typed, _loop = _answerer(SELECT)
    old = a.book.current.token
    a.fact(F.UiPromptEnd("select"), ())
    a.fact(F.UiPromptStart("select", None, D.title_check("Pick a color", KEY)), ("ui",))
    assert _ask(a, "1", old) == [(False, B.STALE)]
    assert typed == []


def test_reload_new_and_exit_kill_the_token() -> None:
    for fact in (F.SessionShutdown("reload"), F.SessionStart("new", "id", None),
                 F.BridgeGone(), F.ChildExit(0, None)):  # fmt: skip
        a, _reader, typed, _loop = _answerer(SELECT)
        old = a.book.current.token
        a.fact(fact, ("ui",))
        assert a.book.current is None and a.wait_info() is None
        assert _ask(a, "1", old) == [(False, B.STALE)] and typed == []


class _ChildStub:
    """The child's input as ``Reactions.type_to_child`` reads it: its input path, what waits
    for the PTY (a list here), the PTY."""

    def __init__(self, focus: Any, fd: int, host_focus: str | None) -> None:
        from cuewrap.relay.inputpath import InputPath

        self.input = InputPath(focus)
        self.input.host_focus = host_focus
        self.waiting: list[bytes] = []
        self.open = True
        self.master_fd = fd

    def queue(self, data: bytes) -> None:
        self.waiting.append(data)

    def write_whole(self, data: bytes) -> str | None:
        from cuewrap.relay.childinput import ChildInput

        return ChildInput.write_whole(self, data)  # type: ignore[arg-type]


class _RelayStub:
    """What ``Reactions.type_to_child`` reads: the child's input (its input path, the queue,
    the PTY), the output path, the loop."""

    def __init__(self, focus: Any, fd: int, host_focus: str | None = None) -> None:
        from cuewrap.loop import Loop

        self.child = _ChildStub(focus, fd, host_focus)
        self._to_child = self.child.waiting
        self.loop = Loop()
        self.modes: set[int] = set()
        # the output path's word on focus: cuewrap does not tell this child its presence
        self.path = SimpleNamespace(telling=False, child_mode=self.child_mode)

    def child_mode(self, mode: int) -> bool:
        return mode in self.modes

    def _still_out(self) -> None:
        from cuewrap.relay.reactions import Reactions

        Reactions._still_out(self)  # type: ignore[arg-type]


def test_keys_are_typed_only_at_a_safe_point_of_the_input() -> None:
    from cuewrap.relay.reactions import Reactions
    from cuewrap.term.focus import FocusFilter

    r, w = os.pipe()
    try:
        focus = FocusFilter()
        stub = _RelayStub(focus, w)
        focus.feed(b"\x1b")  # the user's escape, held: it may begin a sequence
        assert Reactions.type_to_child(stub, b"\r") == B.UNSAFE  # type: ignore[arg-type]
        focus.flush()
        focus.feed(b"\x1b[200~half a paste")
        assert Reactions.type_to_child(stub, b"\r") == B.UNSAFE  # type: ignore[arg-type]
        focus.feed(b"\x1b[201~")
        stub._to_child.append(b"the user's keys not yet written")
        assert Reactions.type_to_child(stub, b"\r") is not None  # type: ignore[arg-type]
        stub._to_child.clear()
        assert Reactions.type_to_child(stub, b"\x1b[B\r") is None  # type: ignore[arg-type]
        assert os.read(r, 100) == b"\x1b[B\r"  # one write, whole
    finally:
        os.close(r)
        os.close(w)


def test_after_its_keys_a_child_hears_the_focus_out_again() -> None:
    """A program that takes a key as focus (Gemini CLI) hears the terminal's last focus-out
    again 0.1 s after cuewrap's keys; not when the terminal said focused, or the child did
    not turn focus reporting on."""
    from cuewrap.relay.reactions import REFOCUS_AFTER, Reactions
    from cuewrap.term.focus import FocusFilter

    r, w = os.pipe()
    try:
        for host, modes, heard in (("out", {1004}, [b"\x1b[O"]), ("in", {1004}, []),
                                   (None, {1004}, []), ("out", set(), [])):  # fmt: skip
            stub = _RelayStub(FocusFilter(), w, host)
            stub.modes = modes
            assert Reactions.type_to_child(stub, b"1") is None  # type: ignore[arg-type]
            assert os.read(r, 100) == b"1" and stub._to_child == []
            end = stub.loop.clock() + REFOCUS_AFTER + 0.3
            while stub.loop.clock() < end:
                stub.loop.run_once(max_timeout=0.05)
            assert stub._to_child == heard, (host, modes)
    finally:
        os.close(r)
        os.close(w)


def test_a_key_while_the_dialog_is_read_means_no_token_for_it() -> None:
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.pi import PiDialogs
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    reader = FakeReader(SELECT)
    a = Answerer(loop, DecisionLog(None), OutputRing(14, 100),
                 PiDialogs(KEY, lambda: D.DEFAULT_KEYS), summary=False,
                 make_reader=lambda c, r: reader)  # type: ignore[arg-type,return-value]  # fmt: skip
    released: list[bool] = []
    a.fact(F.UiPromptStart("select", None, D.title_check("Pick a color", KEY)), ("ui",))
    assert a.reading
    a.when_ready(lambda: released.append(True))  # a notification waits for the token
    a.typed()
    assert released == [True] and not a.reading  # it goes at once, without one
    for _ in range(10):
        loop.run_once(max_timeout=0.03)
    assert a.book.current is None and a.wait_info() is None


def test_after_a_dialog_given_up_the_next_one_is_answerable() -> None:
    """An Ask overlay that was never found on the screen closes; the next dialog is read."""
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.pi import PiDialogs
    from cuewrap.answer.screen import OutputRing

    loop = Loop()
    reader = FakeReader(["nothing like a dialog"])
    a = Answerer(loop, DecisionLog(None), OutputRing(14, 100),
                 PiDialogs(KEY, lambda: D.DEFAULT_KEYS), summary=False,
                 make_reader=lambda c, r: reader)  # type: ignore[arg-type,return-value]  # fmt: skip
    a.fact(F.ToolStart("call-1", "ask_user_question", None, "5:abc"), ())
    a.fact(F.AskBlocked(True), ("ask:call-1",))
    assert a.reading
    a.typed()  # given up
    assert not a.reading
    a.fact(F.AskBlocked(False), ())
    a.fact(F.ToolEnd("call-1", "ask_user_question", False), ())
    reader.lines = SELECT
    a.fact(F.UiPromptStart("select", None, D.title_check("Pick a color", KEY)), ("ui",))
    wait_until_loop(loop, lambda: a.book.current is not None)


def test_answer_buttons_have_exactly_their_keys_and_answer_for_the_cue_they_were_made_for() -> None:
    """The buttons of a needs-input notification (its ``actions``): ``answer-1`` … one per
    option, numbers for a select without summaries; a click answers only on those keys, with
    the token remembered for that cue."""
    a, _reader, typed, _loop = _answerer(SELECT)
    assert a.buttons(7) == (Action("answer-1", "1"), Action("answer-2", "2"),
                            Action("answer-3", "3"))  # fmt: skip
    for key in ("default", "answer-4", "answer-0", "answer-1 ", "answer-01", "yes", ""):
        a.button(7, key)  # not an answer button: nothing happens
    assert typed == [] and a.last is None and a.book.current is not None
    a.button(8, "answer-1")  # no buttons were made for cue 8
    assert typed == [] and a.last is not None and "stale token" in a.last
    a.button(7, "answer-3")
    assert typed == [b"\x1b[B\r"]  # from Green (selected) one down
    a.button(7, "answer-3")  # the cue's token was used
    assert typed == [b"\x1b[B\r"]


def test_without_a_token_no_buttons_and_a_click_is_refused() -> None:
    a, _reader, _typed, _loop = _answerer(SELECT)
    a.typed()  # the token dies
    assert a.buttons(1) == ()
    a.button(1, "answer-1")
    assert a.last is not None and "stale token" in a.last
