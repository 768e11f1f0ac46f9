"""After the output tracker failed, cuewrap's own bytes still go only where the output is at
rest (``term/rest.py``, docs/terminal-guard.md#when-the-tracker-fails): the rest watch against
a plain byte-at-a-time reference of the terminal's parser at every split, and a real relay
whose tracker raises (``cuewrap/wiring/_raising.py``) holding a title mark until the child's
open sequence or character ends."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest
from shared import PtyChild, read_host

from cuewrap.host import HostTerminal
from cuewrap.loop import Loop
from cuewrap.relay.inject import Injector
from cuewrap.relay.outputpath import FallbackPath, OutputPath
from cuewrap.relay.relay import Relay
from cuewrap.term.rest import RestWatch
from cuewrap.wiring._raising import RaisingTracker

pytestmark = pytest.mark.unit

_GROUND, _ESC, _CSI, _ESCINT, _OSC, _STR = range(6)


def reference(data: bytes) -> bool:
    """At rest after ``data``: a terminal's parser, one byte at a time (ECMA-48 as xterm
    reads it: ESC anywhere begins a sequence, CAN and SUB abort one, BEL ends an OSC but not
    a DCS, a non-ASCII byte ends an escape or a CSI and is text)."""
    state, need = _GROUND, 0
    for b in data:
        if state != _GROUND:
            if b == 0x1B:
                state = _ESC
                continue
            if b in (0x18, 0x1A):
                state = _GROUND
                continue
            if state == _ESC:
                if b < 0x20 or b == 0x7F:
                    continue
                if b == 0x5B:
                    state = _CSI
                elif b == 0x5D:
                    state = _OSC
                elif b in b"PX^_":
                    state = _STR
                elif 0x20 <= b <= 0x2F:
                    state = _ESCINT
                elif b < 0x80:
                    state = _GROUND
                else:
                    state = _GROUND  # the byte is text: below
            elif state in (_CSI, _ESCINT):
                low = 0x40 if state == _CSI else 0x30
                if low <= b <= 0x7E:
                    state = _GROUND
                    continue
                if b >= 0x80:
                    state = _GROUND  # the byte is text: below
            elif state == _OSC:
                if b == 0x07:
                    state = _GROUND
                continue
            else:
                continue
            if state != _GROUND or b < 0x80:
                continue
        if b == 0x1B:
            state, need = _ESC, 0
        elif 0x80 <= b <= 0xBF:
            need = max(need - 1, 0)
        elif 0xC2 <= b <= 0xDF:
            need = 1
        elif 0xE0 <= b <= 0xEF:
            need = 2
        elif 0xF0 <= b <= 0xF4:
            need = 3
        else:
            need = 0
    return state == _GROUND and need == 0


PIECES = [
    b"plain ",
    "naïve 中文 😀".encode(),
    "中".encode()[:2],  # half a character
    "😀".encode()[:3],
    b"\x1b[31m",
    b"\x1b[1;2",  # an unfinished CSI
    b"\x1b[?2026h",
    b"\x1b[1$",  # an intermediate
    b"\x1b(B",
    b"\x1b(",
    b"\x1b]0;title\x07",
    b"\x1b]8;;https://example.com\x1b\\",
    b"\x1b]8;;unfinished",
    "\x1b]2;titre é\x07".encode(),
    b"\x1bP+q544e\x1b\\",
    b"\x1bPq#0;2;0;0;0\x07still inside",  # BEL does not end a DCS
    b"\x1b_apc",
    b"\x1b\x00\x01",  # controls after ESC
    b"\x1b",
    b"\x1b\\",
    b"\x18",
    b"\x1a",
    b"\x07",
    b"\x1b\xc3\xa9",  # non-ASCII after ESC: text
    b"\x1b[1\xe4",
    b"\r\n",
]


def inputs() -> list[bytes]:
    rng = random.Random(50)
    made = [b"".join(PIECES), *PIECES]
    for _ in range(300):
        made.append(b"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 7))))
    return made


def test_every_split_agrees_with_the_parser() -> None:
    for data in inputs():
        want = reference(data)
        for k in range(len(data) + 1):
            w = RestWatch()
            w.feed(data[:k])
            assert w.feed(data[k:]) == want == w.safe, (data, k)
        w = RestWatch()
        for i in range(len(data)):
            w.feed(data[i : i + 1])
        assert w.safe == want, (data, "byte at a time")


def test_the_inputs_are_not_vacuous() -> None:
    results = [reference(d) for d in inputs()]
    assert results.count(True) > 50 and results.count(False) > 50


def test_started_inside_something_it_waits_for_the_stream_to_say_where_it_is() -> None:
    """The tracker failed inside a sequence of unknown kind: no text, no BEL, no ST makes it
    rest; an ESC, CAN or SUB does, once what it begins ends."""
    w = RestWatch(known=False)
    assert not w.safe
    assert not w.feed(b"more of it\x07 and text")
    assert not w.feed(b"\x1b[3")  # an ESC: a CSI now, still open
    assert w.feed(b"1mred")
    w = RestWatch(known=False)
    assert w.feed(b"rest of a string\x18text")
    # nothing of this kind keeps anything long
    w = RestWatch()
    w.feed(b"\x1b]8;;" + b"x" * 100_000)
    assert len(w._open) <= 3 and not w.safe


@pytest.fixture
def failing_relay() -> Iterator[tuple[Relay, int]]:
    """A relay writing to a pipe (the host) whose output tracker raises at its first chunk;
    the pipe's read end."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    r, w = os.pipe()
    os.set_blocking(r, False)
    host = HostTerminal(0, w)
    errors: list[str] = []
    relay = Relay(
        Loop(),
        PtyChild(master),  # type: ignore[arg-type]
        host,
        focus=None,
        path=OutputPath(
            RaisingTracker(),
            fallback=(True, True),
            report=lambda where, exc: errors.append(where),
        ),
        injector=Injector(Loop(), host.write),
        on_error=lambda where, exc: errors.append(where),
    )
    yield relay, r
    assert "tracker" in errors
    for fd in (r, w, master, slave):
        os.close(fd)


