"""Effectors: what performs the engine's effects at the edge (docs/design.md#delivery).

- ``title``: title marks composed onto the child's own title (pure: returns bytes).
- ``terminal``: terminal notifications (OSC 777 / 9 / 99, tmux passthrough; pure build).
- ``desktop``: desktop notifications through notify-py, off the loop, results via a pipe.
- ``keepawake``: the idle/sleep inhibitor process.
- ``command``: ``notify.command``, the user's own notifier.

Their processes are spawned, watched and reaped by ``cuewrap.workers``.

Nothing here writes to stdout/stderr: the bytes go to the ``Injector``, which writes them at
the output's safe points; every state goes to a callback for the decision log.
"""

from __future__ import annotations
