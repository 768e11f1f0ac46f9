"""Does Konsole show a title written just before its next look at the session?

Konsole (22.12) takes a program's title (OSC 2) in 20 ms after it arrives, and shows it only
when it next looks at the session: 2 s after output or a key (``SessionController::
snapshot``, a Qt coarse timer that fires on a whole second of the monotonic clock). A look
inside those 20 ms shows the old title, and nothing shows the new one until more output
comes. cuewrap therefore writes its title again 0.25 s later in Konsole
(``cuewrap.deliver.delivery.KONSOLE_AGAIN``; docs/terminals.md).

Two Konsole windows side by side on a private Xvfb each run a program that, ``--rounds``
times for each offset of ``OFFSETS``: writes a byte just after a whole second (Konsole looks
2 s later), sets the title ``tN`` that many ms before that look and stays quiet 3.5 s. In the
second window the title is written again ``KONSOLE_AGAIN`` s later, as cuewrap does. The
window titles are read every 0.1 s (``xprop``). Printed per window and offset: how many
titles showed within 2.5 s (Konsole's own delay), how many only at the next output (seconds
late: a mark would stay unseen while Pi waits), how many never.

    scripts/probe_konsole_title [--rounds N]

Needs Xvfb, konsole and xprop (Debian: xvfb, konsole, x11-utils). About 40 s per round.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cuewrap.deliver.delivery import KONSOLE_AGAIN  # noqa: E402

OFFSETS = (5, 10, 15, 20, 25, 40)  # ms before Konsole's look that the title is written
CHILD = r"""
import os, sys, time
again, rounds, log = float(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3], "w")
log.write(os.environ.get("WINDOWID", "") + "\n"); log.flush()
w = lambda b: os.write(1, b)
w(b"\x1b]30;%w\x07")
time.sleep(3)
n = 0
for _ in range(rounds):
    for ms in OFFSETS:
        k = int(time.monotonic()) + 1
        time.sleep(k + 0.002 - time.monotonic())
        w(b".")  # Konsole looks 2 s later, on a whole second of the monotonic clock
        time.sleep(k + 2.0 - ms / 1000 - time.monotonic())
        w(b"\x1b]2;t%d\x07" % n)
        log.write(f"{time.time()} t{n} {ms}\n"); log.flush()
        n += 1
        if again:
            time.sleep(again)
            w(b"\x1b]2;t%d\x07" % (n - 1))
        time.sleep(3.5)
log.write("end\n"); log.flush()
time.sleep(60)
""".replace("OFFSETS", repr(OFFSETS))
SOON = 2.5  # Konsole shows a title up to 2 s after output; later: missed at its look


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    missing = [t for t in ("Xvfb", "konsole", "xprop") if shutil.which(t) is None]
    if missing:
        print(f"needs {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="probe-konsole-") as tmp:
        return _run(Path(tmp), args.rounds)


def _run(tmp: Path, rounds: int) -> int:
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0", "800x600x24"],
        pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(w)
    display = os.read(r, 16).decode().strip()
    os.close(r)
    env = {**os.environ, "DISPLAY": f":{display}", "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    (tmp / "child.py").write_text(CHILD)
    windows = {"once": 0.0, "again": KONSOLE_AGAIN}
    procs = []
    try:
        for name, again in windows.items():
            argv = [sys.executable, str(tmp / "child.py"), str(again), str(rounds),
                    str(tmp / f"{name}.log")]  # fmt: skip
            procs.append(subprocess.Popen(
                ["konsole", "--separate", "--nofork", "-e", *argv], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))  # fmt: skip
        ids = {name: _window_id(tmp / f"{name}.log") for name in windows}
        shown: dict[str, dict[str, float]] = {name: {} for name in windows}
        while not all(_ended(tmp / f"{name}.log") for name in windows):
            for name, wid in ids.items():
                title = _title(env, wid)
                if title:
                    shown[name].setdefault(title.split(" — ")[0], time.time())
            time.sleep(0.1)
        print(f"Konsole: a title written N ms before its look at the session, {rounds} times each")
        for name in windows:
            print("  written once:" if name == "once" else f"  again {KONSOLE_AGAIN} s later:")
            lines = (tmp / f"{name}.log").read_text().splitlines()
            written = [line.split() for line in lines if line.count(" ") == 2]
            for ms in OFFSETS:
                late = [shown[name][t] - float(at) for at, t, m in written
                        if int(m) == ms and t in shown[name]]  # fmt: skip
                never = sum(1 for _, t, m in written if int(m) == ms and t not in shown[name])
                soon = sum(1 for s in late if s <= SOON)
                later = ", ".join(f"{s:.1f} s" for s in sorted(s for s in late if s > SOON))
                print(f"    {ms:3d} ms: {soon} shown within {SOON:g} s, "
                      f"{len(late) - soon} later ({later or '-'}), {never} never")  # fmt: skip
    finally:
        for p in procs:
            p.kill()
            p.wait()
        xvfb.kill()
        xvfb.wait()
    return 0


def _window_id(log: Path) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().strip():
            return log.read_text().splitlines()[0]
        time.sleep(0.1)
    raise SystemExit(f"no Konsole window came up ({log.name})")


def _ended(log: Path) -> bool:
    return log.exists() and log.read_text().endswith("end\n")


def _title(env: dict[str, str], wid: str) -> str:
    out = subprocess.run(
        ["xprop", "-id", wid, "_NET_WM_NAME"], env=env, capture_output=True, text=True
    ).stdout
    return out.split('"', 1)[1].rsplit('"', 1)[0] if '"' in out else ""


if __name__ == "__main__":
    sys.exit(main())
