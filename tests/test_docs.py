"""The docs say what the code is: docs/architecture.md's module list ("Modules") is the tree of
cuewrap/ — every module, package and package-data file, nothing that is not there."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
#: an entry of the list: indented two spaces per level, then a file or folder name (a
#: description's continuation line is indented further and does not start with one)
ENTRY = re.compile(r"^((?:  )*)([\w.-]+/|[\w.-]+\.\w+)(?:\s{2,}\S.*)?$")


def listed_tree(text: str) -> set[str]:
    """The paths named by the first code block after the "## Modules" heading."""
    section = text.split("\n## Modules\n", 1)[1]
    block = section.split("```\n", 2)[1]
    lines = block.splitlines()
    assert lines[0] == "cuewrap/", lines[0]
    parents = ["cuewrap"]
    paths: set[str] = set()
    for line in lines[1:]:
        m = ENTRY.match(line)
        if m is None or len(m.group(1)) // 2 > len(parents):
            assert line.startswith(" " * 2 * (len(parents) + 2)), f"not an entry: {line!r}"
            continue  # a description's continuation
        depth, name = len(m.group(1)) // 2, m.group(2)
        assert depth >= 1, line
        del parents[depth:]
        path = "/".join([*parents, name.rstrip("/")])
        assert path not in paths, f"listed twice: {path}"
        paths.add(path)
        if name.endswith("/"):
            parents.append(name.rstrip("/"))
    return paths


def real_tree() -> set[str]:
    base = ROOT / "cuewrap"
    paths = set()
    for p in base.rglob("*"):
        rel = p.relative_to(ROOT)
        if "__pycache__" in rel.parts or p.name == "__init__.py" or p.suffix == ".pyc":
            continue
        paths.add(rel.as_posix())
    return paths


def test_architecture_lists_every_module_of_the_tree() -> None:
    listed = listed_tree((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    real = real_tree()
    unlisted, gone = sorted(real - listed), sorted(listed - real)
    assert not unlisted, f"in cuewrap/ but not in docs/architecture.md's Modules: {unlisted}"
    assert not gone, f"in docs/architecture.md's Modules but not in cuewrap/: {gone}"


def test_the_list_reader_sees_nesting_and_continuations() -> None:
    text = (
        "x\n## Modules\n\ntext\n\n```\ncuewrap/\n  a.py        one\n                  more\n"
        "  pkg/        a package\n    b.py        two\n  c.py\n```\n"
    )
    assert listed_tree(text) == {"cuewrap/a.py", "cuewrap/pkg", "cuewrap/pkg/b.py", "cuewrap/c.py"}


def test_readme_names_every_dependency() -> None:
    """The README's "depends on" sentence names every package pyproject.toml installs."""
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0] for d in deps]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    sentence = readme[readme.index("cuewrap depends on") :].split(".")[0]
    assert [n for n in names if n not in sentence] == [], sentence


def test_readme_is_for_users() -> None:
    """At most 250 lines: figures, status and the module tree live in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)


def test_relative_links_in_the_readme_and_docs_lead_to_files() -> None:
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if path and "://" not in path and not (doc.parent / path).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []


def test_generic_mode_holds_the_table_of_the_programs_measured() -> None:
    """docs/generic-mode.md's "Programs, measured" is generic/programs.py's table, line for
    line (``cuewrap doctor -- COMMAND`` prints the same rows)."""
    from cuewrap.generic.programs import PROGRAMS, table_lines

    text = (ROOT / "docs" / "generic-mode.md").read_text(encoding="utf-8")
    section = text.split("\n## Programs, measured\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and "program |" in ln]
    assert rows, "no table in docs/generic-mode.md's Programs, measured"
    start = section.splitlines().index(rows[0])
    assert section.splitlines()[start : start + len(PROGRAMS) + 2] == table_lines()


def test_terminals_holds_the_table_of_the_terminals_proven() -> None:
    """docs/terminals.md's table is tests/termkinds.py's rows, line for line: each cell is
    what tests/test_realterm_matrix.py asserts of that terminal."""
    sys.path.insert(0, str(ROOT / "tests"))
    from termkinds import ROWS, table_lines

    lines = (ROOT / "docs" / "terminals.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(table_lines()[0])
    assert lines[start : start + len(ROWS) + 2] == table_lines()
