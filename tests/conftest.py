"""Shared fixtures (the rigs below) and the two rules every test run keeps.

Rigs, each a module of its own whose fixtures are registered here (a test module never
imports fixtures from another test module):

- tests/pirig.py      real Pi against the fake model (``pi_session``, ``pi_home``, …)
- tests/desktoprig.py a private D-Bus session bus and dunst (``bus``, ``dunst``)
- tests/screenrig.py  the screen watcher around its worker process (``harness``)
- tests/termrig.py   real terminals (xterm, kitty, foot) on dunst's display (``launch``)
- tests/tmuxrig.py    a private tmux server running cuewrap pi, a client attached (``tmux_scene``)
- tests/clauderig.py  real Claude Code under cuewrap, a fake Anthropic API (``claude_sessions``)
- tests/codexrig.py   real Codex CLI under cuewrap, a fake OpenAI Responses API (``codex_sessions``)
- tests/geminirig.py  real Gemini CLI under cuewrap, a fake Gemini API (``gemini_sessions``)
- tests/opencoderig.py real opencode under cuewrap, the fake chat API (``opencode_sessions``)
- tests/launch.py     every pexpect child a test marked ``started(p)`` closed after it
                      (``close_started``, autouse)

Rule 1, tiers: every test carries exactly one tier marker, saying what it needs to run
(docs/testing.md): ``unit``, ``pty``, ``pi``, ``tmux``, ``ssh``, ``desktop`` or ``realterm``.
A test without one, or with two, fails collection with a message saying what to add; a test
that uses real Pi (the ``pi_bin`` fixture) cannot be ``unit`` or ``pty``, so
``scripts/test --fast`` (``-m "unit or pty"``) never needs Node or Pi.

Rule 2, under CI (``CI=true``) a skipped test is a failed test: every tool a test needs (Pi,
tmux, sshd, dunst, tic) is installed by the project's own scripts, so a skip there means an
install step is missing or broken, and a missing install step must not pass unseen.
"""

import os
from collections.abc import Iterator

import pytest
from clauderig import claude_sessions
from codexrig import codex_sessions
from desktoprig import bus, dunst, dunst_menu
from geminirig import gemini_sessions
from launch import close_started
from opencoderig import opencode_sessions
from pirig import ask_ext, fakemodel, pi_bin, pi_home, pi_session, pi_version
from screenrig import harness
from termrig import launch, xdesk
from tmuxrig import tmux_scene

__all__ = [
    "ask_ext", "bus", "claude_sessions", "close_started", "codex_sessions", "dunst",
    "dunst_menu", "fakemodel", "gemini_sessions", "harness", "launch", "opencode_sessions",
    "pi_bin", "pi_home",
    "pi_session", "pi_version", "tmux_scene", "xdesk",
]  # fmt: skip

#: The tiers, from the least a test needs to the most (also registered in pyproject.toml).
TIERS = ("unit", "pty", "pi", "tmux", "ssh", "desktop", "realterm")
FAST = ("unit", "pty")  # scripts/test --fast


_HOW = (
    "Add one line at the top of the module, after its imports: `pytestmark = pytest.mark.unit` "
    "(or pty, pi, …) when all its tests need the same; in a module with tests of several "
    "tiers, mark each test instead (`@pytest.mark.pi`), never both. Tiers: unit (in one "
    "process), pty (cuewrap or small programs run as processes, PTYs; no Node or Pi), pi "
    "(real Pi or aider), tmux, ssh, desktop (D-Bus and dunst), realterm (real terminal "
    "emulators); see docs/testing.md."
)


def _tier_problem(item: pytest.Item) -> str | None:
    tiers = sorted({m.name for m in item.iter_markers() if m.name in TIERS}, key=TIERS.index)
    if not tiers:
        return "no tier marker"
    if len(tiers) > 1:
        return (
            f"{len(tiers)} tier markers ({', '.join(tiers)}): keep the one naming what it needs "
            f"beyond the others (real Pi inside tmux is `tmux`)"
        )
    if tiers[0] in FAST and "pi_bin" in getattr(item, "fixturenames", ()):
        return (
            f"marked `{tiers[0]}` but runs real Pi (the pi_bin fixture): mark it `pi` (or tmux, "
            f"ssh, desktop, realterm); scripts/test --fast runs {' and '.join(FAST)} without Pi"
        )
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects: an unmarked test must not slip through
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    by_module: dict[str, dict[str, str]] = {}  # module -> test (parameters aside) -> problem
    for item in items:
        problem = _tier_problem(item)
        if problem:
            module, _, test = item.nodeid.partition("::")
            by_module.setdefault(module, {})[f"  {test.split('[')[0]}: {problem}"] = ""
    if by_module:
        lines = [f"{module}:\n" + "\n".join(tests) for module, tests in by_module.items()]
        message = (
            "every test needs exactly one tier marker (tests/conftest.py).\n"
            + "\n".join(lines)
            + "\n"
            + _HOW
        )
        if hasattr(config, "workerinput"):
            # a pytest-xdist worker (scripts/test --fast): an error raised here would only
            # say that the worker crashed; a stop request carries the message to the run's
            # summary ("Interrupted: …"), the run fails and no test runs
            items.clear()
            session.shouldstop = message
            return
        raise pytest.UsageError(message)
    for item in items:
        # under pytest-xdist's loadgroup (the whole suite in scripts/test) one worker runs a
        # group's tests one after the other, beside the other workers' tests: the real
        # terminal emulators (they draw with the CPU), and opencode (the heaviest program to
        # start: its runtime's start-up takes a core for seconds), never two at once
        if item.get_closest_marker("realterm") is not None:
            item.add_marker(pytest.mark.xdist_group("terminals"))
        elif "opencode_sessions" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("opencode"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (a missing install step?): {reason}"
