"""The guard's fallback (``cuewrap.term.fallback``): what still removes the guarded sequences
after the output tracker failed. Hand-written cases say what each class is; a plain
whole-input reference says what the incremental filter must give at every byte split."""

from __future__ import annotations

import random
import re

import pytest

from cuewrap.term.fallback import HEAD_MAX, NEUTRAL, GuardFallback, classify

pytestmark = pytest.mark.unit

N = NEUTRAL
CONFIGS = [(True, True), (True, False), (False, True), (False, False)]


def run(data: bytes, clipboard: bool = True, outside: bool = True) -> bytes:
    f = GuardFallback(clipboard=clipboard, outside=outside)
    return f.feed(data) + f.flush()


# -- what each class is -----------------------------------------------------------------------

CLIPBOARD = [
    b"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",  # a write
    b"\x1b]52;c;?\x1b\\",  # a read, ended by ST
    b"\x1b]052;c;YQ==\x07",  # leading zeros
    b"\x1b\x00]5\x012;c;YQ==\x07",  # controls the terminal ignores, before and inside
    b"\x1b]1337;Copy=:aGVsbG8=\x07",
    b"\x1b]1337;File=name=eA==;size=3:YWJj\x07",  # a download
    b"\x1b]1337;MultipartFile=name=eA==\x07",
    b"\x1b]5522;type=write\x07",  # kitty
    b"\x1b]5522;type=read\x1b\\",
    # the number as terminals read it (docs/terminal-guard.md#how-terminals-read-the-number)
    b"\x1b]52c;YQ==\x07",  # kitty: no ";" after the number
    b"\x1b]000052;c;YQ==\x07",  # xterm, VTE, foot: zeros past kitty's five digits
    b"\x1b]4294967348;c;YQ==\x07",  # foot: the number wraps at 2**32
    b"\x1b]1337Copy=:aGVsbG8=\x07",
]
NOTIFICATIONS = [
    b"\x1b]9;Build finished\x07",
    b"\x1b]9;12 o'clock\x07",  # text that begins with digits
    b"\x1b]777;notify;Title;Body\x07",
    b"\x1b]99;i=1:d=0;Hello\x1b\\",
    b"\x1b]9;1;100\x07",  # ConEmu's commands: every OSC 9 is guarded
    b"\x1b]9;12\x07",
    b"\x1b]777notify;Title;Body\x07",  # kitty's reading of the number
    b"\x1b]9text\x07",
    b"\x1b]99d=1;Hello\x07",
]
STATUS = [
    b"\x1b]7501;state=running\x07",
    b"\x1b]21337;x\x07",
    b"\x1b]9;4;1;50\x07",
    b"\x1b]9;4\x07",  # progress, without its arguments
]
TITLES = [b"\x1b]0;evil title\x07", b"\x1b]1;icon\x07", b"\x1b]2;title\x1b\\", b"\x1b]002;t\x07"]
TITLES += [b"\x1b]2title\x07", b"\x1b]title\x07", b"\x1b]2\x07", b"\x1b]00002;t\x07"]
TITLES += [b"\x1b]8ltitle\x07", b"\x1b]Licon\x1b\\"]  # xterm's l / L after the digits
# the new classes: the current directory, fonts, queries, iTerm2's commands
OTHERS = [
    b"\x1b]7;file://host/dir\x07",
    b"\x1b]50;?\x07",
    b"\x1b]50;fixed\x07",
    b"\x1b]10;?\x07",
    b"\x1b]11?\x07",  # kitty
    b"\x1b]4;1;?\x1b\\",
    b"\x1b]21;foreground=?\x07",
    b"\x1b]1337;SetUserVar=a=Yg==\x07",
    b"\x1b]1337;RequestAttention=yes\x07",
    b"\x1b]1337;StealFocus\x07",
]
OUTSIDE = NOTIFICATIONS + STATUS + TITLES + OTHERS
KEPT = [
    b"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\",  # hyperlinks
    b"\x1b]1337;File=inline=1;size=3:YWJj\x07",  # an inline image
    b"\x1b]1337;FilePart=YWJj\x07",  # a part of a multipart image (or of a removed download)
    b"\x1b]10;rgb:ff/ff/ff\x07",  # colours set and reset: inside the window
    b"\x1b]4;1;#ff0000\x07",
    b"\x1b]104\x07",
    b"\x1b]133;A\x07",  # shell integration marks
    b"\x1b[31mred\x1b[0m",
    b"\x1bP+q544e\x1b\\",  # a DCS
    "naïve 中文\r\n".encode(),
]


@pytest.mark.parametrize("seq", CLIPBOARD)
def test_the_clipboard_class(seq: bytes) -> None:
    assert run(b"a" + seq + b"b", outside=False) == b"a" + N + b"b"
    assert run(b"a" + seq + b"b", clipboard=False, outside=False) == b"a" + seq + b"b"


@pytest.mark.parametrize("seq", OUTSIDE)
def test_the_classes_outside_the_window(seq: bytes) -> None:
    assert run(b"a" + seq + b"b", clipboard=False) == b"a" + N + b"b"
    assert run(b"a" + seq + b"b", outside=False) == b"a" + seq + b"b"


@pytest.mark.parametrize("seq", KEPT)
def test_everything_else_passes_unchanged(seq: bytes) -> None:
    assert run(seq) == seq
    f = GuardFallback()
    assert b"".join(f.feed(seq[i : i + 1]) for i in range(len(seq))) + f.flush() == seq


