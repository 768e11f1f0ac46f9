"""The package's import structure: no import circle between cuewrap's modules, and a budget
for what is imported before the child is spawned (the user waits for those milliseconds)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

pytestmark = pytest.mark.pty

PACKAGE = Path(__file__).resolve().parent.parent / "cuewrap"
RECORDER = Path(__file__).resolve().parent / "children" / "spawn_imports.py"

# Everything cuewrap's own code imports before the spawn, on the widest start-up path (Pi mode
# in a terminal, a config file, --log). A module missing from here fails the test: make the
# import lazy (after the spawn, see session.run) or, if it is cheap and needed, add it here.
SPAWN_BUDGET = frozenset(
    {
        "cuewrap",
        "cuewrap.args",
        "cuewrap.bridge",  # for channel; everything else in it loads on first use
        "cuewrap.bridge.channel",
        "cuewrap.cli",
        "cuewrap.config",
        "cuewrap.context",  # the session's shared parts, one NamedTuple (records only)
        "cuewrap.decisionlog",
        "cuewrap.host",
        "cuewrap.loop",
        "cuewrap.plain",  # fds 0-2 held open (and exec as is without a terminal)
        "cuewrap.records",  # NamedTuple and TYPE_CHECKING without typing
        "cuewrap.wiring.startup",  # the garbage collector's pause: gc only
        "cuewrap.wiring.mode",  # the session's mode, one NamedTuple (records only)
        "cuewrap.wiring.session",
        "cuewrap.term",
        "cuewrap.term.sequences",
        "cuewrap.relay",  # the package of leader: it imports nothing
        "cuewrap.relay.leader",  # the spawn itself (the child under a session leader)
        "__future__",
        "collections",  # namedtuple (cuewrap.records), loaded with re anyway
        "collections.abc",
        "errno",
        "fcntl",
        "gc",  # built in: paused while cuewrap starts (cli.run)
        "heapq",
        "itertools",
        "math",
        "os",
        "re",
        "select",
        "shlex",
        "signal",
        "_socket",  # the bridge's listening socket (the socket module's set-up costs ms)
        "stat",  # config and log files must be regular files (loaded by os at start anyway)
        "struct",
        "sys",
        "termios",
        "time",
        "tomllib",  # only when there is a config file
        "tty",
    }
)
# Not even pulled in by something else on the usual path (no config file, no --log): they cost
# milliseconds each before Pi can be started. (tomllib, for a config file, imports typing.)
NOT_ON_THE_USUAL_PATH = frozenset({"typing", "socket", "selectors"})
# Never before the spawn, not even pulled in by something else (docs/architecture.md#choices).
HEAVY = frozenset(
    {
        "argparse",
        "asyncio",
        "dataclasses",
        "importlib.metadata",
        "inspect",
        "jeepney",
        "json",
        "logging",
        "loguru",
        "pathlib",
        "notifypy",
        "prompt_toolkit",
        "pyte",
        "subprocess",
        "tempfile",
    }
)


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def import_graph() -> dict[str, set[str]]:
    """Every ``import`` of a cuewrap module by a cuewrap module, wherever it is written (top
    level, inside a function, under ``TYPE_CHECKING``): a lazy import is still a dependency.
    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module."""
    mods = _modules()
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = name.split(".")[: len(name.split(".")) - node.level + is_package]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base
                    for alias in node.names
                ]
            else:
                continue
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_import_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    assert "cuewrap.doctor" in graph["cuewrap.cli"]  # imported inside main()
    assert "cuewrap.args" in graph["cuewrap.wiring.session"]  # under TYPE_CHECKING
    assert "cuewrap.engine.wording" in graph["cuewrap.engine.waits"]  # from pkg import module


def test_cycles_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_folder_is_a_regular_package() -> None:
    """Each folder of modules has an ``__init__.py`` (one without would import only as an
    implicit namespace package, unlike all the others)."""
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert (
        sorted(str(f.relative_to(PACKAGE)) for f in folders if not (f / "__init__.py").exists())
        == []
    )


def test_no_import_circle() -> None:
    assert cycles(import_graph()) == []


# The floors of cuewrap (docs/architecture.md#floors), lowest first. A module imports only its
# own floor or those below it: never a floor above, so no circle can form between packages. A
# name is a package of cuewrap/ (all its modules), or "" for the top-level modules.
FLOORS: tuple[frozenset[str], ...] = (
    # the ground floor: pure or terminal-level parts that the session, the controller and the
    # doctor all build on (the top-level modules but the entry; the engine; the byte filters)
    frozenset({"", "engine", "term"}),
    frozenset({"relay", "bridge", "screen", "generic", "tmux"}),  # sources and tmux
    frozenset({"deliver", "sessions"}),  # effectors; what a session tells others
    frozenset({"answer"}),  # answering Pi's dialogs (reads the screen, finds a session)
    # one session: built, run, torn down; `cuewrap config` (its test notification takes a
    # reminder's route: deliver/route.py); `cuewrap doctor`. Side by side: none imports another
    # (test_the_commands_beside_the_session_import_nothing_of_it)
    frozenset({"wiring", "configure", "doctor", "phone"}),
    frozenset({"entry"}),  # cli and __main__: parse, then hand over
)
ENTRY = frozenset({"cuewrap.cli", "cuewrap.__main__"})


def _place(name: str) -> str:
    """The floor's name for a module: its package under cuewrap/, "" or "entry"."""
    if name in ENTRY:
        return "entry"
    parts = name.split(".")  # cuewrap, cuewrap.loop, cuewrap.engine, cuewrap.engine.step
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return parts[1]
    return ""


