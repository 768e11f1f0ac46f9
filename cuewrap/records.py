"""``NamedTuple`` for the modules that run before the child is spawned, without ``typing``.

Importing ``typing`` costs several milliseconds of the start-up path, and the child (Pi) is
spawned only once the settings and the spawn itself are imported
(docs/architecture.md#start-up). ``class X(NamedTuple)`` with this ``NamedTuple`` builds the
class ``typing.NamedTuple`` builds: ``collections.namedtuple`` with the annotated fields in
order, their defaults, and the rest of the class body (methods, properties, constants, the
docstring; the annotations are kept as written, where typing wraps each string in a
``ForwardRef``). Type checkers see ``typing.NamedTuple`` itself.

``TYPE_CHECKING`` is ``typing.TYPE_CHECKING`` without the import: False when running, true for
type checkers (mypy and ruff recognise a module-level constant of that name).
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    # what the class body defines that is not a field nor to be copied onto the new class
    _NOT_COPIED = frozenset(
        {"__module__", "__qualname__", "__annotations__", "__doc__", "__orig_bases__"}
    )

    class _Builder(type):
        def __new__(
            mcls: type, name: str, bases: tuple[type, ...], namespace: dict[str, object]
        ) -> type:
            if not bases:  # NamedTuple itself
                return type.__new__(mcls, name, bases, namespace)
            if bases != (NamedTuple,):
                raise TypeError("a NamedTuple class derives from NamedTuple only")
            if "__classcell__" in namespace:
                raise TypeError("super() and __class__ are not supported in a NamedTuple class")
            if "__annotate__" in namespace and "__annotations__" not in namespace:
                return _typed(name, namespace)  # lazily evaluated annotations (3.14+)
            annotations = dict(namespace.get("__annotations__", {}))
            fields = list(annotations)
            with_default = [f for f in fields if f in namespace]
            if with_default != fields[len(fields) - len(with_default) :]:
                raise TypeError(f"{name}: a field without a default follows one with a default")
            cls: type = namedtuple(
                name,
                fields,
                defaults=[namespace[f] for f in with_default],
                module=str(namespace.get("__module__", __name__)),
            )
            cls.__qualname__ = str(namespace.get("__qualname__", name))
            if namespace.get("__doc__") is not None:
                cls.__doc__ = namespace["__doc__"]
            cls.__annotations__ = annotations
            for key, value in namespace.items():
                if key not in _NOT_COPIED and key not in annotations:
                    setattr(cls, key, value)
            return cls

    class NamedTuple(metaclass=_Builder):
        pass

    def _typed(name: str, namespace: dict[str, object]) -> type:
        """The class built by ``typing.NamedTuple`` itself."""
        import types
        import typing

        def body(ns: dict[str, object]) -> None:
            ns.update(namespace)

        return types.new_class(name, (typing.NamedTuple,), exec_body=body)
