"""The Pi that ``cuewrap pi`` would run, and the Node that runs it (for ``cuewrap doctor``, and
for one line when Pi could not start). Reads files and runs ``node --version``: never on the
start-up path.

Pi is found as the shell finds ``pi``. Its package (``package.json`` of
``@earendil-works/pi-coding-agent``: version, ``engines.node``) is found from the script: npm's
``pi`` links to the package's ``cli.js`` (``#!/usr/bin/env node``: the ``node`` on PATH runs
it); a wrapper script (``scripts/install-pi`` writes one) names the node and the script it
execs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from typing import NamedTuple

from cuewrap.engine.pi_support import node_requirement, parse_version

PACKAGE_SUFFIX = "pi-coding-agent"
_PATHS = re.compile(r"""["']?(/[^\s"']+)["']?""")


class PiInstall(NamedTuple):
    pi: str | None  # the pi found on PATH (or given)
    package: str | None = None  # the package directory
    version: str | None = None
    engines_node: str | None = None  # e.g. ">=22.19.0"
    node: str | None = None  # the node that runs it
    node_version: str | None = None  # e.g. "22.19.0"; None: could not run it

    @property
    def node_ok(self) -> bool | None:
        """Does the node satisfy ``engines.node``? None when either is unknown."""
        need = node_requirement(self.engines_node)
        have = parse_version(self.node_version or "")
        if need is None or have is None:
            return None
        return have >= need


def which(command: str, env: Mapping[str, str]) -> str | None:
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    for d in env.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", command)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def find_pi(env: Mapping[str, str], pi: str | None = None) -> PiInstall:
    """What is known about ``pi`` (default: the one on PATH) without running Pi itself."""
    path = pi if pi is not None else which("pi", env)
    if path is None:
        return PiInstall(None)
    real = os.path.realpath(path)
    head = _head(real)
    first = head.split("\n", 1)[0]
    node: str | None = None
    scripts: list[str] = []
    if first.startswith("#!") and "node" in first:
        scripts.append(real)  # Pi's own cli.js
        interpreter = first[2:].split()
        if interpreter and os.path.basename(interpreter[0]) == "env":
            node = which("node", env)
        elif interpreter:
            node = interpreter[0]
    else:  # a wrapper: the paths it names
        for candidate in _PATHS.findall(head):
            if os.path.basename(candidate) == "node" and os.access(candidate, os.X_OK):
                node = node or candidate
            elif os.path.exists(candidate):
                scripts.append(candidate)
    package: str | None = None
    meta: dict[str, object] = {}
    for script in scripts:
        package, meta = _package_of(script)
        if package is not None:
            break
    engines = meta.get("engines")
    version = meta.get("version")
    return PiInstall(
        pi=path,
        package=package,
        version=version if isinstance(version, str) else None,
        engines_node=engines.get("node") if isinstance(engines, dict) else None,
        node=node,
        node_version=node_version(node, env) if node else None,
    )


def node_version(node: str, env: Mapping[str, str]) -> str | None:
    try:
        out = subprocess.run(
            [node, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip().lstrip("v")
    return text if out.returncode == 0 and parse_version(text) is not None else None


def node_problem(install: PiInstall) -> str | None:
    """One line when this Pi cannot run on its Node, else None."""
    if install.node_ok is not False:
        return None
    pi = f"Pi {install.version}" if install.version else "Pi"
    found = f"{install.node_version} ({install.node})"
    return f"{pi} needs Node {install.engines_node}, found Node {found}"


def _head(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


def _package_of(script: str) -> tuple[str | None, dict[str, object]]:
    """The Pi package directory above ``script`` (symlinks resolved) and its package.json."""
    d = os.path.dirname(os.path.realpath(script))
    for _ in range(6):
        meta = _read_json(os.path.join(d, "package.json"))
        name = meta.get("name")
        if isinstance(name, str) and name.endswith(PACKAGE_SUFFIX):
            return d, meta
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return None, {}


def _read_json(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
