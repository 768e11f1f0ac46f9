"""The editor's "send a test notification": one notification over the channels the settings
being edited choose (terminal protocol, desktop, bell, ``notify.command``), and one line that
says what happened on each. The same deciders as ``cuewrap pi`` (``detect_terminal_protocol``,
``desktop_available``), so what it tries is what a cue would do here."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping

from cuewrap.config import Settings
from cuewrap.engine.effects import Eligibility, Notify

TITLE = "Pi"
BODY = "cuewrap config: test notification"


def test_notify(settings: Settings, env: Mapping[str, str], write: Callable[[bytes], None]) -> str:
    from cuewrap.deliver.terminal import TerminalNotifier, detect_terminal_protocol, query_tmux

    n = Notify(
        cue_id=0,
        kind="finished",
        outcome="completed",
        title=TITLE,
        body=BODY,
        eligibility=Eligibility(generation=0, run=None, cue_id=0, epoch=0),
        source="test",
    )
    parts: list[str] = []
    info = query_tmux(env) if env.get("TMUX") else None
    choice = detect_terminal_protocol(env, settings.notify.terminal, lambda: info)
    data = TerminalNotifier(choice, bell=settings.notify.bell).build(n)
    if data:
        write(data)
    if choice.protocol == "off":
        parts.append(f"terminal: off ({choice.reason})")
    else:
        parts.append(f"terminal: {choice.protocol} sent (terminals never confirm)")
    parts.append("bell: rung" if settings.notify.bell else "bell: off")
    parts.append(_desktop(settings, env))
    command = getattr(settings.notify, "command", None)
    if command:
        timeout = float(getattr(settings.notify, "command_timeout", 10.0))
        parts.append(_command(list(command), n, env, timeout))
    return "; ".join(parts)


def _desktop(settings: Settings, env: Mapping[str, str]) -> str:
    from cuewrap.deliver.desktop import desktop_available
    from cuewrap.deliver.desktop_worker import send_now

    on, why = desktop_available(env, settings.notify.desktop)
    if not on:
        return f"desktop: not used ({why})"
    state, reason = send_now(TITLE, BODY)
    return f"desktop: {state} ({reason})"


def _command(argv: list[str], n: Notify, env: Mapping[str, str], timeout: float) -> str:
    from cuewrap.deliver.command import cue_env, cue_fields

    fields = cue_fields(
        n,
        ident="test",
        session="test",
        cwd=os.getcwd(),
        time=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(fields) + "\n",
            text=True,
            env={**env, **cue_env(fields)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"command: killed after {timeout:g} s"
    except OSError as exc:
        return f"command: cannot start {argv[0]}: {exc.strerror or exc}"
    return f"command: exit status {done.returncode}"
