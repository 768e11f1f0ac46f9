"""The editor's "send a test notification": one notification the way a reminder goes, and one
line that says what happened on each channel.

It takes the path a cue takes in a session: the delivery a session builds
(``deliver.delivery.build_delivery``, with the settings being edited), the channel plan,
the channels it chose (the terminal's OSC and the bell, cuewrap's desktop notification
through the session's D-Bus worker, ``notify.command`` through its runner), each reporting
its states as ``delivery`` records. Those records are what the line says (and, given a
``log``, what is written to it). It waits for the channels to finish (bounded), then closes
them; a notification shown on the desktop stays. Inside tmux the session's tmux side is
started too (``cueside.tmux_side``): the terminal's notification goes by tmux's view of the
pane then (passthrough from a shown pane where tmux allows it, a status-line message to a
client looking elsewhere), and the tmux side is closed after.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from cuewrap.config import Settings
from cuewrap.decisionlog import DecisionLog
from cuewrap.engine.effects import Eligibility, Notify

TITLE = "Pi"
BODY = "cuewrap config: test notification"
CUE = 0  # no session's cue has this id
WAIT = 10.0  # at most this long for the channels to finish (notify.command's own timeout)


class KeptLog(DecisionLog):
    """A decision log that keeps its records (and writes them to ``log`` when given)."""

    def __init__(self, log: DecisionLog | None = None) -> None:
        super().__init__(None)
        self.records: list[dict[str, object]] = []
        self._log = log

    def write(self, kind: str, **fields: object) -> None:
        self.records.append({"kind": kind, **fields})
        if self._log is not None:
            self._log.write(kind, **fields)


def test_notify(
    settings: Settings,
    env: Mapping[str, str],
    write: Callable[[bytes], None],
    *,
    log: DecisionLog | None = None,
    wait: float = WAIT,
) -> str:
    """Send it; ``write`` takes the terminal's bytes (the editor writes them raw)."""
    from cuewrap.context import Context
    from cuewrap.deliver.delivery import build_delivery
    from cuewrap.deliver.route import tmux_route
    from cuewrap.loop import Loop
    from cuewrap.sessions.publish import Where

    loop = Loop()
    kept = KeptLog(log)
    ctx = Context(loop, settings, kept, env)
    where = Where(env)
    origin = {"pid": where.pid, "tmux_pane": where.tmux_pane, "tty": where.tty}
    delivery = build_delivery(ctx, write, where=origin)
    side, reaper = None, None
    if env.get("TMUX"):
        side, reaper = tmux_route(
            ctx, delivery, write, on_presence=lambda merged, via: None, is_eligible=lambda e: True
        )
    n = Notify(
        cue_id=CUE,
        kind="finished",
        outcome="completed",
        title=TITLE,
        body=BODY,
        eligibility=Eligibility(generation=0, run=None, cue_id=CUE, epoch=0),
        source="test",
    )
    try:
        delivery.notify(n, eligible=lambda e: True, session=os.path.basename(os.getcwd()))
        deadline = loop.clock() + max(wait, settings.notify.command_timeout)
        # done: the channels, tmux's view of the pane and its short commands (a message)
        while delivery.pending() or (side is not None and side.busy) or (reaper and len(reaper)):
            left = deadline - loop.clock()
            if left <= 0:
                break
            loop.run_once(max_timeout=left)
    finally:
        delivery.close()
        if side is not None:
            side.close()
        if reaper is not None:
            reaper.close()
        loop.close()
    return outcome(kept.records)


def outcome(records: list[dict[str, object]]) -> str:
    """One part per channel, in the order they were told: its states, each with its reason
    (``terminal: requested (osc9) → unconfirmable (terminal OSC has no receipt)``)."""
    said: dict[str, list[str]] = {}
    for rec in records:
        if rec.get("kind") == "delivery" and rec.get("cue") == CUE:
            state, reason = rec.get("state"), rec.get("reason")
            part = f"{state} ({reason})" if reason else str(state)
            said.setdefault(str(rec.get("channel")), []).append(part)
        elif rec.get("kind") == "internal_error":
            said.setdefault(str(rec.get("where")), []).append(f"error ({rec.get('error')})")
    return "; ".join(f"{channel}: {' → '.join(parts)}" for channel, parts in said.items())
