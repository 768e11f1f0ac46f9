"""The tracker's byte-at-a-time reference (``Ref``), the policies the tests hand it, the
generated streams and ``check_against_reference``: shared by the tests of cuewrap.term.tracker
(tests/test_tracker*.py). ``Ref`` is written from the model in the tracker's docstring."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from cuewrap.facts import ChildProgress, ProgramStatus
from cuewrap.term.clipboard import GUARDED_WHATS, ClipboardSequence, GuardedSequence
from cuewrap.term.content import (
    REMOVE,
    REPLACEMENT,
    UNDECIDED,
    apc_class,
    csi_could_query,
    csi_query,
    dcs_class,
)
from cuewrap.term.notices import NoticeParser, NoticeProtocol, protocol_of
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.tracker import (
    CAP,
    QUIET_MODES,
    Bell,
    ModeChange,
    OutputEvent,
    OutputTracker,
    Scan,
    TitleChange,
)

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


def examples(n: int) -> settings:
    """hypothesis: ``n`` examples, no deadline (the reference is slow on a long stream)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


#: hypothesis for the tests whose examples are whole large streams (the reference is slow on
#: them, and a stream may be larger than hypothesis likes)
LARGE_EXAMPLES = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def feed_all(
    t: OutputTracker,
    chunks: list[bytes],
    each: Callable[[bytes, Scan, bytes], None] | None = None,
) -> tuple[bytes, list[OutputEvent]]:
    """Feed ``chunks`` to ``t``, then flush: all its output and events. ``each(chunk, scan,
    output so far)`` is called after each chunk's scan."""
    out = bytearray()
    events: list[OutputEvent] = []
    for c in chunks:
        s = t.feed(c)
        out += s.out
        events += s.events
        if each is not None:
            each(c, s, bytes(out))
    out += t.flush()
    return bytes(out), events


# --- the reference model -----------------------------------------------------------------------