MARK = b"\x1b]2;[?] pi\x07"


@pytest.mark.parametrize(
    ("opened", "closed"),
    [
        (b"see \x1b]8;;https://example.com", b"\x1b\\link"),  # a hyperlink (kept)
        (b"\x1b[38;2;255", b";0;0mred"),  # a CSI
        ("abc 中".encode()[:5], "中".encode()[2:] + b"def"),  # a UTF-8 character
        (b"\x1bP+q54", b"4e\x1b\\"),  # a DCS
    ],
)
def test_a_mark_waits_for_the_open_sequence_to_end(
    failing_relay: tuple[Relay, int], opened: bytes, closed: bytes
) -> None:
    relay, r = failing_relay
    relay._output(opened)
    path = relay.reactions.path
    assert isinstance(path, FallbackPath) and path.rest is not None
    assert read_host(r) == opened
    relay.injector.inject(MARK)
    assert read_host(r) == b""  # held: the host's parser is inside the child's sequence
    relay._output(closed)
    assert read_host(r) == closed + MARK  # at rest after it


def test_at_rest_the_mark_goes_at_once(failing_relay: tuple[Relay, int]) -> None:
    relay, r = failing_relay
    relay._output(b"done\r\n")
    assert read_host(r) == b"done\r\n"
    relay.injector.inject(MARK)
    assert read_host(r) == MARK


def test_a_tracker_that_fails_inside_a_sequence_leaves_the_mark_waiting(
    failing_relay: tuple[Relay, int],
) -> None:
    """Where the tracker left the stream inside a sequence, the rest watch starts not at
    rest, and stays so through text, until the stream says where it is."""
    relay, r = failing_relay
    relay.injector.set_safe(False)  # the tracker's last word: inside something
    relay._output(b"rest of an OSC string")
    relay.injector.inject(MARK)
    assert read_host(r) == b"rest of an OSC string"
    relay._output(b"\x07\x1b[0m")  # its BEL is not known to end it; the ESC's CSI is
    assert read_host(r) == b"\x07\x1b[0m" + MARK
