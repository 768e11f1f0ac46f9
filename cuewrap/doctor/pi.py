"""The doctor's "Pi" section: the ``pi`` that ``cuewrap pi`` would run, its version, the Node
that runs it (and whether that Node is new enough), and what that Pi gives cuewrap."""

from __future__ import annotations

from collections.abc import Mapping

from cuewrap.doctor.pi_install import PiInstall, find_pi, node_problem
from cuewrap.engine.pi_support import FULL_SINCE, describe, features_of, summaries

INSTALL_HINT = "npm install -g @earendil-works/pi-coding-agent"


def pi_lines(env: Mapping[str, str], install: PiInstall | None = None) -> list[str]:
    i = install if install is not None else find_pi(env)
    lines = ["Pi"]
    if i.pi is None:
        return [*lines, f"  pi: not found on PATH (install it: {INSTALL_HINT})"]
    lines.append(f"  pi: {i.pi}")
    if i.package is None:
        lines.append("  version: unknown (its package.json was not found next to the script)")
    else:
        lines.append(f"  version: {i.version or 'unknown'} ({i.package})")
    lines.append(f"  node: {_node(i)}")
    caps = features_of(i.version)
    if caps is None:
        lines.append("  cues: cannot tell without the version (the bridge says at start)")
    else:
        partial = describe(i.version, caps)
        full = f"full (agent_settled, ui_prompt, agent_before_settle, OSC 7501; Pi ≥ {FULL_SINCE})"
        lines.append(f"  cues: {partial or full}")
        lines.append(f'  privacy.body = "summary" can say: {summaries(caps)}')
    return lines


def _node(i: PiInstall) -> str:
    if i.node is None:
        return "not found (Pi runs on Node.js)"
    have = f"{i.node} {i.node_version}" if i.node_version else f"{i.node} (did not run)"
    need = f"Pi {i.version or ''} needs {i.engines_node}".replace("  ", " ")
    problem = node_problem(i)
    if problem is not None:
        return f"{have}: too old, Pi cannot start ({need}; a newer Node, e.g. 22 LTS)"
    if i.node_ok:
        return f"{have}: ok ({need})"
    return have if i.engines_node is None else f"{have} ({need})"