def _floor(name: str) -> int:
    place = _place(name)
    return next(i for i, floor in enumerate(FLOORS) if place in floor)


def _ground(name: str) -> bool:
    return name == "cuewrap" or _floor(name) == 0


def test_every_package_has_a_floor() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    placed = set().union(*FLOORS)
    assert packages <= placed, f"give these a floor in FLOORS: {sorted(packages - placed)}"
    assert placed - {"", "entry"} <= packages, sorted(placed - {"", "entry"} - packages)


def upward_arrows(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module's imports of a floor above its own."""
    upward = {
        n: sorted(t for t in targets if _floor(t) > _floor(n)) for n, targets in graph.items()
    }
    return {name: targets for name, targets in upward.items() if targets}


def test_no_module_imports_a_floor_above_its_own() -> None:
    assert upward_arrows(import_graph()) == {}


def test_the_commands_beside_the_session_import_nothing_of_it() -> None:
    """`cuewrap config` and `cuewrap doctor` stand beside the session's wiring, not above it:
    neither imports it, nor one the other (what they share lives on the floors below)."""
    apart = {"wiring", "configure", "doctor"}
    crossing = sorted(
        (n, t)
        for n, targets in import_graph().items()
        for t in targets
        if _place(n) in apart and _place(t) in apart and _place(n) != _place(t)
    )
    assert crossing == []


def test_upward_arrows_finds_one() -> None:
    graph = {"cuewrap.loop": {"cuewrap.wiring.session"}, "cuewrap.wiring.session": {"cuewrap.loop"}}
    assert upward_arrows(graph) == {"cuewrap.loop": ["cuewrap.wiring.session"]}
    assert _floor("cuewrap.engine.reducer") == 0 == _floor("cuewrap.loop") == _floor("cuewrap")
    assert _floor("cuewrap.tmux.side") < _floor("cuewrap.deliver.terminal")
    assert _floor("cuewrap.wiring.session") < _floor("cuewrap.cli")
    assert _floor("cuewrap.wiring") == _floor("cuewrap.wiring.controller")


def test_ground_floor_imports_only_ground_floor() -> None:
    graph = import_graph()
    above = {
        name: sorted(t for t in targets if not _ground(t))
        for name, targets in graph.items()
        if _ground(name)
    }
    assert {name: t for name, t in above.items() if t} == {}


def test_relay_imports_only_ground_floor_and_itself() -> None:
    """The relay and its plumbing (``cuewrap/relay/``) sit on the ground floor alone: the cue
    side (controller, delivery, tmux, ...) hangs off its sink, never the other way round."""
    graph = import_graph()
    relay = {name for name in graph if name == "cuewrap.relay" or name.startswith("cuewrap.relay.")}
    assert {"cuewrap.relay.relay", "cuewrap.relay.leader", "cuewrap.relay.events"} <= relay
    above = {
        name: sorted(t for t in graph[name] if not _ground(t) and t not in relay) for name in relay
    }
    assert {name: t for name, t in above.items() if t} == {}
    assert graph["cuewrap.relay"] == set()  # imported before the spawn (leader's package)


# -- what is imported before the spawn ---------------------------------------------------------
def spawn_imports(tmp_path: Path, widest: bool = True) -> tuple[list[tuple[str, str]], set[str]]:
    """Run ``cuewrap pi`` (a stand-in ``pi``) in a PTY; return the import statements cuewrap
    ran before spawning it, as (module, importer), and the modules loaded by then. ``widest``:
    with a config file and ``--log``; else the usual path (neither)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "pi").write_text("#!/bin/sh\necho STAND-IN-PI\n")
    (bindir / "pi").chmod(0o755)
    config = tmp_path / "xdg" / "cuewrap"
    config.mkdir(parents=True)
    if widest:
        (config / "config.toml").write_text("[notify]\nbell = true\n")
    env = dict(os.environ, TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.pop("TMUX", None)
    env.pop("CUEWRAP_LOG", None)
    out = tmp_path / "imports.tsv"
    log = ["--log", str(tmp_path / "log.jsonl")] if widest else []
    argv = [str(RECORDER), str(out), *log, "pi"]
    p = pexpect.spawn(sys.executable, argv, env=env, timeout=20, dimensions=(24, 80))
    p.expect("STAND-IN-PI")
    p.expect(pexpect.EOF)
    p.close()
    assert p.exitstatus == 0, p.before
    statements: list[tuple[str, str]] = []
    loaded: set[str] = set()
    for line in out.read_text().splitlines():
        name, importer = line.split("\t")
        if name == "loaded":
            loaded.add(importer)
        else:
            statements.append((name, importer))
    return statements, loaded


def test_start_up_imports_stay_within_the_budget(tmp_path: Path) -> None:
    statements, loaded = spawn_imports(tmp_path)
    # the recorder saw the start-up path (else an empty record would pass)
    assert ("cuewrap.relay.leader", "cuewrap.wiring.session") in statements
    assert ("cuewrap.bridge.channel", "cuewrap.wiring.session") in statements  # Pi mode, bridge on
    assert "tomllib" in loaded  # the config file was read
    ours = sorted({name for name, importer in statements if importer.startswith("cuewrap")})
    over = [name for name in ours if name not in SPAWN_BUDGET]
    assert over == [], f"imported before the spawn, not in the budget: {over}; all: {ours}"
    heavy = sorted((loaded | set(ours)) & HEAVY)
    assert heavy == [], f"heavy modules loaded before the spawn: {heavy}; loaded: {sorted(loaded)}"


def test_the_usual_start_up_path_loads_neither_typing_nor_socket(tmp_path: Path) -> None:
    """No config file, no --log: the modules in NOT_ON_THE_USUAL_PATH are not loaded before Pi
    is spawned (the settings use cuewrap.records, the bridge's socket _socket)."""
    statements, loaded = spawn_imports(tmp_path, widest=False)
    assert ("cuewrap.bridge.channel", "cuewrap.wiring.session") in statements  # Pi mode, bridge on
    assert "cuewrap.config" in loaded and "tomllib" not in loaded
    assert sorted(loaded & NOT_ON_THE_USUAL_PATH) == []


def test_the_relay_leaves_the_cue_side_for_after_the_first_frame() -> None:
    """What the session imports to start relaying while the child boots (docs/architecture.md,
    start-up) loads neither the cue side nor every fact: those are built after the child's
    first frame (cuewrap/wiring/pending.py), so that they do not take the CPU from its boot."""
    code = (
        "import sys\n"
        "import cuewrap.wiring.session, cuewrap.relay.relay, cuewrap.relay.inject\n"
        "import cuewrap.wiring.pending\n"
        "import cuewrap.term.answers, cuewrap.term.focus, cuewrap.term.tracker\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('cuewrap'))))\n"
    )
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert "cuewrap.relay.relay" in loaded and "cuewrap.factbase" in loaded  # it ran
    later = {
        "cuewrap.facts",
        "cuewrap.wiring.controller",
        "cuewrap.wiring.cueside",
        "cuewrap.engine",
    }
    later |= {"cuewrap.deliver", "cuewrap.bridge.server", "cuewrap.screen", "cuewrap.tmux"}
    assert sorted(loaded & later) == []
