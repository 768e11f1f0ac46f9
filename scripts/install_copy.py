"""cuewrap laid out as a regular (not editable) install, for the start-up benchmarks: a new venv
under DIR with this checkout's package copied into its site-packages, its bytecode compiled, and
the `cuewrap` console script pip writes for the entry point (`cuewrap.cli:main`). That is what
`pip install` / `pipx install` leave; the project venv's editable install instead runs an import
hook at every interpreter start. The dependencies are not installed again: the project venv's
site-packages is added to the new venv's path (a .pth line; the editable hook there is not run,
as .pth files are read only in the venv's own site-packages). Prints the command's path.

    python scripts/install_copy.py DIR
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from cuewrap.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def venv_with_paths(dest: str, paths: list[str]) -> tuple[str, str]:
    """A venv in ``dest/venv`` (no pip) whose site-packages puts ``paths`` on the path (a .pth
    of paths only: nothing runs at start); its python and its site-packages."""
    venv = os.path.join(dest, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(site, "_cuewrap_bench_deps.pth"), "w") as fh:
        fh.write("".join(f"{p}\n" for p in paths))
    return python, site


def install_copy(dest: str) -> str:
    # the project venv's packages: the dependencies
    python, site = venv_with_paths(dest, [sysconfig.get_paths()["purelib"]])
    package = os.path.join(site, "cuewrap")
    shutil.copytree(
        os.path.join(ROOT, "cuewrap"), package, ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(package, quiet=1)  # pip compiles an installed package too
    command = os.path.join(os.path.dirname(python), "cuewrap")
    with open(command, "w") as fh:
        fh.write(SCRIPT.format(python=python))
    os.chmod(command, 0o755)
    return command


if __name__ == "__main__":
    print(install_copy(sys.argv[1]))
