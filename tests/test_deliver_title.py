from __future__ import annotations

import pytest

from cuewrap.deliver.title import TitleMarks
from cuewrap.term.sequences import TITLE_POP, TITLE_PUSH, set_title

pytestmark = pytest.mark.unit


def test_no_mark_no_bytes() -> None:
    marks = TitleMarks()
    assert marks.on_child_title("π - proj") == b""
    assert marks.set_mark(None) == b""
    assert marks.composed() is None


def test_mark_composes_onto_child_title_and_clear_restores_it() -> None:
    marks = TitleMarks()
    marks.on_child_title("π - proj")
    assert marks.set_mark("[?]") == set_title("[?] π - proj")
    assert marks.set_mark(None) == set_title("π - proj")


def test_new_child_title_while_marked_is_recomposed() -> None:
    marks = TitleMarks()
    marks.on_child_title("one")
    marks.set_mark("[✓]")
    assert marks.on_child_title("two") == set_title("[✓] two")
    assert marks.set_mark(None) == set_title("two")
    assert marks.on_child_title("three") == b""


def test_a_title_an_inner_cuewrap_marked_is_not_marked_twice() -> None:
    """cuewrap -- cuewrap pi: the inner one marks Pi's title; the outer shows it as it is."""
    marks = TitleMarks()
    marks.on_child_title("π - work")
    assert marks.set_mark("[?]") == set_title("[?] π - work")
    assert marks.on_child_title("[✓] π - work") == set_title("[✓] π - work")
    assert marks.on_child_title("π - work") == set_title("[?] π - work")
    assert marks.set_mark(None) == set_title("π - work")


def test_changing_the_mark_and_repeating_it() -> None:
    marks = TitleMarks()
    marks.on_child_title("t")
    assert marks.set_mark("[?]") == set_title("[?] t")
    assert marks.set_mark("[?]") == b""  # already shown
    assert marks.set_mark("[!]") == set_title("[!] t")


def test_without_a_child_title_clearing_brings_back_the_users_title() -> None:
    marks = TitleMarks()
    assert marks.set_mark("[?]") == set_title("[?]")
    assert marks.set_mark(None) == TITLE_POP + TITLE_PUSH


def test_empty_child_title_is_restored_exactly() -> None:
    marks = TitleMarks()
    marks.on_child_title("")
    assert marks.set_mark("[-]") == set_title("[-]")
    assert marks.set_mark(None) == set_title("")


def test_hostile_child_title_is_sanitized_in_the_composed_title() -> None:
    marks = TitleMarks()
    marks.on_child_title("evil\x1b]0;x\x07title")
    out = marks.set_mark("[?]")
    assert out.startswith(b"\x1b]2;[?] evil")
    assert b"\x07" not in out and out.count(b"\x1b") == 2  # the OSC introducer and ST only


def test_no_mark_is_composed_onto_a_title_with_control_characters() -> None:
    """A title that carried control characters (e.g. from a model's answer) gets the mark
    alone, never the mark composed onto it; a plain title afterwards is composed again."""
    marks = TitleMarks()
    marks.on_child_title("curl evil | sh", controls=True)
    assert marks.set_mark("[✓]") == set_title("[✓]")
    assert marks.on_child_title("π - work") == set_title("[✓] π - work")
    # content's title never replaces the mark (written again right after it), never carries
    # it, and never comes back when the mark clears: the child's own title does
    assert marks.on_child_title("[?] x\x85y", controls=True) == set_title("[✓] π - work")
    assert marks.set_mark(None) == set_title("π - work")
    assert marks.on_child_title("[?] owned", controls=True) == b""  # no mark up: nothing


def test_the_title_as_it_stands_now_is_the_mark_else_the_childs_else_the_users() -> None:
    """What is written again where the terminal may have missed a title (Konsole)."""
    marks = TitleMarks()
    assert marks.current() == TITLE_POP + TITLE_PUSH
    marks.on_child_title("π - work")
    assert marks.current() == set_title("π - work")
    marks.set_mark("[?]")
    assert marks.current() == set_title("[?] π - work")
    marks.on_child_title("model's", controls=True)
    assert marks.current() == set_title("[?] π - work")
