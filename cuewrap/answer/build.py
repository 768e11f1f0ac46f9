"""Answering in generic mode, built for one session (docs/answering.md): the answerer, fed
the child's output by the output watch, and the control socket ``cuewrap answer`` talks to.
Called once by the cue side's builder; each part is closed by ``built`` if a later one fails.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuewrap.decisionlog import DecisionLog
from cuewrap.loop import Loop

if TYPE_CHECKING:
    from cuewrap.answer.control import ControlServer
    from cuewrap.answer.generic import GenericAnswerer
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.generic.activity import OutputWatch
    from cuewrap.sessions.publish import Publisher


def generic_answering(
    loop: Loop,
    log: DecisionLog,
    env: Mapping[str, str],
    size: tuple[int, int],
    *,
    summary: bool,
    publisher: Publisher,
    delivery: Delivery,
    watch: OutputWatch,
    built: contextlib.ExitStack,
) -> tuple[GenericAnswerer, ControlServer | None]:
    """The answerer of a program's own dialogs, its output ring fed by ``watch`` (the
    relay's output tap in generic mode), its notifications' answer and buttons through
    ``delivery``, its wait published; and the control socket beside the registry entry."""
    from cuewrap.answer.control import ControlServer
    from cuewrap.answer.generic import GenericAnswerer
    from cuewrap.answer.screen import OutputRing
    from cuewrap.sessions.registry import own_directory

    answerer = GenericAnswerer(
        loop,
        log,
        OutputRing(*size),
        summary=summary,
        on_change=lambda: publisher.set_wait(answerer.wait_info()),
    )
    built.callback(answerer.close)
    watch.ring = answerer.ring
    delivery.answering = answerer  # a needs-input cue's answer and buttons, their clicks
    directory = own_directory(env)
    if directory is None:
        log.write("answer", state="no control socket", why="no registry directory")
        return answerer, None
    control = ControlServer(
        loop, log, os.path.join(directory, f"{os.getpid()}.sock"), answerer.request
    )
    built.callback(control.close)
    return answerer, (control if control.start() else None)
