"""The demo: `cuewrap pi` on the project's own local scripted model — no API key, no network once
installed. Installs Pi (and Node 22 when needed) and says so while it does, starts the scripted
model (scripts/demo_tasks.py: several small tasks), runs Pi in a throw-away Pi home, and keeps
the decision log for you to read afterwards. Run through `scripts/demo`, which makes the venv.

    scripts/demo [PI_VERSION]        (default 1.4.0; "latest" for the newest published Pi)
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TASKS = """
cuewrap demo — Pi {version} on a scripted local model (no API key).
Type a task's number in Pi and press Enter, then switch to another window while it runs:
  1  quick: a 5-second command          -> title [✓], notification "Finished"
  2  long: 20 seconds in five steps     -> time to leave and come back before it ends
  3  ask: Pi asks you to confirm        -> title [?], notification "Needs your input"
  4  fail: the model answers an error   -> title [!], notification "Failed"
  Esc while a task runs cancels it      -> [-] "Cancelled"
Reminders come only while you are away (another window or tab); coming back clears the mark.
In Pi: /cue shows what cuewrap sees, /cue off and /cue on toggle it, /quit leaves.
Decision log (why a reminder came or not): {log}
Press Enter to start."""


def say(text: str) -> None:
    print(f"demo: {text}", flush=True)


def xdg(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or Path.home() / default)


def install_pi(version: str) -> Path:
    """The bin directory of Pi ``version`` (installed first when missing, with progress)."""
    cache = Path(os.environ.get("CUEWRAP_CACHE") or xdg("XDG_CACHE_HOME", ".cache") / "cuewrap")
    if not os.access(cache / f"pi-{version}" / "bin" / "pi", os.X_OK):
        say(f"installing Pi {version} (and Node 22 if your Node is older than 22.19) into {cache}")
        say("  first time: about 30-90 s, progress below; later runs start at once")
    done = subprocess.run(
        [str(ROOT / "scripts" / "install-pi"), version], stdout=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        sys.exit(done.returncode)  # install-pi said why on stderr
    return Path(done.stdout.strip())


def start_model(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The scripted model (scripts/demo_tasks.py) on a free port, and its base URL."""
    url_file, err_file = tmp / "url", tmp / "model.err"
    with url_file.open("wb") as out, err_file.open("wb") as err:
        model = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "demo_tasks.py"), "--port", "0"],
            stdout=out,
            stderr=err,
        )
    for _ in range(100):
        if url_file.stat().st_size or model.poll() is not None:
            break
        time.sleep(0.05)
    url = url_file.read_text().partition("\n")[0]
    if not url:
        sys.stderr.write("demo: the scripted model did not start:\n" + err_file.read_text())
        model.kill()
        sys.exit(1)
    return model, url


def pi_home(agent: Path, url: str) -> None:
    """A throw-away Pi home: the scripted model as the only provider, no retries."""
    agent.mkdir(parents=True)
    model = {
        "id": "fake-model",
        "name": "fake-model",
        "contextWindow": 128000,
        "maxTokens": 4096,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    provider = {
        "name": "Scripted demo model",
        "baseUrl": url,
        "api": "openai-completions",
        "apiKey": "no-key-needed",
        "models": [model],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    settings = {
        "defaultProvider": "fake",
        "defaultModel": "fake-model",
        "quietStartup": True,
        "retry": {"enabled": False},
    }
    (agent / "settings.json").write_text(json.dumps(settings))


def pi_version(bindir: Path) -> str:
    done = subprocess.run(
        [str(bindir / "pi"), "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    lines = done.stdout.decode(errors="replace").splitlines()
    return lines[-1] if lines else ""


def summary(log: Path) -> None:
    """What the decision log counted, and the last cue and delivery records."""
    kinds: collections.Counter[str] = collections.Counter()
    cues: list[dict[str, Any]] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        kinds[r["kind"]] += 1
        if r["kind"] in ("cue", "delivery") or (r["kind"] == "no_cue" and "cue" in r):
            cues.append(r)
    print("  " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())))
    for r in cues[-12:]:
        print("  " + json.dumps({k: v for k, v in r.items() if k != "t"}, ensure_ascii=False))


def demo(version: str) -> int:
    bindir = install_pi(version)
    state = xdg("XDG_STATE_HOME", ".local/state") / "cuewrap"
    state.mkdir(parents=True, exist_ok=True)
    log = state / "demo-decisions.jsonl"
    log.write_bytes(b"")
    tmp = Path(tempfile.mkdtemp(prefix="cuewrap-demo."))
    model: subprocess.Popen[bytes] | None = None
    try:
        model, url = start_model(tmp)
        pi_home(tmp / "agent", url)
        (tmp / "work").mkdir()
        print(TASKS.format(version=pi_version(bindir), log=log), flush=True)
        input()
        env = dict(
            os.environ,
            PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
            PI_CODING_AGENT_DIR=str(tmp / "agent"),
            PI_OFFLINE="1",
            PI_SKIP_VERSION_CHECK="1",
            PI_TELEMETRY="0",
        )
        cuewrap = Path(sys.executable).parent / "cuewrap"
        extension = ROOT / "tests" / "pi-ext" / "cuewrap-test-ext.ts"
        argv = [str(cuewrap), "--log", str(log), "pi", "-e", str(extension)]
        rc = subprocess.run(argv, cwd=tmp / "work", env=env).returncode
        if rc < 0:
            rc = 128 - rc  # killed by signal -rc, as a shell says it
        print(f"\ncuewrap exited with status {rc}. Reminders it decided on (the whole log: {log}):")
        try:
            summary(log)
        except (OSError, ValueError, KeyError) as e:
            print(f"  (the log could not be read: {e})")
        print(
            "To use it for real: alias pi='cuewrap pi' (see README.md);"
            " cuewrap doctor checks this terminal."
        )
        return 0
    finally:
        if model is not None:
            model.kill()
            model.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    version = sys.argv[1] if len(sys.argv) > 1 else "1.4.0"
    try:
        return demo(version)
    except (KeyboardInterrupt, EOFError):
        print()
        return 130


if __name__ == "__main__":
    sys.exit(main())