GROUND, ESCS, ESCINT, CSI, OSC, OSCESC, STR, STRESC = range(8)
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
        self.intro = 0  # the string's introducer (P X ^ _)
        self.strbuf = bytearray()  # its content so far
        self.c2 = -1  # a C2 byte in ground text here: the first of a C1 control?

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
        content = bytes(self.content)
        if not final and re.fullmatch(rb"[0-9]*", content):
            return "maybe", ""
        maybe = None
        for code, payload in number_readings(content):
            cls, what = guarded_reading(code, payload, final)
            if cls == "clip":
                return cls, what
            if cls == "maybe" and maybe is None:
                maybe = (cls, what)
        return maybe

    # -- the clipboard guard: any OSC 52, any terminator, removed whole ----------------------

    def classify(self, final: bool) -> tuple[str, bool, str]:
        """The open OSC's content so far: ("clip" | "maybe" | "no", read, what)."""
        g = self.guarded(final)
        if g is not None and g[0] == "clip":
            return g[0], False, g[1]
        if self.clip is None:
            return ("maybe", False, g[1]) if g is not None else ("no", False, "")
        content = bytes(self.content)
        if not final and re.fullmatch(rb"[0-9]*", content):
            return "maybe", False, ""
        found: tuple[str, bool, str] | None = None
        maybe = ("maybe", False, g[1]) if g is not None else None
        for code, payload in number_readings(content):
            got = clip_reading(code, payload, final)
            if got[0] == "maybe" and maybe is None:
                maybe = got
            elif got[0] == "clip" and (found is None or got[1]):
                found = got
        return maybe or found or ("no", False, "")

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
        elif s in (STR, STRESC):
            got = self.str_class(s == STRESC)
            if got is not None and got[0] == REMOVE:  # dropped to its end
                self.removed.append((self.start, n))
                if not self.ok_before:
                    self.replaced[self.start] = b"\x1b\x18"
            elif got is not None and got[0] == UNDECIDED:
                self.removed.append((self.start, n))  # undecided: held
        elif s == CSI:
            if (
                self.guard
                and self.framed
                and not self.bad
                and n - self.start <= CAP
                and csi_could_query(bytes(self.params), bytes(self.inter))
            ):
                self.removed.append((self.start, n))  # a possible query: held
        elif s == GROUND and self.c2 == n - 1 and self.guard and self.sync:
            self.removed.append((n - 1, n))  # the first byte of a possible C1 control: held

    # -- content: queries, DCSs, kitty file reads, C1 controls (cuewrap.term.content) ---------

    def str_class(self, final: bool) -> tuple[int, str] | None:
        """The open DCS / APC inside content with the guard on: (class, what), else None."""
        if not (self.guard and self.framed) or self.intro not in b"P_":
            return None
        classify = dcs_class if self.intro == ord("P") else apc_class
        return classify(bytes(self.strbuf), final)

    def str_end(self, end: int) -> None:
        """The open DCS / APC ended at ``end`` (exclusive): removed when it is to be."""
        got = self.str_class(True)
        if got is None or got[0] != REMOVE:
            return
        self.events.append(GuardedSequence(got[1], end - self.start))
        self.removed.append((self.start, end))
        if not self.ok_before:
            self.replaced[self.start] = b"\x1b\x18"

    def ground_c1(self, i: int, b: int) -> None:
        """A ground byte: a C1 control written as UTF-8 (C2 80..9F) inside content is
        replaced by U+FFFD."""
        if 0x80 <= b <= 0x9F and self.c2 == i - 1 and self.guard and self.sync:
            self.removed.append((i - 1, i + 1))
            self.replaced[i - 1] = REPLACEMENT
            self.events.append(GuardedSequence("c1", 2))
        self.c2 = i if b == 0xC2 else -1

    def begin(self, i: int) -> None:
        self.framed = self.sync
        self.ok_before = self.state == GROUND and self.u8 == 0
        self.state = ESCS
        self.start = i
        self.u8 = 0

    def step(self, i: int, b: int) -> None:
        s = self.state
        if s == GROUND:
            self.ground_c1(i, b)
            if b == 0x1B:
                self.begin(i)
            elif b == 0x07:  # a bare bell; inside content (a frame) the guard removes it
                if self.guard and self.sync:  # replaced with CAN (no-op in ground)
                    self.removed.append((i, i + 1))
                    self.replaced[i] = b"\x18"
                    self.events.append(GuardedSequence("bel", 1))
                else:
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
        if s == STRESC:  # a DCS / APC to remove ended by this ESC: ST, or a bare ESC
            if b == 0x5C:
                self.str_end(i + 1)
                self.state = GROUND
                return
            self.str_end(i - 1)
            self.begin(i - 1)
            self.ok_before = True  # taken out: the host is at a safe point
            self.step(i, b)
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
            elif s == STR and (got := self.str_class(True)) is not None and got[0] == REMOVE:
                self.state = STRESC
            else:
                self.begin(i)
            return
        if b in (0x18, 0x1A):
            if s == OSC:
                self.clip_end(i + 1)
            elif s == STR:
                self.str_end(i + 1)
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
                self.intro = b
                self.strbuf = bytearray()
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
        elif s == STR:
            self.strbuf.append(b)
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
        if self.guard and self.framed and not self.bad and end - self.start <= CAP + 1:
            what = csi_query(p, bytes(self.inter), final)
            if what is not None:  # a query inside content: removed whole
                self.events.append(GuardedSequence(what, end - self.start))
                self.removed.append((self.start, end))
                if not self.ok_before:
                    self.replaced[self.start] = b"\x1b\x18"
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
        guarded = None
        for code, payload in number_readings(c):
            cls, what = guarded_reading(code, payload, True)
            if cls == "clip":
                guarded = (what, payload)
                break
        if guarded is not None and self.framed:  # content the child renders: never a fact
            if guarded[0] in ("osc0", "osc2"):
                self.title = guarded[1].decode("utf-8", "replace")
                self.events.append(TitleChange(self.title, True))
            return
        if not semi:
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


# --- how terminals read an OSC's number (docs/terminal-guard.md), one terminal at a time --------


def _kitty_reading(c: bytes) -> tuple[int, bytes]:
    """kitty (vt-parser.c, dispatch_osc): up to 5 digits (none: 0), then a ";" if there is one."""
    code, i = 0, 0
    while i < 5 and i < len(c) and c[i : i + 1].isdigit():
        code = code * 10 + c[i] - 0x30
        i += 1
    if c[i : i + 1] == b";":
        i += 1
    return code, c[i:]


