"""How fast an answer from the phone closes the dialog (docs/phone.md): real Pi under cuewrap
with the phone on, on the fake model, against the local ntfy stand-in (tests/ntfystand.py).
Each round: away, a confirm; the reminder's Yes button tapped (the ``http`` request the ntfy
app makes); timed from the tap's request to the ``answer`` record ``answered`` in the decision
log (Pi closed the dialog with that option; the log read every 10 ms). The record's own
``ms`` (from the claim to the close) is shown beside it.

    scripts/bench_phone [--rounds N] [--pi-version V]      (default 20, 1.4.0)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any

from bench import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))

from fakemodel import FakeModel, text, tool_call
from ntfystand import NtfyStandIn
from pirig import TEST_EXT, PiSession, install_pi, make_pi_home, pi_argv, ready_away

TOPIC, REPLY = "cuewrap-bench-reminders-Hx72Lq", "cuewrap-bench-answers-Pz39Wk"


def answered(s: PiSession, before: int) -> dict[str, Any] | None:
    done = [r for r in s.log_records("answer") if r.get("result") == "answered"]
    return done[before] if len(done) > before else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--pi-version", default="1.4.0")
    a = ap.parse_args()
    os.environ.pop("CUEWRAP_LOG", None)
    with FakeModel() as fm, NtfyStandIn() as ntfy, tempfile.TemporaryDirectory() as tmp:
        home = make_pi_home(pathlib.Path(tmp) / "pi", fm.base_url, install_pi(a.pi_version))
        log = pathlib.Path(tmp) / "cuewrap.log"
        env = dict(home.env, CUEWRAP_PHONE_ENABLED="true", CUEWRAP_PHONE_NTFY_SERVER=ntfy.url,
                   CUEWRAP_PHONE_TOPIC=TOPIC, CUEWRAP_PHONE_REPLY_TOPIC=REPLY)  # fmt: skip
        argv = pi_argv(["-e", str(TEST_EXT)], wrap=True, log_path=log, cuewrap_args=())
        s = PiSession(argv, env=env, cwd=home.cwd, log_path=log)
        tap_ms: list[float] = []
        claim_ms: list[float] = []
        try:
            s.wait_ready(timeout=60)
            for n in range(a.rounds):
                ready_away(s)
                fm.push(tool_call("test_confirm", {"title": f"Round {n}"}), text(f"round {n} done"))
                s.prompt(f"run test_confirm {n}")
                deadline = time.monotonic() + 20
                notes: list[dict[str, Any]] = []
                while len(notes) <= n and time.monotonic() < deadline:
                    notes = [m for m in ntfy.published(TOPIC) if m.get("actions")]
                    time.sleep(0.01)
                if len(notes) <= n:
                    raise SystemExit(f"round {n}: no reminder with buttons")
                t0 = time.monotonic()
                status = ntfy.tap(notes[n], "Yes")
                assert status == 200, status
                record = None
                while record is None and time.monotonic() < t0 + 10:
                    record = answered(s, n)
                    time.sleep(0.01)
                if record is None:
                    raise SystemExit(f"round {n}: the dialog did not close from the phone")
                tap_ms.append((time.monotonic() - t0) * 1000)
                claim_ms.append(float(record["ms"]))
                s.wait_for_screen(rf"round {n} done", timeout=15)
        finally:
            s.close()

    def line(name: str, xs: list[float]) -> str:
        return f"  {name}: p50 {statistics.median(xs):.0f} ms, max {max(xs):.0f} ms"

    print(f"Phone button -> dialog closed, {len(tap_ms)} rounds, Pi {a.pi_version}, local ntfy "
          f"stand-in (load {os.getloadavg()[0]:.2f}):")  # fmt: skip
    print(line("tap's request -> answered record", tap_ms))
    print(line("claim -> dialog closed (the record's ms)", claim_ms))


if __name__ == "__main__":
    main()
