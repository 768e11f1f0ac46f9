"""Effectors: what performs the engine's effects at the edge (docs/design.md#delivery).

- ``delivery``: the session's channels, built on first use; the controller hands them the
  engine's effects, every delivery state becomes a ``delivery`` record.
- ``plan``: which one way a cue reaches the desktop (the terminal's own notification or
  cuewrap's), pure.
- ``title``: title marks composed onto the child's own title (pure: returns bytes).
- ``terminal``: terminal notifications (OSC 777 / 9 / 99, tmux passthrough; pure build).
- ``dbus`` + ``dbus_worker``: desktop notifications over D-Bus (Linux) from one long-lived
  worker per session: withdrawn, replaced in place, clicked.
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