def test_every_ending_of_a_sequence() -> None:
    """BEL and ST are part of it; CAN and SUB abort it (part of it too); an ESC not followed
    by a backslash ends it and begins the next sequence, which is judged on its own."""
    w = b"\x1b]52;c;YQ=="
    assert run(w + b"\x07x") == N + b"x"
    assert run(w + b"\x1b\\x") == N + b"x"
    assert run(w + b"\x18x") == N + b"x"
    assert run(w + b"\x1ax") == N + b"x"
    assert run(w + b"\x1b[1mx") == N + b"\x1b[1mx"
    assert run(w + b"\x1b]0;t\x07x") == N + N + b"x"
    kept = b"\x1b]8;;u"
    assert run(kept + w + b"\x07") == kept + N  # ESC CAN ends the kept one on the host
    # tmux's passthrough: the inner ESC ] 52 is a sequence of its own
    wrapped = b"\x1bPtmux;\x1b" + w + b"\x07\x1b\\"
    assert run(wrapped) == b"\x1bPtmux;\x1b" + N + b"\x1b\\"


def test_a_head_that_stays_undecided_is_removed() -> None:
    """A sequence is held until its class is known, never passed undecided: one still not
    known after HEAD_MAX bytes (File= arguments without their end) is removed, and what
    follows it is dropped up to its end."""
    long_args = b"\x1b]1337;File=" + b"a" * (HEAD_MAX + 10)
    f = GuardFallback(outside=False)
    assert f.feed(long_args[:100]) == b""  # held: not known yet
    assert f.feed(long_args[100:]) == N
    assert f.feed(b"still inside:YWJj\x07after") == b"after"
    assert f.removed == 1
    # an ESC followed by a runaway of controls: not held for ever either
    f = GuardFallback()
    assert f.feed(b"\x1b" + b"\x00" * (HEAD_MAX + 1)) == N
    assert f.feed(b"]52;c;YQ==\x07") == b"]52;c;YQ==\x07"  # text on the host now


def test_nothing_guarded_passes_everything_as_it_is() -> None:
    data = b"".join(CLIPBOARD + OUTSIDE + KEPT)
    f = GuardFallback(clipboard=False, outside=False)
    assert f.feed(data) is data


# -- every split against a plain reference -------------------------------------------------

_SKIP = re.compile(rb"[\x00-\x17\x19\x1c-\x1f\x7f]*")
_STOP = re.compile(rb"[\x07\x18\x1a\x1b]")


def reference(data: bytes, clipboard: bool, outside: bool) -> bytes:
    """The whole input at once: each ``ESC [C0…] ]`` sequence found with its end, judged on
    its whole content, removed (ESC CAN in its place) or kept; every other byte kept."""
    if not clipboard and not outside:
        return data
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] != 0x1B:
            out.append(data[i])
            i += 1
            continue
        m = _SKIP.match(data, i + 1)
        j = m.end() if m is not None else i + 1
        if j >= len(data) or data[j] != 0x5D:
            out += data[i:j]
            i = j
            continue
        stop = _STOP.search(data, j + 1)
        if stop is None:  # unfinished at the end: what is known of it decides
            head, end, final = data[i:], len(data), False
        else:
            t = stop.start()
            head, final = data[i:t], True
            if data[t] == 0x1B:
                end = t + 2 if data[t + 1 : t + 2] == b"\\" else t
            else:
                end = t + 1
        kind = classify(head, final, clipboard, outside)
        out += data[i:end] if kind == 0 else NEUTRAL
        i = end
    return bytes(out)


PIECES = (
    CLIPBOARD
    + OUTSIDE
    + KEPT
    + [
        b"plain text ",
        b"\x1b",  # a lone ESC (then whatever follows)
        b"\x1b\x1b]0;t\x07",
        b"\x1b]52;c;",  # unfinished: ended by whatever follows
        b"\x1b]9;4",
        b"\x1b]5",  # unfinished digits: the number is not known yet
        b"\x1b]52",
        b"\x1b]1337;",
        b"\x1b]11;",
        b"\x18",
        b"\x07",
        b"\x1b\\",
        "é".encode()[:1],  # half a character
    ]
)


def inputs() -> list[bytes]:
    rng = random.Random(28)
    made = [b"".join(PIECES)]
    # what ends the input matters too: a sequence ended by an ESC that begins nothing more
    made += [b"\x1b]52;c;YQ==\x1b", b"\x1b]8;;u\x1b", b"\x1b]9;4\x1b", b"\x1b]9;1", b"a\x1b"]
    for _ in range(60):
        made.append(b"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 8))))
    return made


@pytest.mark.parametrize(("clipboard", "outside"), CONFIGS)
def test_every_byte_split_gives_the_reference(clipboard: bool, outside: bool) -> None:
    for data in inputs():
        want = reference(data, clipboard, outside)
        for k in range(len(data) + 1):
            f = GuardFallback(clipboard=clipboard, outside=outside)
            got = f.feed(data[:k]) + f.feed(data[k:]) + f.flush()
            assert got == want, (data, k)
        f = GuardFallback(clipboard=clipboard, outside=outside)
        got = b"".join(f.feed(data[i : i + 1]) for i in range(len(data))) + f.flush()
        assert got == want, (data, "byte at a time")


def test_the_reference_is_not_vacuous() -> None:
    """The inputs hold sequences of every class and the reference removes them."""
    data = inputs()[0]
    assert reference(data, True, True).count(NEUTRAL) >= len(CLIPBOARD + OUTSIDE)
    assert reference(data, False, False) == data
