"""Answering in generic mode, built for one session (docs/answering.md): the answerer of a
program's own dialogs. Called once by the cue side's builder (``wiring/cueside.py``,
``_answering``); the output watch it builds later feeds the answerer's ring, and the session's
control socket (``wiring/attention.py``) hands it the requests of ``cuewrap answer``. Closed
by ``built`` if a later part fails.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuewrap.answer.answerer import Answerer, TypeKeys
    from cuewrap.context import Context
    from cuewrap.sessions.publish import Publisher


def generic_answerer(
    ctx: Context,
    size: tuple[int, int],
    publisher: Publisher,
    built: contextlib.ExitStack,
    *,
    type_keys: TypeKeys | None,
    notices: str = "",
    preset: str = "",
) -> Answerer:
    """The answerer of a program's own dialogs: its wait published, its keys typed through
    ``type_keys`` (the relay's); ``notices``: the preset whose own notifications say it
    waits (engine/notices.py); ``preset``: a program whose dialogs have an answerer of their
    own (opencode: ``answer/opencode.py``)."""
    from cuewrap.answer.answerer import Answerer
    from cuewrap.answer.generic import OwnProgram
    from cuewrap.answer.screen import OutputRing

    program, reader = OwnProgram(notices), None
    if preset == "opencode":
        from cuewrap.answer.opencode import OpencodeProgram, bg_reader

        program, reader = OpencodeProgram(), bg_reader(ctx.loop, ctx.log)
    answerer = Answerer(
        ctx.loop,
        ctx.log,
        OutputRing(*size),
        program,
        summary=ctx.settings.privacy.body == "summary",
        on_change=lambda: publisher.set_wait(answerer.wait_info()),
        type_keys=type_keys,
        make_reader=reader,
    )
    built.callback(answerer.close)
    return answerer
