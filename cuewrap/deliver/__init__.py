"""Effectors: what performs the engine's effects at the edge (docs/design.md#delivery).

- ``delivery``: the session's delivery; the controller hands it the engine's effects, it
  tells the channels the plan chose; every delivery state becomes a ``delivery`` record.
- ``channel``: the protocol every channel implements (send, withdraw, escalate, pending,
  close) and what each declares it can do; ``channels``: each channel's adapter to it.
- ``plan``: which one way a cue reaches the desktop (the terminal's own notification or
  cuewrap's), pure.
- ``title``: title marks composed onto the child's own title (pure: returns bytes).
- ``terminal``: terminal notifications (OSC 777 / 9 / 99, tmux passthrough; pure build).
- ``dbus`` + ``dbus_worker``: desktop notifications over D-Bus (Linux) from one long-lived
  worker per session: withdrawn, replaced in place, clicked; ``dnd`` + ``dnd_worker``: the
  desktop's do-not-disturb, watched in that same worker (``helper``: the worker shared).
- ``desktop`` + ``desktop_worker``: desktop notifications through notify-py where there is no
  D-Bus (macOS), one
  short-lived worker per cue.
- ``keepawake``: the idle/sleep inhibitor process.
- ``command``: ``notify.command``, the user's own notifier.

Their processes are spawned, watched and reaped by ``cuewrap.workers``.

Nothing here writes to stdout/stderr: the bytes go to the ``Injector``, which writes them at
the output's safe points; every state goes to a callback for the decision log.
"""

from __future__ import annotations

from typing import Literal

#: Every state a cue's delivery on one channel goes through (docs/design.md#cue-rules, rule
#: 13): the ``state`` of each ``delivery`` record of the decision log.
DeliveryState = Literal[
    "requested",  # the call was made (a worker started, a command run)
    "delivered",  # the channel confirmed it
    "unconfirmable",  # sent where nothing can confirm it (a terminal OSC, tmux)
    "failed",
    "dropped-ineligible",  # no longer eligible right before the call: not made
    "off",  # the channel is off for this cue, with the reason
    "withdrawn",  # a stale cue's notification closed
    "unsupported",  # the channel cannot withdraw (or do) what was asked
    "replaced",  # a later cue's notification took its place
    "waiting",  # held for later (tmux: no client attached, shown at the next attach)
]
