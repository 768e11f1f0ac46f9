"""The composition root's rules, held against the code (docs/architecture.md, "The composition
root"): in ``wiring/`` and ``configure/`` nothing is assigned to another object's attribute
after it is built, and no function takes more than six parameters."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parent.parent / "cuewrap"
PLACES = ("wiring", "configure")
MAX_PARAMS = 6


def _modules() -> list[Path]:
    return sorted(p for place in PLACES for p in (PACKAGE / place).glob("*.py"))


def assigned_after_construction(tree: ast.AST) -> list[str]:
    """Assignments to an attribute of anything but ``self`` (``part.hook = x``)."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        while targets:
            t = targets.pop()
            if isinstance(t, ast.Tuple | ast.List):
                targets.extend(t.elts)
            elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute):
                targets.append(t.value)  # part.table[key] = x: the part's attribute changed
            elif isinstance(t, ast.Attribute) and not (
                isinstance(t.value, ast.Name) and t.value.id == "self"
            ):
                found.append(f"{ast.unparse(t)} (line {node.lineno})")
    return found


def too_many_parameters(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            names = [n for n in names if n not in ("self", "cls")]
            if len(names) > MAX_PARAMS:
                found.append(f"{node.name}: {len(names)} (line {node.lineno})")
    return found


def test_nothing_is_assigned_to_a_part_after_it_is_built() -> None:
    found = {
        str(p.relative_to(PACKAGE)): hits
        for p in _modules()
        if (hits := assigned_after_construction(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_no_wiring_function_takes_more_than_six_parameters() -> None:
    found = {
        str(p.relative_to(PACKAGE)): hits
        for p in _modules()
        if (hits := too_many_parameters(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_checks_find_what_they_look_for() -> None:
    """Each check fails on code that breaks its rule (and passes ``self``'s own)."""
    code = ast.parse(
        "def f(a, b, c, d, e, g, h): pass\n"
        "def g(self, a, b, c, d, e, f): self.x = 1\n"
        "pending.attach = relay.attach\n"
        "delivery.where['pid'] = 1\n"
    )
    assert too_many_parameters(code) == ["f: 7 (line 1)"]
    assert assigned_after_construction(code) == [
        "pending.attach (line 3)",
        "delivery.where (line 4)",
    ]
