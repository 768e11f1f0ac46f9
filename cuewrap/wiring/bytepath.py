"""The byte path's parts, composed by the session (``wiring/session.py``) while the child boots:
the byte path's decisions, the input's focus filter, the output tracker and the output path
around it, each from the settings, the session's ``Mode`` and the test hook's ``Faults``.

Imported right after the spawn: no ``typing`` (``records``); each part's module is imported
where it is built.
"""

from __future__ import annotations

from cuewrap.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from cuewrap.config import Settings
    from cuewrap.relay.decisions import OutputDecisions
    from cuewrap.relay.outputpath import OutputPath
    from cuewrap.term.focus import FocusFilter
    from cuewrap.term.provenance import MarkFinder
    from cuewrap.term.tracker import OutputTracker
    from cuewrap.wiring._faults import Faults
    from cuewrap.wiring.mode import Mode


class BytePath(NamedTuple):
    """What the byte path's parts are made from: the settings, the mode, the faults asked
    for, and whether cues run at all (``guard``: without, nothing is guarded)."""

    settings: Settings
    mode: Mode
    faults: Faults
    guard: bool

    def decisions(self, clock: Callable[[], float]) -> OutputDecisions | None:
        """What the tracker decides without calling up (``relay/decisions.py``): none without
        cues; the engine's rules at start until the cue side hands down its own."""
        if not self.guard:
            return None
        from cuewrap.relay.decisions import OutputDecisions

        clipboard = self.settings.guard.clipboard
        return OutputDecisions.initial(clock, clipboard, self.mode.pi)

    def output_path(
        self,
        tracker: OutputTracker,
        decisions: OutputDecisions | None,
        *,
        injected: bool,
        owns_focus: bool,
        report: Callable[[str, BaseException], None],
    ) -> OutputPath:
        """The output between read and write (``relay/outputpath.py``); ``injected``: Pi's
        argv has the bridge extension; ``owns_focus``: the host's focus reporting is
        cuewrap's (a focus filter runs)."""
        from cuewrap.relay.outputpath import OutputPath

        return OutputPath(
            tracker,
            decisions=decisions,
            mark=self._mark_finder(injected),
            owns_focus=owns_focus,
            fallback=self._fallback_classes(),
            report=report,
        )

    def _mark_finder(self, injected: bool) -> MarkFinder | None:
        """Pi mode with the bridge injected and cues on: the relay looks for the extension's
        provenance mark (docs/terminal-guard.md, "Whose sequence is it")."""
        if not self.guard or not injected:
            return None
        from cuewrap.term.provenance import MarkFinder

        return MarkFinder()

    def _fallback_classes(self) -> tuple[bool, bool]:
        """What the output keeps guarded if its tracker fails (``term.fallback``): nothing
        without the guard (no cue side: nothing is guarded then either); the clipboard class
        unless ``guard.clipboard = allow``; the classes that act outside the window unless
        ``guard.sequences = allow`` (in the fallback cuewrap cannot tell Pi's own from the
        content it prints, so its own are removed too)."""
        if not self.guard:
            return False, False
        guard = self.settings.guard
        return guard.clipboard != "allow", guard.sequences != "allow"

    def filters(
        self, decisions: OutputDecisions | None, *, ask: bool, query_id: str | None
    ) -> tuple[FocusFilter | None, OutputTracker]:
        """The relay's byte filters: the focus filter only when cues run, OSC 7501 reports
        consumed unless the host terminal speaks the protocol (it answered cuewrap's start-up
        query, in both modes), the child's Program Status query answered by cuewrap in
        generic mode (docs/generic-mode.md), the child's notifications (generic mode) and
        clipboard sequences decided by ``decisions``. The guards' settings that depend on the
        mode are the ``Mode``'s; ``faults`` makes the named parts raise (tests of failing
        open). ``ask``: the host terminal is asked what it is (its answers are taken out of
        the input, ``query_id`` the OSC 99 query's)."""
        from cuewrap.term.focus import FocusFilter
        from cuewrap.term.tracker import OutputTracker

        faults, settings = self.faults, self.settings
        focus_cls, tracker_cls = FocusFilter, OutputTracker
        if faults.raises("focus") or faults.raises("tracker"):
            from cuewrap.wiring import _raising as fault

            if faults.raises("focus"):
                focus_cls = fault.RaisingFocus
            if faults.raises("tracker"):
                tracker_cls = fault.RaisingTracker
        focus: FocusFilter | None = None
        if self.guard and focus_cls is FocusFilter and ask:
            from cuewrap.term.answers import AnswerFilter

            focus = AnswerFilter(query_id, status=True)
        elif self.guard:
            focus = focus_cls()
        # generic mode: which of the child's notifications are taken out (the engine's rules)
        mode = self.mode
        notices = decisions if mode.generic else None
        from cuewrap.term.statusguard import StatusGuard

        status = StatusGuard(
            consume=self.guard,
            answer_query=self.guard and mode.generic,
            own_app=mode.own_status_app,
            hold_blocked=self.guard and mode.pi,  # until the provenance mark
        )
        tracker = tracker_cls(
            status,
            notices=notices,
            own_focus=self.guard,  # the host's focus reporting is cuewrap's: design.md#presence
            # docs/terminal-guard.md: the child's OSC 52 pass only when the controller says
            clipboard=decisions if settings.guard.clipboard != "allow" else None,
            # docs/terminal-guard.md: titles, notifications and status reports inside the
            # child's frames are content it renders: removed whole (guard.sequences = own)
            guard_frames=settings.guard.sequences == "own",
            content_only=mode.content_only,
            # Pi mode: a title posing as cuewrap's mark is content wherever it stands; under
            # the frame rule a ``blocked`` report reaches the terminal only once the screen
            # check confirmed it (docs/terminal-guard.md)
            marked_titles=self._marked_titles(),
            # its DECRQM 1004 and OSC 99 queries are cuewrap's to answer (opencode)
            answer_child=self.guard and mode.answers_child,
        )
        return focus, tracker

    def _marked_titles(self) -> tuple[bytes, ...]:
        """Pi mode: the beginnings of a title that carries one of cuewrap's marks (Pi's own
        title is ``π - …``; only generic mode can wrap an inner cuewrap)."""
        if not self.mode.pi:
            return ()
        from cuewrap.deliver.title import MARKED

        return tuple(m.encode() for m in MARKED)