def _xterm_reading(c: bytes) -> tuple[int, bytes] | None:
    """xterm (misc.c, do_osc): every digit (at most 65535), then ";", the end, or l / L / I."""
    mode, i = 0, 0
    while i < len(c) and c[i : i + 1].isdigit():
        mode = mode * 10 + c[i] - 0x30
        if mode > 65535:
            return None
        i += 1
    nxt = c[i : i + 1]
    if nxt in (b"", b";"):
        return mode, c[i + 1 :]
    if nxt == b"l":
        return 2, c[i + 1 :]  # a window title
    if nxt in (b"L", b"I"):
        return 1, c[i + 1 :]  # the icon's
    return None


def _foot_reading(c: bytes) -> tuple[int, bytes] | None:
    """foot (osc.c, osc_dispatch): digits up to ";" or the end into an unsigned 32-bit number."""
    param = 0
    for i in range(len(c)):
        if c[i] == 0x3B:
            return param, c[i + 1 :]
        if not c[i : i + 1].isdigit():
            return None
        param = (param * 10 + c[i] - 0x30) % 2**32
    return param, b""


def _strict_reading(c: bytes) -> tuple[int, bytes] | None:
    """VTE, WezTerm, Ghostty, Alacritty: the number before ";" (VTE: leading zeros too)."""
    ps, _, rest = c.partition(b";")
    if ps and ps.isdigit() and len(ps) <= 16 and int(ps) <= 65535:
        return int(ps), rest
    return None


def number_readings(c: bytes) -> list[tuple[int, bytes]]:
    """Every (number, payload) a terminal reads the OSC content ``c`` as."""
    got = [_kitty_reading(c), _xterm_reading(c), _foot_reading(c), _strict_reading(c)]
    out: list[tuple[int, bytes]] = []
    for r in got:
        if r is not None and r not in out:
            out.append(r)
    return out


TITLES_ETC = {0: "osc0", 1: "osc1", 2: "osc2", 7: "osc7", 9: "osc9", 50: "osc50", 99: "osc99"}
TITLES_ETC |= {777: "osc777", 7501: "osc7501", 21337: "osc21337"}
QUERIES = [4, 5, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22]
ITERM_OWN = (b"Copy=", b"File=", b"MultipartFile=", b"FilePart=", b"FileEnd")


def guarded_reading(code: int, payload: bytes, final: bool) -> tuple[str, str]:
    """("clip" | "maybe" | "no", what) for a guarded class read as ``code``."""
    if code in TITLES_ETC:
        return "clip", TITLES_ETC[code]
    if code in QUERIES:
        what = f"osc{code} query"
        return ("clip", what) if b"?" in payload else ("no" if final else "maybe", what)
    if code == 1337:
        if any(payload.startswith(k) for k in ITERM_OWN):
            return "no", ""
        if not final and any(k.startswith(payload) for k in ITERM_OWN):
            return "maybe", "osc1337"
        return "clip", "osc1337"
    return "no", ""


