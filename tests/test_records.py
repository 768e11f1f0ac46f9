"""cuewrap.records.NamedTuple builds what typing.NamedTuple builds (without importing typing
on the start-up path)."""

from __future__ import annotations

import typing

import pytest

from cuewrap import records

pytestmark = pytest.mark.unit


def _pair() -> tuple[type, type]:
    """The same class body under both bases."""
    made = []
    for base in (records.NamedTuple, typing.NamedTuple):

        class Spec(base):  # type: ignore[valid-type, misc]
            """A spec."""

            section: str
            key: str
            default: object = None
            choices: tuple[str, ...] = ()
            LIMIT = 7

            @property
            def name(self) -> str:
                return f"{self.section}.{self.key}"

            def doubled(self) -> tuple[str, str]:
                return (self.key, self.key)

        made.append(Spec)
    return made[0], made[1]


def test_same_class_as_typing_builds() -> None:
    ours, theirs = _pair()
    assert ours._fields == theirs._fields == ("section", "key", "default", "choices")
    assert ours._field_defaults == theirs._field_defaults == {"default": None, "choices": ()}
    # the annotations are the same strings (typing wraps each in a ForwardRef; nothing reads them)
    assert ours.__annotations__ == {
        k: getattr(v, "__forward_arg__", v) for k, v in theirs.__annotations__.items()
    }
    assert (ours.__name__, ours.__qualname__, ours.__module__, ours.__doc__) == (
        theirs.__name__,
        theirs.__qualname__,
        theirs.__module__,
        theirs.__doc__,
    )
    a, b = ours("notify", "bell"), theirs("notify", "bell")
    assert tuple(a) == tuple(b) == ("notify", "bell", None, ())
    assert repr(a) == repr(b) == "Spec(section='notify', key='bell', default=None, choices=())"
    assert a.name == b.name == "notify.bell" and a.doubled() == b.doubled()
    assert ours.LIMIT == theirs.LIMIT == 7
    assert a._replace(key="x") == ("notify", "x", None, ()) and a._asdict() == b._asdict()
    assert isinstance(a, tuple) and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.key = "other"  # type: ignore[misc]


def test_no_fields() -> None:
    class Nothing(records.NamedTuple):
        pass

    assert Nothing() == () and Nothing._fields == () and repr(Nothing()) == "Nothing()"


def test_a_field_without_default_after_one_with_is_refused_as_typing_does() -> None:
    for base in (records.NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError):

            class Bad(base):  # type: ignore[valid-type, misc]
                a: int = 0
                b: int
