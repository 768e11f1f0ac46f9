"""The output path's guard for a child's own notifications (OSC 9 / 777 / 99; docs/generic-mode.md).

The tracker (``term/tracker.py``) finds a complete OSC 9, 777 or 99 in the child's output; this
guard says what it is — a :class:`~cuewrap.term.notices.ChildNotification` (read by
``term/notices.py``'s parser, which joins OSC 99's parts), kitty's OSC 99 query cuewrap answers
(a :class:`~cuewrap.term.childqueries.ChildQuery`), or nothing — and whether it is taken out:

- the ``policy`` given at construction decides, per protocol and at that moment (generic mode,
  the user away, the host terminal does not show that protocol), and only where the tracker says
  taking it out changes nothing else the host sees (``removable``);
- ``answer_child`` (a preset that asks for it, opencode): kitty's OSC 99 query is cuewrap's to
  answer; once answered, the child's OSC 99 notifications are addressed to cuewrap: always taken
  out, never passed to the host.

Pure: no I/O, no clock; the tracker performs the verdicts.
"""

from __future__ import annotations

from collections.abc import Callable

from cuewrap.term.childqueries import ChildQuery, osc99_query
from cuewrap.term.notices import (
    INTROS,
    ChildNotification,
    NoticeParser,
    NoticePolicy,
    NoticeProtocol,
    protocol_of,
)


class NoticeGuard:
    """What a complete OSC 9 / 777 / 99 in the child's output becomes (see the module
    docstring)."""

    def __init__(self, policy: NoticePolicy | None, *, answer_child: bool = False) -> None:
        self.policy = policy
        self.answer_child = answer_child
        self.parser = NoticeParser()
        self.osc99_ours = False  # cuewrap answered the child's OSC 99 query

    @property
    def active(self) -> bool:
        """Some notification may be taken out: an unfinished one at a chunk's end is worth
        holding."""
        return self.policy is not None or self.osc99_ours

    def could_remove(self, s: bytes, whole: bool) -> bool:
        """``s`` (ESC-led, unfinished) may yet become a notification taken out now.
        ``whole``: ``s`` is the head of an OSC already known to be unfinished."""
        policy = self.policy
        if self.osc99_ours:
            policy = _Osc99Ours(policy)
        if policy is None:
            return False
        for intro, proto in INTROS:
            if s.startswith(intro) or (not whole and intro.startswith(s)):
                if policy.consume(proto) or (proto == "osc99" and self.parser.consuming):
                    return True
        return False

    def read(
        self, ps: bytes, rest: bytes, removable: Callable[[], bool]
    ) -> tuple[ChildNotification | ChildQuery | None, bool]:
        """A complete OSC ``ps ; rest`` (9, 777 or 99): what it is (None: nothing to report)
        and whether it is taken out. ``removable``: not released before and at a point where
        taking it out changes nothing else (asked only when the answer matters)."""
        proto = protocol_of(ps)
        if proto is None:
            return None, False
        policy = self.policy
        if proto == "osc99" and self.answer_child:
            ident = osc99_query(rest)
            if ident is not None:  # kitty's query: cuewrap answers it (term/childqueries.py)
                self.osc99_ours = True
                cut = removable()
                return ChildQuery("osc99", ident, cut), cut
            if self.osc99_ours:
                policy = _ALWAYS
        if policy is not None and not removable():
            policy = None  # already released, or inside another sequence / character
        return self.parser.osc(proto, rest, policy)


class _Always:
    """The notice policy for a child whose OSC 99 query cuewrap answered: its notifications
    are cuewrap's to read and deliver, taken out whatever the host shows."""

    def consume(self, protocol: NoticeProtocol) -> bool:
        return True


_ALWAYS = _Always()


class _Osc99Ours:
    """The notice policy with OSC 99 always taken out (the child's OSC 99 is cuewrap's)."""

    def __init__(self, policy: NoticePolicy | None) -> None:
        self._policy = policy

    def consume(self, protocol: NoticeProtocol) -> bool:
        if protocol == "osc99":
            return True
        return self._policy is not None and self._policy.consume(protocol)
