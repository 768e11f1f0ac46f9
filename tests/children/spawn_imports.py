"""Run cuewrap's CLI and record, at the moment it spawns the child, what it had imported.

    python spawn_imports.py OUT [CUEWRAP_ARGS...]

``builtins.__import__`` is wrapped before cuewrap is imported: every ``import`` statement
executed from then on is noted with the module that executed it (already-loaded modules
included, so nothing hides behind what the interpreter loaded at start-up). ``os.forkpty`` and
``os.fork`` are wrapped so that their first call (the session spawning the child) writes the
notes to OUT as ``imported<TAB>importer`` lines, then ``loaded<TAB>`` lines for every module
loaded since this program started. Then the CLI runs as the ``cuewrap`` command would.
"""

import builtins
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

notes: dict[tuple[str, str], None] = {}  # (imported, importer), in order, once each


def main() -> int:
    out = sys.argv[1]
    at_start = set(sys.modules)
    real_import = builtins.__import__
    real_forkpty, real_fork = os.forkpty, os.fork

    def noting_import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        module = real_import(name, globals, locals, fromlist, level)
        importer = str((globals or {}).get("__name__", "?"))
        if level:
            package = str((globals or {}).get("__package__") or "")
            base = package.rsplit(".", level - 1)[0] if level > 1 else package
            name = f"{base}.{name}" if name else base
        notes[(name, importer)] = None
        for item in fromlist or ():
            if f"{name}.{item}" in sys.modules:  # from package import submodule
                notes[(f"{name}.{item}", importer)] = None
        return module

    def snapshot() -> None:
        if os.path.exists(out):
            return
        with open(out, "w") as fh:
            fh.writelines(f"{name}\t{importer}\n" for name, importer in notes)
            fh.writelines(f"loaded\t{name}\n" for name in sorted(set(sys.modules) - at_start))

    def forkpty() -> tuple[int, int]:
        snapshot()
        return real_forkpty()

    def fork() -> int:
        snapshot()
        return real_fork()

    os.forkpty, os.fork = forkpty, fork
    builtins.__import__ = noting_import
    sys.argv = ["cuewrap", *sys.argv[2:]]
    from cuewrap.cli import main as cuewrap_main

    return cuewrap_main()


if __name__ == "__main__":
    sys.exit(main())
