"""Inside tmux, a notification's route: the tmux side (``cuewrap.tmux.side``) watches who looks
at the pane, and each notification asks it first (``Delivery.route_through``).

Built by the session's cue side (``wiring/cueside.py``) and by ``cuewrap config``'s test
notification, so that the test takes a reminder's route; it lives on the delivery floor, below
both, so neither the editor nor ``doctor`` reaches up into the session's wiring for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cuewrap.context import Context
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.engine.effects import Eligibility
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.tmux.view import Merged
    from cuewrap.workers import Reaper


def tmux_route(
    ctx: Context,
    delivery: Delivery,
    inject: Callable[[bytes], None],
    on_presence: Callable[[Merged, str], None],
    is_eligible: Callable[[Eligibility], bool],
    built: contextlib.ExitStack | None = None,
) -> tuple[TmuxSide | None, Reaper]:
    """Start the tmux side and make it ``delivery``'s route: delivery decides the terminal's
    and the desktop's part of each notification from the view tmux gives then
    (``Delivery.decide``), the tmux side adds tmux's own (a status-line message, the window's
    bell flag). None when it does not start (presence and delivery then work as outside tmux:
    focus reports, keys, the start-up passthrough check). The reaper ends its commands in flight;
    ``built`` closes both if a later part fails."""
    from cuewrap.tmux.side import TmuxSide
    from cuewrap.workers import Reaper

    reaper = Reaper(ctx.loop)
    if built is not None:
        built.callback(reaper.close)  # after the side's close (last in, first out)
    side = TmuxSide(
        ctx.loop,
        ctx.env,
        on_presence=on_presence,
        inject=inject,
        is_eligible=is_eligible,
        record=delivery.record,
        log=ctx.log.write,
        reaper=reaper,
    )
    if built is not None:
        built.callback(side.close)
    started = side.start()
    ctx.log.write("tmux", state="started" if started else "not started", why=side.why)
    if not started:
        return None, reaper
    delivery.route_through(side)
    return side, reaper
