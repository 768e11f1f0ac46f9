"""The private CSIs the output tracker reads (``term/tracker.py``): the child's DEC private
modes (``CSI ? Pm h|l``, the quiet toggles a TUI writes around every frame as state only), the
kitty keyboard stack and modifyOtherKeys (kept in ``term/modes.py``), and with ``own_focus``
its focus reporting (``CSI ? 1004 h|l`` taken out at a safe point; RIS, DECSTR and a turn-off
left in reported as :class:`~cuewrap.term.outevents.FocusMayBeOff`); the child's DECRQM 1004
(``term/childqueries.py``). It works on the scan's shared state (``term/scanstate.py``)."""

from __future__ import annotations

import re

from cuewrap.term import sequences as seq
from cuewrap.term.childqueries import DECRQM_FOCUS, ChildQuery
from cuewrap.term.grammar import csi_at, find_all, ints
from cuewrap.term.modes import TRACKED_MODES, ModeState
from cuewrap.term.outevents import Events, FocusMayBeOff, ModeChange
from cuewrap.term.scanstate import CAP, Cuts, ScanState

_PARAMS = re.compile(rb"[0-9;]*")
RIS = re.compile(rb"\x1bc")
# RIS, or an ESC followed by a control character (with the clipboard guard: the rare start of
# an OSC written ESC C0… ]); one literal-prefix search finds both
RIS_C0 = re.compile(rb"\x1b[c\x00-\x17\x19\x1c-\x1f\x7f]")
_DEC_ONE = re.compile(rb"\x1b\[\?([0-9]{1,5})([hl])")
# Modes a TUI toggles around every frame (Pi: CSI ?2026 h/l, CSI ?25 l): tracked as state but
# not reported as events, and their single-mode form is found by C-level searches only — the
# per-occurrence Python work would cost a quarter of the relay's speed on TUI output.
QUIET_MODES = frozenset({2026, 25})
_QUIET_HEADS = (b"2026h", b"2026l", b"25h", b"25l")  # what follows CSI ? in a quiet toggle

# Events are immutable values: share one instance per value for the frequent ones (creating a
# frozen dataclass costs ~1 us).
_MODE_EVENTS = {(m, on): ModeChange(m, on) for m in TRACKED_MODES for on in (True, False)}
_FOCUS_RIS = FocusMayBeOff("ris")
_FOCUS_DECSTR = FocusMayBeOff("decstr")
_FOCUS_1004 = FocusMayBeOff("1004")


def _mode_event(mode: int, on: bool) -> ModeChange:
    ev = _MODE_EVENTS.get((mode, on))
    return ev if ev is not None else ModeChange(mode, on)


class ModeGuard:
    """The private CSIs and resets of one chunk, applied to ``modes`` and reported, on the
    tracker's state ``s``."""

    def __init__(self, s: ScanState, modes: ModeState, own_focus: bool, answer_child: bool) -> None:
        self.s = s
        self.modes = modes
        # cuewrap owns the host's focus reporting: the child's CSI ? 1004 h/l are tracked
        # (they decide what is forwarded to it) but taken out of the output
        self.own_focus = own_focus
        # the child's DECRQM 1004 is cuewrap's to answer (term/childqueries.py)
        self.answer_child = answer_child

    def resets(self, work: bytes, base: int, events: Events, c0_needed: bool) -> int:
        """RIS and DECSTR released in this chunk (an ESC always starts a new sequence, so
        every ``ESC c`` is RIS and every ``ESC [ ! p`` DECSTR). ``c0_needed``: the same search
        finds the first ESC followed by a control character: returned (or -1)."""
        # on escape-dense output bytes.find of a 2-byte needle is slow (no memchr): the
        # regex literal search is ~3x faster; DECSTR is looked for only if a "!" is there
        c0 = -1
        m = (RIS_C0 if c0_needed else RIS).search(work, base)
        if m is not None and work[m.start() + 1] != 0x63:  # c
            c0 = m.start()
            m = RIS.search(work, m.end())
        if m is not None:
            events.append((m.start(), _FOCUS_RIS))
        if work.find(b"!", base) >= 0:
            i = work.find(b"\x1b[!p", base)
            if i >= 0:
                events.append((i, _FOCUS_DECSTR))
        return c0

    def dec_starts(self, work: bytes, first: int, quiet_seen: dict[int, int]) -> list[int]:
        """Positions of every ``CSI ?`` but the quiet single-mode toggles, which are applied
        here: the last toggle of each quiet mode decides its state. ``first`` is the first
        ``?`` at or after index 2 (memchr); Python only looks at each introducer's head."""
        starts: list[int] = []
        last: dict[int, tuple[int, bool]] = {}
        for j in find_all(work, b"\x1b[?", first):
            if work.startswith(_QUIET_HEADS, j + 3):
                mode = 2026 if work[j + 4] == 0x30 else 25  # "20…" / "25…"
                last[mode] = (j, work[j + (7 if mode == 2026 else 5)] == 0x68)  # h
            else:
                starts.append(j)
        for mode, (at, on) in last.items():
            if mode == 2026:
                self.s._sync = on
            self.modes.set(mode, on)
            quiet_seen[mode] = at
        return starts

    def private_csi(
        self,
        work: bytes,
        j: int,
        base: int,
        events: Events,
        quiet_seen: dict[int, int],
        cuts: Cuts,
    ) -> None:
        """Apply and report ``CSI ?|>|<|= …`` at ``j`` (events keyed by position)."""
        m = _DEC_ONE.match(work, j)
        if m is not None:  # the common case: one mode, e.g. CSI ? 1049 h
            single = int(m.group(1))
            on = m.group(2) == b"h"
            self.modes.set(single, on)
            events.append((j, _mode_event(single, on)))
            if single == seq.MODE_FOCUS and self.own_focus:
                if j >= base and self.s.removable_at(work, j):
                    cuts.append((j, m.end()))
                elif not on:
                    events.append((j, _FOCUS_1004))
            return
        parsed = csi_at(work, j)
        if parsed is None:
            return
        end, params, inter, final = parsed
        if inter == b"$" and final == 0x70 and params == DECRQM_FOCUS and self.answer_child:
            if not self.s.framed(work, j):  # inside a frame: content it draws, not its query
                cut = j >= base and self.s.removable_at(work, j)
                if cut:
                    cuts.append((j, end))
                events.append((j, ChildQuery("decrqm1004", cut=cut)))
            return
        if inter or not params or end - j > CAP + 1 or _PARAMS.fullmatch(params, 1) is None:
            return
        marker = params[0]
        if marker == 0x3F:  # ?
            if final != 0x68 and final != 0x6C:  # h l
                return
            on = final == 0x68
            for mode in ints(params[1:]):
                if mode is None:
                    continue
                if mode in QUIET_MODES:  # in a multi-mode sequence: state only, in order
                    if j > quiet_seen.get(mode, -1):
                        self.modes.set(mode, on)
                        quiet_seen[mode] = j
                    continue
                self.modes.set(mode, on)
                events.append((j, _mode_event(mode, on)))
                if mode == seq.MODE_FOCUS and not on and self.own_focus:
                    events.append((j, _FOCUS_1004))  # inside a multi-mode sequence: left in
        else:  # > < =: the kitty keyboard stack, modifyOtherKeys
            self.modes.keys(marker, final, params)
