"""docs/architecture.md cannot go stale silently: every module, class, function, method and
setting it names in backticks exists in the code.

What a name in backticks is taken for (anything else — a word, a command, a record's field
with spaces — is prose and not checked):

- a path (``cuewrap/relay/relay.py``, ``relay/relay.py``, ``relay/``, ``tests/test_x*.py``,
  ``scripts/bench``): a file or folder of the repository, or below ``cuewrap/``;
- a file name (``loop.py``): a file somewhere below ``cuewrap/``, ``tests/`` or ``scripts/``;
- ``module.name`` (``cueside.build_controller``, ``tracker.pass_status_on()``): a module or
  package of cuewrap named by its last part(s); the name is defined at its top level or is
  a member of one of its classes;
- ``Class.member`` (``Loop.run_once``): a class of cuewrap with that method or attribute;
- ``attribute.member`` (``tap.feed``): a member of a class of cuewrap, and a member of one;
- a setting (``notify.command``, ``generic.quiet_after``): a key of ``config.KEYS``;
- ``stdlib.name`` (``select.poll``): the standard library's; a name of the Pi bridge
  extension's TypeScript (``process.stdout.write``) when it stands in that source;
- ``CapWords`` alone (``Keystroke``): a class or name defined in cuewrap (or ``typing``'s);
- ``_private`` alone (``_on_master``): defined in cuewrap (a function, method or attribute);
- ``snake_case`` with an underscore (``build_controller``, ``channels_now``): a name defined
  in cuewrap, or a string of its code (a record's kind, a protocol's message).

The checker is a function of the doc's text and the code, so the tests below also prove that
it finds a wrong name of each kind.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cuewrap.config import KEYS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cuewrap"
DOC = ROOT / "docs" / "architecture.md"

SPAN = re.compile(r"`([^`\n]+)`")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
DOTTED = re.compile(rf"^{IDENT}(?:\.{IDENT})+$")
PATHLIKE = re.compile(r"^[\w.*-]+(?:/[\w.*-]*)+$")
FILENAME = re.compile(r"^[\w-]+\.(?:py|ts)$")
CAPWORDS = re.compile(r"^[A-Z][a-z][A-Za-z0-9]*$")
PRIVATE = re.compile(r"^_[a-z][a-z0-9_]*$")
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")


@dataclass
class Code:
    """What cuewrap defines, read from its source (nothing imported)."""

    modules: dict[str, set[str]] = field(default_factory=dict)  # dotted -> top-level names
    module_members: dict[str, set[str]] = field(default_factory=dict)  # of its classes
    classes: dict[str, set[str]] = field(default_factory=dict)  # class name -> members
    members: set[str] = field(default_factory=set)  # every class's members
    names: set[str] = field(default_factory=set)  # every name defined anywhere
    strings: set[str] = field(default_factory=set)  # every string constant
    typescript: str = ""

    def named(self, dotted: str) -> list[str]:
        """The modules whose dotted names end with ``dotted`` (``relay``: the package
        cuewrap.relay and its module cuewrap.relay.relay)."""
        return [m for m in self.modules if m == dotted or m.endswith("." + dotted)]


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple | ast.List):
        return [n for e in node.elts for n in _targets(e)]
    return []


def _assigned(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in _targets(t)]
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        return _targets(stmt.target)
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return []


def _top_level(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for stmt in body:
        names.update(_assigned(stmt))
        if isinstance(stmt, ast.If | ast.Try):  # `if TYPE_CHECKING:`, `try: import …`
            inner = [*stmt.body, *stmt.orelse]
            if isinstance(stmt, ast.Try):
                inner += [s for h in stmt.handlers for s in h.body] + stmt.finalbody
            names |= _top_level(inner)
    return names


@functools.cache
def read_code() -> Code:
    code = Code()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        dotted = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        code.modules[dotted] = (
            _top_level(tree.body)
            | {p.stem for p in path.parent.glob("*.py") if rel.name == "__init__"}
            | {p.name for p in path.parent.iterdir() if p.is_dir() and rel.name == "__init__"}
        )
        members = code.module_members.setdefault(dotted, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                own = code.classes.setdefault(node.name, set())
                for sub in ast.walk(node):
                    if isinstance(sub, ast.stmt):
                        own.update(_assigned(sub))
                own.discard(node.name)
                members |= own
                code.members |= own
            if isinstance(node, ast.stmt):
                code.names.update(_assigned(node))
            elif isinstance(node, ast.arg):
                code.names.add(node.arg)
            elif isinstance(node, ast.keyword) and node.arg:
                code.names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                code.strings.add(node.value)
                code.strings.update(re.findall(r"\w+", node.value))
    code.typescript = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.ts"))
    return code


def _path_exists(name: str) -> bool:
    for base in (ROOT, PACKAGE):
        if "*" in name:
            if any(base.glob(name)):
                return True
        elif (base / name.rstrip("/")).exists():
            return True
    return False


def _stdlib_has(dotted: str) -> bool:
    head, *rest = dotted.split(".")
    if head not in sys.stdlib_module_names:
        return False
    obj: object = importlib.import_module(head)
    for part in rest:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _dotted_problem(name: str, code: Code) -> str | None:
    if name in SETTINGS:
        return None
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest module prefix first
        modules = code.named(".".join(parts[:cut]))
        if not modules:
            continue
        attr = parts[cut]
        for module in modules:
            if attr in code.modules[module] or attr in code.module_members[module]:
                return None
        return f"{' or '.join(modules)} defines no {attr!r}"
    if parts[0] in code.classes:
        if parts[1] in code.classes[parts[0]]:
            return None
        return f"class {parts[0]} has no member {parts[1]!r}"
    if parts[0] in code.members and len(parts) == 2:  # an attribute's method: `tap.feed`
        if parts[1] in code.members:
            return None
        return f"no class of cuewrap has a member {parts[1]!r}"
    if _stdlib_has(name) or re.search(rf"\b{re.escape(name)}\b", code.typescript):
        return None
    return "neither a module nor a class of cuewrap, a setting or the standard library's"


def problem(name: str, code: Code) -> str | None:
    """Why the name in backticks ``name`` does not exist, or None (it does, or is prose)."""
    name = re.sub(r"\(\)$", "", name.strip())
    if PATHLIKE.match(name) and not name.startswith("/"):
        return None if _path_exists(name) else "no such file or folder"
    if FILENAME.match(name):
        found = any(any(d.rglob(name)) for d in (PACKAGE, ROOT / "tests", ROOT / "scripts"))
        return None if found else "no such file"
    if DOTTED.match(name):
        return _dotted_problem(name, code)
    if CAPWORDS.match(name):
        known = name in code.names or name in code.classes or hasattr(typing, name)
        return None if known else "no class or name of that name in cuewrap"
    if PRIVATE.match(name):
        return None if name in code.names else "not defined in cuewrap"
    if SNAKE.match(name):
        known = name in code.names or name in code.strings or name in code.typescript
        return None if known else "neither defined nor a string in cuewrap"
    return None


SETTINGS = {f"{k.section}.{k.key}" for k in KEYS}


def problems(text: str, code: Code | None = None) -> list[str]:
    """Every name in backticks in ``text`` that does not exist, with why (in order, once)."""
    code = code or read_code()
    found: dict[str, str] = {}
    for span in SPAN.findall(text):
        why = problem(span, code)
        if why is not None:
            found.setdefault(span, why)
    return [f"`{name}`: {why}" for name, why in found.items()]


def test_every_name_architecture_md_gives_exists() -> None:
    wrong = problems(DOC.read_text(encoding="utf-8"))
    assert not wrong, "docs/architecture.md names what the code does not have:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "name",
    [
        "engine/nosuch.py",  # a module that is not there
        "cuewrap/relay/nosuch.py",
        "relay/nosuch/",
        "nosuch.py",
        "cueside.build_controler",  # a misspelt function of a module
        "tracker.pass_status_off()",  # no such method of the module's classes
        "tap.feedx",  # an attribute's method that no class has
        "Loop.run_twice",  # no such method of the class
        "NoSuchClass",
        "_no_such_helper",
        "clipboard_notice",  # the stale claims the test was written for
        "sequence_notice",
        "notify.commandx",  # neither a setting nor a module
    ],
)
def test_a_wrong_name_of_each_kind_is_found(name: str) -> None:
    why = problem(name, read_code())
    assert why is not None
    assert problems(f"as `{name}` does") == [f"`{name}`: {why}"]


@pytest.mark.parametrize(
    "name",
    [
        "cuewrap/relay/relay.py",
        "relay/relay.py",
        "relay/",
        "tests/test_tracker*.py",
        "loop.py",
        "cueside.build_controller",
        "tracker.status.pass_on()",
        "Loop.run_once",
        "tap.feed",
        "Keystroke",
        "NamedTuple",
        "_on_master",
        "channels_now",  # a record's kind: a string of the code
        "notify.command",
        "select.poll",
        "process.stdout.write",  # the bridge extension's TypeScript
        "cuewrap pi",  # prose: not a name
    ],
)
def test_a_right_name_of_each_kind_passes(name: str) -> None:
    assert problem(name, read_code()) is None


def test_the_real_doc_with_one_name_changed_fails() -> None:
    text = DOC.read_text(encoding="utf-8")
    for right, wrong in [
        ("`wiring/cueside.py`", "`wiring/cuesides.py`"),
        ("`Loop.run_once`", "`Loop.run_one`"),
        ("`engine/wording.py`", "`engine/wordings.py`"),
    ]:
        assert right in text, right
        why = problem(wrong.strip("`"), read_code())
        assert why is not None
        assert problems(text.replace(right, wrong, 1)) == [f"{wrong}: {why}"]
