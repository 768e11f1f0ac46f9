"""The scripts are Python that ruff and mypy check (scripts/test runs both over scripts/): a
script that is not a ``.py`` file is a thin shell wrapper (make the venv, then run its ``.py``),
never a shell file around a Python program of its own (a heredoc, ``$PY -``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
#: a Python program inside a shell script: one fed on stdin (``"$PY" -``, ``python3 - <<``) or a
#: heredoc named PY…; a one-line ``-c`` check (the version checks of _venv.sh) is not a program
INLINE_PYTHON = re.compile(r"""(\$PY"?|python[0-9.]*"?)\s+-(\s|$)|<<-?\s*'?PY""")


def test_no_shell_script_holds_a_python_program() -> None:
    shells = [p for p in sorted(SCRIPTS.iterdir()) if p.is_file() and p.suffix != ".py"]
    assert shells, SCRIPTS
    held = {p.name: m.group(0) for p in shells if (m := INLINE_PYTHON.search(p.read_text()))}
    assert held == {}, f"Python inside shell scripts (move it into a .py file): {held}"


def test_a_wrapper_runs_the_python_file_next_to_it() -> None:
    for wrapper in sorted(SCRIPTS.iterdir()):
        text = wrapper.read_text() if wrapper.is_file() and wrapper.suffix != ".py" else ""
        for target in re.findall(r'exec "\$PY" (scripts/\S+\.py)', text):
            assert (SCRIPTS.parent / target).is_file(), (wrapper.name, target)
