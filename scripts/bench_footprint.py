"""What one `cuewrap pi` session holds in memory: the PSS of each of its own processes (the
relay, Pi's session leader, the desktop workers; not Pi nor what Pi runs), with desktop
notifications and the desktop's do-not-disturb followed, beside a minimal Python relay.

    scripts/bench_footprint [--rounds 3] [--pi-version 1.4.0] [--against REV]

Each session runs real Pi (answering the local fake model) on a private D-Bus with dunst under
Xvfb (tests/desktoprig.py), `quiet.follow_desktop` on: the do-not-disturb watch starts with the
cue side; the user is reported away and Pi finishes a run, so a desktop notification is
delivered (the D-Bus worker starts at the first). Two seconds later every process of the
session's tree outside Pi's subtree is read from /proc/PID/smaps_rollup. PSS counts a page
shared by N processes as 1/N in each, so the sum over a session is what it holds; pages it
shares with processes outside it (the Python binary's, with this script) are divided too, the
same for every configuration. Sessions run one at a time, the configurations in turn each
round; medians. Each cuewrap runs as a user installs it, not as this checkout's editable
install (whose import hook, run by `site` at every interpreter's start, costs each process
about 1 MB): a venv of its own whose site-packages has the package copy and, for the
dependencies, the project venv's site-packages on its path (a .pth of paths only, as
scripts/install_copy.py does). `--against REV`: REV's `cuewrap/` too (`git archive`, as
`scripts/bench --against` does). The minimal relay is `scripts/bench`'s, run by the work
tree's venv's interpreter.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import sys
import sysconfig
import tempfile
import time

from bench import MINIMAL_RELAY, PY, ROOT, cuewrap_copy, git_label, imported_from, worktree_label
from install_copy import venv_with_paths

sys.path.insert(0, os.path.join(ROOT, "tests"))

from desktoprig import _dunst, private_bus
from fakemodel import FakeModel, text
from pirig import (
    PiSession,
    _descendants,
    child_pids,
    install_pi,
    make_pi_home,
    ready_away,
    wrapped_pid,
)

FIELDS = ("Pss", "Rss", "Private_Dirty")


def smaps(pid: int) -> dict[str, int]:
    """Kilobytes of ``FIELDS`` from /proc/PID/smaps_rollup (empty if it is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in FIELDS:
                    out[key] = int(rest.split()[0])
    except OSError:
        return {}
    return out


def role(pid: int, relay: int, pi: int | None) -> str:
    """What a process of the session is: the relay, Pi's leader, or a worker by its module."""
    if pid == relay:
        return "relay"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().decode(errors="replace")
    except OSError:
        return "?"
    if pi is not None and pid == parent(pi):
        return "leader"
    module = re.search(r"cuewrap\.[\w.]+", argv)  # a worker: python -c '… from cuewrap.X …'
    return module.group(0).rsplit(".", 1)[-1] if module else argv.replace("\0", " ")[:40]


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        data = fh.read()
    return int(data[data.rfind(")") + 2 :].split()[1])


def session_tree(relay: int, pi: int | None) -> dict[str, dict[str, int]]:
    """Each process of the session outside Pi's subtree, by role: its ``smaps``."""
    skip: set[int] = set()
    if pi is not None:
        skip = {pi} | {p for p, _ in _descendants(pi)}
    out: dict[str, dict[str, int]] = {}
    for pid in [relay] + [p for p, _ in _descendants(relay) if p not in skip]:
        name = role(pid, relay, pi)
        while name in out:
            name += "'"
        out[name] = smaps(pid)
    return out


def one_session(
    python: str, code: str, env: dict[str, str], home_cwd: pathlib.Path, log: pathlib.Path,
    fm: FakeModel,
) -> dict[str, dict[str, int]]:  # fmt: skip
    """Start it, have it notify (cuewrap), read its tree, close it."""
    if code:
        argv = [python, "-m", "cuewrap", "--log", str(log), "pi"]
    else:
        argv = [python, "-c", MINIMAL_RELAY, "pi"]
    s = PiSession(argv, env=env, cwd=home_cwd, log_path=log if code else None)
    try:
        s.wait_ready(timeout=60)
        pi = wrapped_pid(s.pid) if code else child_pids(s.pid)[0]
        if code:
            s.wait_log(lambda r: r.get("kind") == "desktop_dnd" and "quiet" in r, 20)
            ready_away(s)
            fm.push(text("done"))
            s.prompt("footprint")
            s.wait_log(
                lambda r: (
                    r.get("kind") == "delivery"
                    and r.get("channel") == "desktop"
                    and r.get("state") == "delivered"
                ),
                30,
            )
        time.sleep(2.0)
        return session_tree(s.pid, pi)
    finally:
        s.close()
        log.unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pi-version", default="1.4.0", help="Pi's version (scripts/install-pi)")
    ap.add_argument("--against", metavar="REV", help="also REV's cuewrap, in turn")
    a = ap.parse_args()
    os.environ.pop("CUEWRAP_LOG", None)
    with FakeModel() as fm, tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        home = make_pi_home(root / "pi", fm.base_url, install_pi(a.pi_version))
        base = {k: v for k, v in home.env.items() if k != "PYTHONPATH"}
        codes = {"now": (cuewrap_copy(str(root / "now"), None), worktree_label())}
        if a.against:
            codes["before"] = (cuewrap_copy(str(root / "before"), a.against), git_label(a.against))
        (root / "desk").mkdir()
        with private_bus(root / "desk") as bus, _dunst(bus) as desk:
            desktop = {k: desk.env[k] for k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
                                                 "XDG_RUNTIME_DIR")}  # fmt: skip
            desktop["CUEWRAP_QUIET_FOLLOW_DESKTOP"] = "true"
            envs = {"": dict(base)} | {code: dict(base, **desktop) for code in codes}
            pythons = {"": PY} | {
                code: venv_with_paths(
                    os.path.join(path, "install"), [path, sysconfig.get_paths()["purelib"]]
                )[0]
                for code, (path, _) in codes.items()
            }
            names = {"": "minimal relay"} | {code: f"cuewrap pi, {code}" for code in codes}
            print(f"One session's memory (PSS, MB), median of {a.rounds}, Pi {a.pi_version}, "
                  f"dunst, do-not-disturb followed, a desktop notification sent "
                  f"(load {os.getloadavg()[0]:.2f}):")  # fmt: skip
            for code, (path, label) in codes.items():
                found = imported_from(pythons[code], None, home.cwd, path, code)
                print(f"  {code}: {label}, {found}")
            seen: dict[str, list[dict[str, dict[str, int]]]] = {c: [] for c in names}
            order = list(names)
            for n in range(a.rounds):
                turn = n % len(order)
                for code in order[turn:] + order[:turn]:
                    log = root / f"log-{code or 'min'}.jsonl"
                    seen[code].append(one_session(pythons[code], code, envs[code], home.cwd, log,
                                                  fm))  # fmt: skip
    totals: dict[str, float] = {}
    for code, runs in seen.items():
        roles = sorted({r for run in runs for r in run}, key=lambda r: (r != "relay", r))
        total = statistics.median(sum(p.get("Pss", 0) for p in run.values()) for run in runs)
        rss = statistics.median(sum(p.get("Rss", 0) for p in run.values()) for run in runs)
        totals[code] = total / 1024
        parts = ", ".join(
            f"{r} {statistics.median(run.get(r, {}).get('Pss', 0) for run in runs) / 1024:.1f}"
            for r in roles
        )
        print(f"  {names[code]:<22} {total / 1024:5.1f} MB  ({parts}; RSS {rss / 1024:.1f})")
    if "before" in totals:
        print(f"  now / before: x{totals['now'] / totals['before']:.2f}")


if __name__ == "__main__":
    main()