def clip_reading(code: int, rest: bytes, final: bool) -> tuple[str, bool, str]:
    """("clip" | "maybe" | "no", read, what) for a clipboard sequence read as ``code``."""
    if code == 52:
        _, semi2, pd = rest.partition(b";")
        if final or (semi2 and pd):
            return "clip", bool(semi2) and pd[:1] == b"?", "osc52"
        return "maybe", False, ""
    if code == 5522:
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
    if code != 1337:
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
    st.sampled_from([b"h", b"l", b"m", b"u", b"H", b"p", b"c", b""])
    | st.sampled_from([b"n", b"t", b"q", b"x", b"S", b"y", b"|"]),
)
OSC_TOKENS = st.builds(
    osc_token,
    st.sampled_from([b"0", b"2", b"1", b"10", b"7501", b"9", b"133", b"x", b"777", b"99"])
    | st.sampled_from([b"52", b"052", b"5\x002", b"5", b"520", b"1337", b"01337", b"133"])
    | st.sampled_from([b"5522", b"55", b"05522", b"7", b"50", b"11", b"4", b"000052", b""]),
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
            b"RequestAttention=yes",
            b"1;?",
            b"file://h/d",
        ]
    ),
    st.sampled_from([b"\x07", ST, ST, b"", b"\x1b", b"\x18"]),
)
# the number as terminals read it: without ";", zero-padded past kitty's five digits, none,
# wrapped at 2**32 (foot), xterm's l / L after the digits, C0 inside
SPELLED_OSC = st.builds(
    lambda ps, body, term: b"\x1b]" + ps + body + term,
    st.sampled_from([b"", b"2", b"0", b"52", b"052", b"000052", b"0000002", b"777", b"99"])
    | st.sampled_from([b"9", b"7", b"50", b"11", b"4", b"1337", b"5522", b"8", b"12", b"5"])
    | st.sampled_from([b"4294967348", b"4294967298", b"00000", b"5\x002", b"0\x01"]),
    st.sampled_from([b"c;ZXZpbA==", b"c;?", b"notify;T;B", b"title", b"d=1;x", b"?", b"ltitle"])
    | st.sampled_from([b"Ltitle", b";x", b"", b";?", b"Copy=:QUJD", b"SetUserVar=a=Yg==", b"St"])
    | st.sampled_from([b"FilePart=QUJD", b"File=inline=1:QQ", b"1;?", b";1;rgb:0/0/0", b"2;c;?"])
    | st.sampled_from([b"file://h/d", b";file://h/d", b"type=write", b"\x00c;QQ==", b"Pi"]),
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
        # what content may not carry (cuewrap.term.content)
        b"\x1b[6n",
        b"\x1b[?6n",
        b"\x1b[14t",
        b"\x1b[14;2t",
        b"\x1b[22;0t",
        b"\x1b[>q",
        b"\x1b[?u",
        b"\x1b[?4m",
        b"\x1b[2$p",
        b"\x1b[?2026$p",
        b"\x1b[\n5n",
        b"\x1b\x00[c",
        b"\x1bP$qm\x1b\\",
        b"\x1bP+q544e\x1b\\",
        b"\x1bP+q",
        b"\x1bPtm",
        b"\x1bP\x00tmux;\x1b\x1b[6n\x1b\\",
        b"\x1bP0;1;0q#0;2;0;0;0\x07-\x1b\\",
        b"\x1bP1;2",
        b"\x1bP@kitty-cmd{}\x18",
        b"\x1b_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\x1b\\",
        b"\x1b_Gt=s,s=1;bmFtZQ==\x1b",
        b"\x1b_Ga=T,f=100;AAAA",
        b"\x1b_Ga=T,t=d;QUJD\x1b\\",
        b"\x1b_Ga=d\x1b\\",
        b"\x1b_G",
        b"\x1b_",
        b"\xc2\x9b6n",
        b"\xc2\x9d52;c;QQ==\x07",
        b"\xc2",
        b"\x9b",
        b"\xc2\xa9",
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
        b"\x1b]52",
        b"\x1b]52c",
        b"\x1b]000005",
        b"\x1b]1337;Set",
        b"\x1b]11;",
        b"\x1b]2t",
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
TOKENS = st.one_of(TEXT, TEXT, CSI_TOKENS, OSC_TOKENS, SPELLED_OSC, MISC, MISC)
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
    t = OutputTracker(
        StatusGuard(consume=consume), notices=notices, clipboard=clip, guard_frames=guard
    )

    def each(c: bytes, s: Scan, out: bytes) -> None:
        assert want_out.startswith(out)
        assert s.safe == safe_at[len(out)], (out, c)
        assert t.safe == s.safe

    out, events = feed_all(t, chunks, each)
    assert t.safe == safe_at[len(out)]
    assert out == want_out
    assert events == ref.events
    assert t.modes.on == ref.modes
    assert t.modes.off == ref.modes_off
    assert t.modes.kitty_keyboard_depth == ref.depth
    assert t.modes.modify_other_keys == ref.mok
    assert t.title == ref.title
    if not consume and not (notices and notices.answer) and clip is None and not guard:
        assert bytes(out) == data


CLIPS = st.builds(Clip, st.booleans(), st.booleans())
