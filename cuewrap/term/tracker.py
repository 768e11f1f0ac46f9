"""Incremental output scanner (child PTY -> host stdout), on the relay's hot path.

It reports what the child did to the terminal (DEC private modes, kitty keyboard stack,
modifyOtherKeys, title, bare BEL, OSC 7501 program status, changes of the OSC 9;4 progress
state), optionally removes Pi's OSC 7501 reports from the output, and tells the relay whether
the end of each output chunk is a safe point to inject bytes (ground state, not inside a UTF-8
character; docs/design.md#delivery).

Speed: plain text and uninteresting sequences (SGR, cursor moves) are skipped in C with
``bytes.find``/``rfind`` (memchr on a rare byte first); Python only looks at the few
sequences that matter and at the end of each chunk. No per-byte Python loop on text. Two
short paths skip the per-sequence work when C-level searches find nothing in a chunk that could
give an event or a cut: a chunk with hyperlinks like Pi's frames (one regex search: only CSI,
quiet toggles, hyperlinks whose BELs all end them), and a chunk without any OSC like a TUI's
colours and cursor moves (memchr for BEL and ``> < =``, a regex scan for RIS / DECSTR and one
for a ``?`` that does not begin a quiet toggle); then: the quiet toggles' last states, the end
of the chunk, done, and the chunk goes out as it came (not copied). The relay sleeps between
chunks, so each runs on cold caches and costs several times its hot-loop time: every call and
object touched counts (``scripts/bench_filters`` measures both).

Structure: this module is the scan (the paths below, where a chunk's sequences are, its end);
each kind of sequence goes to a guard that decides pass, cut or hold: ``term/modeguard.py``
(private CSIs, resets), ``term/oscguard.py`` (OSCs by number, then ``term/statusguard.py`` and
``term/noticeguard.py``), ``term/clipguard.py`` (clipboard and guarded OSCs),
``term/contentguard.py`` (content's queries, DCSs, APCs, C1 controls, bells),
``term/streamguard.py`` (a sequence decided at a chunk's end, to its end); ``term/assembly.py``
writes the output. They share the scan's state (``term/scanstate.py``): what a cut earlier in
the chunk did to the host's state decides whether a later sequence may be removed.

The parser model (a simplified DEC/ECMA-48 parser on UTF-8 bytes, as in P. Williams'
"A parser for DEC's ANSI-compatible video terminals"; 8-bit C1 bytes are NOT controls):

- ESC always starts a new sequence, aborting whatever sequence was open.
- CAN (0x18) and SUB (0x1A) abort any open sequence (back to ground).
- After ESC: C0 controls are executed and DEL ignored (still after ESC); 0x20-0x2F starts an
  intermediate escape ended by 0x30-0x7E; ``[`` CSI, ``]`` OSC, ``P X ^ _`` DCS/SOS/PM/APC
  strings; any other 0x30-0x7E ends a two-byte escape; a non-ASCII byte abandons the ESC and
  is text.
- CSI: 0x20-0x3F parameter/intermediate bytes, 0x40-0x7E final; C0 executed, DEL ignored;
  a non-ASCII byte aborts it and is text.
- OSC: ended by BEL, or by ESC (``ESC \\`` is ST; any other ESC aborts it); C0 ignored.
- DCS/SOS/PM/APC: ended only by ESC (ST) or CAN/SUB; BEL is content.
- Ground: a BEL is a :class:`Bell`; UTF-8 lead bytes C2-DF/E0-EF/F0-F4 expect 1/2/3
  continuation bytes (80-BF); any other byte (controls, ESC included) ends a pending character.

Events are reported only for well-formed sequences: ``CSI ? Pm h|l``, ``CSI > flags u``,
``CSI < n u``, ``CSI = flags ; mode u``, ``CSI > 4 ; n m``, ``OSC 0|2 ; title``,
``OSC 7501 ; state=…``. A sequence longer than 4097 bytes gives no event and is never
removed (its parse buffer would have overflowed had it been split). Sequences with C0
controls between ESC and their second byte give no event (their effect on safety is
tracked). RIS (``ESC c``) and DECSTR do not reset the tracked modes: the restore sequence may
then undo modes that are already off, which is harmless.

Focus ownership (``own_focus``, docs/design.md#presence): the child's ``CSI ? 1004 h|l`` still set
the tracked mode 1004 (it decides whether focus reports are forwarded to the child) but a complete
one at a safe point is removed from the output; one that cannot be removed and turns the mode off, a
RIS and a DECSTR are reported as :class:`FocusMayBeOff` (cuewrap then turns reporting on again at
the next safe point).

OSC 7501 consumption: a complete report is removed only when the stream right before it is
at a safe point, so removing it never changes what the host terminal's parser sees around
it. Only a possible report at the very end of a chunk is held back (``ESC``, ``ESC ]``, …,
an unterminated ``ESC ] 7501 ; …`` up to 4 KiB, or such a report waiting for the ``\\`` of
its ST), and only when it would be removable; :meth:`OutputTracker.flush` releases it.

Program Status query (``answer_query``, generic mode; docs/generic-mode.md): the child's
``ESC ] 7501 ; ? ST`` (or BEL) is reported as a :class:`StatusQuery` and taken out of the output
like a report (at a safe point; a possible one at the end of a chunk is held), so that the relay
answers it on the child's input before the host terminal can see it or answer what follows it.

A child's own notifications (OSC 9 / 777 / 99, :mod:`cuewrap.term.notices`) are reported as
:class:`ChildNotification` events and removed under the same conditions, but only when the
``notices`` policy given at construction says so at that moment (generic mode, user away,
host terminal does not show that protocol); their unfinished prefixes are held likewise.

Clipboard guard (``clipboard`` policy, :mod:`cuewrap.term.clipboard`, docs/terminal-guard.md):
every clipboard sequence — OSC 52, iTerm2's ``OSC 1337 ; Copy=`` and file downloads (not inline
images) — in any spelling terminals accept (``ESC [C0…] ] 0…52 ; …``, any terminator: BEL, ST, a
bare ESC, CAN, SUB) is reported as a :class:`ClipboardSequence` and reaches the host only when
the policy says so when it is first known to be one (its header, e.g. ``52 ; Pc ;`` and the
first payload byte, or its end). Removal is always whole, of any length: at a safe point the
bytes go; elsewhere they are replaced by ``ESC CAN`` (what the sequence's ESC did to the host's
parser, then ground). One whose header is not complete at a chunk end is held (never released
undecided, not even by :meth:`OutputTracker.flush`); one decided at a chunk end streams on,
passed or dropped, until its terminator, with no 4 KiB limit.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import NamedTuple

from cuewrap.term import sequences as seq
from cuewrap.term.assembly import assemble
from cuewrap.term.clipboard import (
    ClipboardPolicy,
)
from cuewrap.term.clipguard import ClipGuard
from cuewrap.term.contentguard import CONTENT_AT, ContentGuard
from cuewrap.term.grammar import (
    ESCB,
    find_all,
    seq_end,
    synthetic,
    u8_complete,
)
from cuewrap.term.modeguard import QUIET_MODES as QUIET_MODES
from cuewrap.term.modeguard import RIS, RIS_C0, ModeGuard
from cuewrap.term.modes import ModeState
from cuewrap.term.noticeguard import NoticeGuard
from cuewrap.term.notices import NoticePolicy
from cuewrap.term.openseq import OpenSequence
from cuewrap.term.oscguard import OscGuard
from cuewrap.term.outevents import Bell as Bell  # the tracker's events
from cuewrap.term.outevents import Events, OutputEvent
from cuewrap.term.outevents import FocusMayBeOff as FocusMayBeOff
from cuewrap.term.outevents import ModeChange as ModeChange
from cuewrap.term.outevents import TitleChange as TitleChange
from cuewrap.term.scanstate import (
    CAP,
    ESC_HEAD,
    FRAME_OFF,
    FRAME_ON,
    Cuts,
    ScanState,
)
from cuewrap.term.statusguard import StatusGuard
from cuewrap.term.streamguard import StreamGuard

_ESC_C0_OSC = re.compile(rb"\x1b[\x00-\x17\x19\x1c-\x1f\x7f]+\]")  # ESC, C0s, then ]
ST = b"\x1b\\"
# each quiet mode: the head of its toggle, where its h / l is
_QUIET_LAST = ((2026, b"\x1b[?2026", 7), (25, b"\x1b[?25", 5))
# Everything in a chunk that can give an event, a cut or a state change other than a quiet
# toggle: a private CSI that is not a quiet toggle, an OSC other than a hyperlink (OSC 8), RIS,
# DECSTR (any CSI with an intermediate), an ESC followed by a control character; and what the
# sequence guard removes from content (term/content.py): a CSI with a C0 control inside or
# ending in c n t x (the queries without a marker), a DCS, an APC. A chunk with none of these
# (Pi's frames) skips the per-sequence work in one C-level search (see OutputTracker.feed).
_INTERESTING = re.compile(
    rb"\x1b(?:\[(?:[<=>]|\?(?!2026[hl]|25[hl])|[\x30-\x3f]*+[\x00-\x17\x19\x1c-\x2f\x7fcntx])"
    rb"|\](?!8;)|[c\x00-\x17\x19\x1c-\x1f\x7fP_])"
)
_C1_OR_END = re.compile(rb"\xc2(?:[\x80-\x9f]|\Z)")  # a C1 control, or its first byte at the end
# a "?" that does not begin a quiet toggle (a private CSI that matters when ESC [ is before it)
_NOT_QUIET = re.compile(rb"\?(?!2026[hl]|25[hl])")
_FLOOD_PATH = True  # the short path for chunks without OSC (tests turn it off to compare)
_LINK_END = b"\x1b]8;;\x07"  # an empty hyperlink: its BEL ends it (Pi ends every line with one)

_PRIVATE_CSI = tuple((b"\x1b[" + c, c) for c in (b"?", b">", b"<", b"="))
_first = itemgetter(0)


class Scan(NamedTuple):
    """Result of :meth:`OutputTracker.feed`.

    ``out``: the bytes to write now. ``events``: in stream order. ``safe``: at the end of
    ``out`` the stream is in ground state and not inside a UTF-8 character. A named tuple:
    one is made per output chunk, and it costs a third of a frozen dataclass.
    """

    out: bytes
    events: list[OutputEvent]
    safe: bool


# Scan(...) and Osc(...) run the named tuple's Python-level __new__: on cold caches (the relay
# sleeps between chunks) that costs several microseconds a chunk more than making the tuple
# directly
_new = tuple.__new__
_SYNC = seq.MODE_SYNC_OUTPUT  # (a module global: one lookup less per chunk)


# --- the tracker --------------------------------------------------------------------------


class OutputTracker(ScanState):
    """Incremental scanner of the child's output. See the module docstring for the model.

    Attributes (all tracked from the output only):

    - ``status``: the guard of the child's OSC 7501 reports and queries
      (:class:`~cuewrap.term.statusguard.StatusGuard`: taken out, passed, held; what the host
      was shown), given by the caller (the mode's settings), or one that takes reports out.
    - ``modes``: the terminal modes the child set (:class:`~cuewrap.term.modes.ModeState`:
      DEC private modes on and off, the kitty keyboard stack, modifyOtherKeys) and the bytes
      that undo them (``modes.restore_sequence()``).
    - ``title``: the child's last OSC 0/2 title, or None.
    """

    def __init__(
        self,
        status: StatusGuard | None = None,
        notices: NoticePolicy | None = None,
        *,
        own_focus: bool = False,
        clipboard: ClipboardPolicy | None = None,
        guard_frames: bool = False,
        content_only: bool = False,
        marked_titles: tuple[bytes, ...] = (),
        answer_child: bool = False,
    ) -> None:
        # the mode builds it (wiring/session.py); none given: reports taken out, nothing else
        self.status = status if status is not None else StatusGuard()
        # generic mode, the preset says so (opencode): the child's DECRQM 1004 and kitty's
        # OSC 99 query are cuewrap's to answer (term/childqueries.py; the OSC 99 one, and the
        # child's notifications under the ``notices`` policy: term/noticeguard.py)
        self.answer_child = answer_child
        self.notices = NoticeGuard(notices, answer_child=answer_child)
        # cuewrap owns the host's focus reporting: the child's CSI ? 1004 h/l are tracked
        # (they decide what is forwarded to it) but taken out of the output
        self.own_focus = own_focus
        self.modes = ModeState()
        self.title: str | None = None
        self.progress: int | None = None  # the child's last OSC 9;4 state (ConEmu progress)
        # the scan's state, shared with its guards (term/scanstate.py says what each is)
        self._pend = self.held_bytes = self._u8 = b""
        self._safe = True
        self._clip = clipboard  # the clipboard policy: None passes every OSC 52 unseen
        self._frame0 = self._sync = False
        # guard.sequences = own: titles, notifications and status reports inside a frame are
        # content the child renders, removed whole (docs/terminal-guard.md)
        self._guard = guard_frames
        # the child writes none of its own (generic mode, e.g. aider): all of its output counts
        # as inside a frame, for the guard and for facts
        self._all_content = content_only
        self._content_base = content_only  # what content_off goes back to
        self._bare_cuts: dict[int, int] = {}
        self._reps: dict[int, bytes] = {}
        self._stream: OpenSequence | None = None
        self._base = 0
        # the guards by sequence kind that work on this scan's state (term/scanstate.py)
        self._clipg = ClipGuard(self, clipboard, marked_titles)
        self._contentg = ContentGuard(self)
        self._modeg = ModeGuard(self, self.modes, own_focus, answer_child)
        self._oscg = OscGuard(self, self._clipg)
        self._streamg = StreamGuard(self)

    @property
    def content_only(self) -> bool:
        """All of the child's output counts as content it renders (docs/terminal-guard.md)."""
        return self._all_content

    def content_from_now(self) -> None:
        """From the next byte on, every sequence in the output is content the child renders
        (Pi mode with the bridge, after the provenance mark: ``term/provenance.py``); the
        child's own arrive through :meth:`feed_own`."""
        self._all_content = True

    def content_off(self) -> None:
        """Back to the frame rule (the bridge that carried the child's own writes is gone:
        ``reactions.Reactions.provenance_lost``): a sequence between frames is the child's again."""
        self._all_content = self._content_base

    @property
    def at_rest(self) -> bool:
        """Nothing is open, pending or held: the stream is in ground between two sequences and
        characters (where :meth:`feed_own` may put the child's own write)."""
        return self._safe and not self.held_bytes and not self._pend and self._stream is None

    def feed_own(self, data: bytes) -> Scan:
        """The child's own write (complete sequences, ``term/provenance.py``), read as the
        child's, never as content, at a point where the stream is :attr:`at_rest`."""
        all_content, sync = self._all_content, self._sync
        self._all_content = self._sync = False
        try:
            return self.feed(data)
        finally:
            self._all_content, self._sync = all_content, sync

    @property
    def held(self) -> bool:
        """True while bytes are held back (call :meth:`flush` after a short quiet time)."""
        return bool(self.held_bytes)

    @property
    def safe(self) -> bool:
        """Safe point at the end of everything released so far (``feed`` and ``flush``)."""
        return self._safe

    # -- public ----------------------------------------------------------------------------

    def feed(self, data: bytes) -> Scan:
        """Scan the next output chunk; see :class:`Scan` for what comes back.

        The path is chosen up front, from C-level searches: the rest of a clipboard or guarded
        sequence decided before (:meth:`_feed_stream`), text alone (:meth:`_feed_text`), a
        chunk in which nothing can give an event or a cut (:meth:`_feed_plain`, or right here
        for one that ends a frame: Pi's frames; a TUI's colours and cursor moves,
        :meth:`_plain_flood`), and everything else (:meth:`_feed_general`)."""
        if self._stream is not None:
            return self._feed_stream(data)
        pend = self._pend
        held = self.held_bytes
        if pend or held:
            if held:
                data = held + data  # what goes out when nothing is cut: work[base:]
                self.held_bytes = b""
            work = pend + data
            base = len(pend)  # work[:base] was released already
            self._pend = b""
        elif not data:
            return Scan(b"", [], self._safe)
        else:
            work = data
            base = 0
        k_last = work.rfind(ESCB)
        self._frame0 = self._sync
        if k_last < 0:
            if work.find(b"\x07") < 0 and not (
                self._guard and (self._sync or self._all_content) and work.find(b"\xc2") >= 0
            ):  # no sequence open before it, since pend is empty
                return self._feed_text(work)
            return self._feed_general(work, data, base, k_last, False)
        if self._bare_cuts:
            self._bare_cuts = {}
        if work.find(b"]", 1) >= 0:
            # a chunk with an OSC like Pi's frames: plain when no sequence gives an event or a
            # cut and every BEL ends an empty hyperlink (Pi ends each line with one); only quiet
            # toggles change state. Inline, not a call: on cold caches (the relay sleeps between
            # Pi's frames) each call on this path costs microseconds (scripts/bench_filters
            # --pi-only, paced; docs/benchmarks.md)
            plain = _INTERESTING.search(work) is None and work.count(b"\x07") == work.count(
                _LINK_END
            )
        else:
            plain = self._plain_flood(work, base)
        if (
            plain
            and self._guard
            and (i := work.find(b"\xc2")) >= 0
            and _C1_OR_END.search(work, i) is not None
        ):
            plain = False  # a C1 control (or half of one) that may be content
        if plain:
            if work.endswith(FRAME_OFF):  # how TUIs end a frame (Pi's, 98 %): inline, as above
                self._sync = False
                modes = self.modes
                if 2026 not in modes.off:
                    modes.set(2026, False)
                i = work.rfind(b"\x1b[?25")
                if i >= 0:
                    on = work[i + 5] == 0x68  # h
                    if 25 not in (modes.on if on else modes.off):
                        modes.set(25, on)
                self._u8 = b""
                self._safe = True
                return _new(Scan, (data, [], True))
            scan = self._feed_plain(work, data, k_last)
            if scan is not None:
                return scan
        return self._feed_general(work, data, base, k_last, plain)

    def flush(self) -> bytes:
        """Release held bytes unchanged (they begin an unfinished sequence: not safe)."""
        held = self.held_bytes
        if not held:
            return b""
        if self._guard and (held == b"\xc2" or ESC_HEAD.match(held) is not None):
            return b""  # held inside content: a possible query, DCS, APC or C1 control
        out = self._clipg.release(held)  # a possible clipboard sequence: never undecided
        if out is not None:
            return out
        self.held_bytes = b""
        # held bytes follow a safe point (see hold_from), so nothing else is pending
        self.pending(held)
        return held

    def end(self) -> bytes:
        """The output ended: :meth:`flush`; what stays held is dropped (an unfinished sequence
        in content, never shown), so that :attr:`at_rest` says where the terminal stands."""
        out = self.flush()
        if self.held_bytes and not self._pend:
            self.held_bytes = b""
        return out

    # -- the paths of feed --------------------------------------------------------------------

    def _feed_text(self, work: bytes) -> Scan:
        """Text only: nothing to look at but whether it ends inside a UTF-8 character."""
        tail = work[-3:] if len(work) >= 3 else (self._u8 + work)[-3:]
        self._u8 = tail
        self._safe = safe = tail[-1] < 0x80 or u8_complete(tail)
        return _new(Scan, (work, [], safe))

    def _plain_flood(self, work: bytes, base: int) -> bool:
        """No OSC at all (a TUI drawing with colours and cursor moves only): plain when there is
        no BEL, no CSI > < =, no RIS / DECSTR when cuewrap owns the focus reporting, and every
        CSI ? is a quiet toggle. Mostly C-level searches: memchr for the rare bytes (text with
        them is looked at only there), a regex scan for RIS and one for a "?" that does not
        begin a quiet toggle. (Looking at each "?" in Python costs more: the relay sleeps
        between chunks, and on cold caches every Python step counts.)"""
        if not (
            _FLOOD_PATH
            and work.find(b"\x07") < 0
            and ((i := work.find(b">", 2)) < 0 or not find_all(work, b"\x1b[>", i))
            and ((i := work.find(b"<", 2)) < 0 or not find_all(work, b"\x1b[<", i))
            and ((i := work.find(b"=", 2)) < 0 or not find_all(work, b"\x1b[=", i))
        ):
            return False
        if (
            self._guard
            and (self._sync or self._all_content or work.find(FRAME_ON) >= 0)
            and CONTENT_AT.search(work) is not None
        ):
            return False  # a query, a DCS or an APC that may be content (term/content.py)
        if self.own_focus and (
            RIS.search(work, base) is not None
            or (work.find(b"!", base) >= 0 and work.find(b"\x1b[!p", base) >= 0)
        ):
            return False
        i = work.find(b"?", 2)
        if i >= 0:
            m = _NOT_QUIET.search(work, i)
            while m is not None:
                i = m.start()
                if work.startswith(b"\x1b[", i - 2):  # a private CSI, not quiet
                    return False
                m = _NOT_QUIET.search(work, i + 1)  # a "?" in text: go on
        return True

    def _feed_plain(self, work: bytes, data: bytes, k_last: int) -> Scan | None:
        """A plain chunk that does not end a frame (``feed`` takes those itself): the quiet
        toggles' last states and the end, and it goes out as it came (not copied). None: it ends
        inside a sequence that is not a CSI (the general end)."""
        n = len(work)
        if work.find(b"?", 2) >= 0:  # every CSI ? here is a complete quiet toggle
            modes = self.modes
            for mode, head, at in _QUIET_LAST:
                i = work.rfind(head)
                if i >= 0:
                    on = work[i + at] == 0x68  # h
                    if mode == 2026:
                        self._sync = on
                    if mode not in (modes.on if on else modes.off):
                        modes.set(mode, on)
        e = seq_end(work, k_last, n)
        if e == n:  # the usual end: a complete sequence
            self._u8 = b""
            self._safe = True
            return _new(Scan, (data, [], True))
        if e >= 0:
            tail = work[max(e, n - 3) :]
            self._u8 = tail
            self._safe = safe = u8_complete(tail)
            return _new(Scan, (data, [], safe))
        if work[k_last + 1 : k_last + 2] == b"[":  # cut inside a CSI: it is pending
            if self._guard and (self._sync or self._all_content):
                return None  # inside content it may be a query to hold (the general end)
            self._pend = work[k_last:] if n - k_last <= CAP else synthetic(work[k_last:])
            self._u8 = b""
            self._safe = False
            return _new(Scan, (data, [], False))
        return None

    def _feed_general(self, work: bytes, data: bytes, base: int, k_last: int, plain: bool) -> Scan:
        """Every sequence that can give an event or a cut, the bells, the end, the cuts."""
        events: Events = []
        cuts: Cuts = []
        self._base = base  # work[:base] was released before (_content looks from there)
        if not plain:
            if k_last >= 0:
                self._sequences(work, base, events, cuts)
            self._contentg.bells(work, base, events, cuts)
            if self._guard:
                self._contentg.scan(work, base, k_last, events, cuts)
        out_end, tail_rep = self._end(work, base, k_last)
        out = assemble(work, data, base, out_end, tail_rep, cuts, self._reps)
        if not events:
            return _new(Scan, (out, [], self._safe))
        if len(events) > 1:
            events.sort(key=_first)
        return _new(Scan, (out, [ev for _, ev in events], self._safe))

    def _sequences(
        self,
        work: bytes,
        base: int,
        events: Events,
        cuts: Cuts,
    ) -> None:
        """The private CSIs (in stream order), RIS / DECSTR, and the OSCs but hyperlinks."""
        find = work.find
        starts: list[int] = []
        quiet_seen: dict[int, int] = {}  # quiet mode -> position of its last change
        for needle, last in _PRIVATE_CSI:
            i = find(last, 2)
            if i >= 0:
                if needle == b"\x1b[?":
                    found = self._modeg.dec_starts(work, i, quiet_seen)
                else:
                    found = find_all(work, needle, i)
                # state changes must be applied in stream order
                starts = sorted(starts + found) if starts else found
        for j in starts:
            self._modeg.private_csi(work, j, base, events, quiet_seen, cuts)
        # an OSC can begin only where there is a "]"; with the clipboard guard, the first ESC
        # followed by a control character (an OSC written ESC C0… ]) is looked for then
        i = find(b"]", 1)
        c0_needed = i >= 0 and (self._clip is not None or self._guard)
        c0 = -1
        if self.own_focus:
            c0 = self._modeg.resets(work, base, events, c0_needed)
        elif c0_needed:
            c0m = RIS_C0.search(work, base)
            c0 = c0m.start() if c0m is not None else -1
        if i < 0:
            return
        # hyperlinks (OSC 8; Pi writes ~10 a frame) say nothing to cuewrap
        found = [j for j in find_all(work, b"\x1b]", i) if not work.startswith(b"8;", j + 2)]
        c0s = [] if c0 < 0 else [(m.start(), m.end()) for m in _ESC_C0_OSC.finditer(work, c0)]
        if not c0s:
            for j in found:
                self._oscg.read(work, j, base, events, cuts)
            return
        # in stream order: a kitty write's data follows its start's decision
        for j, c in sorted([(j, -1) for j in found] + c0s):
            if c < 0:
                self._oscg.read(work, j, base, events, cuts)
            else:
                self._clipg.osc(work, j, c, base, events, cuts)

    def _end(self, work: bytes, base: int, k_last: int) -> tuple[int, bytes]:
        """The end of the chunk: ground, inside a sequence (pending), or a possible clipboard or
        guarded sequence, report or notification to hold. Returns (end of the output, bytes to
        append)."""
        n = len(work)
        e = seq_end(work, k_last, n) if k_last >= 0 else 0
        if e >= 0:  # ground at the end
            if self._guard and work[-1] == 0xC2 and e < n and self.framed(work, n - 1):
                return self._contentg.hold_c1(work, base, k_last, e)
            tail = work[max(e, n - 3) :] if k_last >= 0 else (self._u8 + work)[-3:]
            self._u8 = tail
            self._safe = u8_complete(tail)
            return n, b""
        if self._guard and k_last >= base:
            content = self._contentg.end(work, k_last, base, n)
            if content is not None:
                return content
        if k_last + 1 < n and work[k_last + 1] == 0x5B:
            # cut inside a CSI (how a flood's chunks are cut): never a clipboard sequence, never
            # a report or notification to hold; it is pending
            self.pending(work[k_last:])
            return n, b""
        if (self._clip is not None or self._guard) and k_last >= base:
            clip = self._clipg.end(work, k_last, base, n)
            if clip is not None:
                return clip
        hold_from = self.hold_from(work, k_last, base, n)
        if hold_from >= 0:
            self.held_bytes = work[hold_from:]
            _, tail = self.state_before(work, hold_from)  # ground: hold_from checked
            self._u8 = tail
            self._safe = True
            return hold_from, b""
        pend_from = k_last
        if k_last == n - 1:
            k2 = work.rfind(ESCB, 0, k_last)
            if k2 >= 0 and work[k2 + 1] == 0x5D and seq_end(work, k2, k_last) < 0:
                pend_from = k2  # an OSC waiting for the "\" of its ST
        self.pending(work[pend_from:])
        return n, b""

    def _feed_stream(self, data: bytes) -> Scan:
        """The rest of a sequence decided at a chunk end (``term/streamguard.py``), then the
        scan of what follows it."""
        if not data:
            return Scan(b"", [], self._safe)
        out, ev, rest = self._streamg.step(data)
        if ev is None:
            return Scan(out, [], self._safe)
        scan = self.feed(rest)
        return Scan(out + scan.out if out else scan.out, [ev, *scan.events], scan.safe)
