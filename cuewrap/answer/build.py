"""Answering in generic mode, built for one session (docs/answering.md): the answerer of a
program's own dialogs and the control socket ``cuewrap answer`` talks to. Called once by the
cue side's builder (``wiring/cueside.py``, ``_answering``); the output watch it builds later
feeds the answerer's ring. Each part is closed by ``built`` if a later one fails.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuewrap.answer.answerer import TypeKeys
    from cuewrap.answer.control import ControlServer
    from cuewrap.answer.generic import GenericAnswerer
    from cuewrap.context import Context
    from cuewrap.sessions.publish import Publisher


def generic_answering(
    ctx: Context,
    size: tuple[int, int],
    publisher: Publisher,
    built: contextlib.ExitStack,
    *,
    type_keys: TypeKeys | None,
) -> tuple[GenericAnswerer, ControlServer | None]:
    """The answerer of a program's own dialogs (its wait published, its keys typed through
    ``type_keys``, the relay's), and the control socket beside the registry entry."""
    from cuewrap.answer.control import ControlServer
    from cuewrap.answer.generic import GenericAnswerer
    from cuewrap.answer.screen import OutputRing
    from cuewrap.sessions.registry import own_directory

    log = ctx.log
    answerer = GenericAnswerer(
        ctx.loop,
        log,
        OutputRing(*size),
        summary=ctx.settings.privacy.body == "summary",
        on_change=lambda: publisher.set_wait(answerer.wait_info()),
        type_keys=type_keys,
    )
    built.callback(answerer.close)
    directory = own_directory(ctx.env)
    if directory is None:
        log.write("answer", state="no control socket", why="no registry directory")
        return answerer, None
    control = ControlServer(
        ctx.loop, log, os.path.join(directory, f"{os.getpid()}.sock"), answerer.request
    )
    built.callback(control.close)
    return answerer, (control if control.start() else None)
