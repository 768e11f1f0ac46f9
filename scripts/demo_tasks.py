"""The demo's scripted model: several small tasks, picked by what you type (no API key, no
network). Serves the fake OpenAI-compatible model of tests/fakemodel.py on 127.0.0.1 and prints
its base URL on stdout, then serves until killed.

    python scripts/demo_tasks.py [--port N]

Type the number (or the word) of a task in Pi:

  1 quick   a 5-second shell command, then an answer         -> Finished  [✓]
  2 long    a 20-second shell command in steps               -> Finished  [✓]
  3 ask     Pi asks you to confirm something (a dialog)      -> Needs your input  [?]
  4 fail    the model answers with an error                  -> Failed  [!]
Esc while a task runs cancels it                             -> Cancelled  [-]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from fakemodel import FakeModel, Step, http_error, text, tool_call

TASKS: dict[str, tuple[str, Any]] = {
    "1": ("quick", lambda: tool_call("bash", {"command": "echo 'hello from task 1'; sleep 5"})),
    "2": (
        "long",
        lambda: tool_call(
            "bash", {"command": "for i in 1 2 3 4 5; do echo step $i of 5; sleep 4; done"}
        ),
    ),
    "3": (
        "ask",
        lambda: tool_call(
            "test_confirm",
            {"title": "Demo", "message": "May I tidy up the demo folder? (nothing is deleted)"},
        ),
    ),
    "4": ("fail", lambda: http_error(400, "task 4: the scripted model refuses, on purpose")),
}
AFTER = {
    "1": "Task 1 done: the command printed hello and slept 5 seconds.",
    "2": "Task 2 done: five steps in about 20 seconds.",
    "3": "Task 3 done: you answered the dialog.",
}
HELP = "Type 1 (quick), 2 (long), 3 (ask) or 4 (fail). /cue shows what cuewrap sees."


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _task(word: str) -> str | None:
    w = word.strip().lower()
    for key, (name, _) in TASKS.items():
        if w == key or w == name or w.startswith(f"{key} ") or w.startswith(f"{name} "):
            return key
    return None


def reply(body: dict[str, Any]) -> Step:
    """The next step for this request: a task's tool call, its answer after the tool ran,
    or the list of tasks."""
    messages = body.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    task = _task(_text_of(users[-1])) if users else None
    if messages and messages[-1].get("role") == "tool":
        return text(AFTER.get(task or "", "Done."))
    if task is None:
        return text(HELP)
    step: Step = TASKS[task][1]()
    return step


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args()
    fm = FakeModel([], port=ns.port, chunk_delay=0.02, default=reply).start()
    print(fm.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        fm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
