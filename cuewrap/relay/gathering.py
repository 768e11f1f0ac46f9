"""The output's pace: how long a streaming child's output gathers in the PTY before the relay
reads it (sans I/O, but for the loop's one deadline, which is the relay's).

While the child streams (and nothing was typed in the last ``ECHO_WINDOW``), its output is left
to gather in the PTY for ``GATHER`` (19 ms) between relays: about one wake-up per screen frame
instead of one per write of the child; ``GATHER_UNSEEN`` while nobody looks at it
(:meth:`Gathering.set_unseen`: the terminal reported its focus lost, or tmux shows another
window). The first output after a pause, the echo of input and a fast flood go out as they
come; the bytes are the same either way. The relay reads what gathered when the deadline
passes (``Relay._gathered``) and does not watch the master meanwhile (:attr:`Gathering.on`).
"""

from __future__ import annotations

from math import inf

from cuewrap.loop import Loop

# seconds a stream's output gathers in the PTY between relays: about a screen frame, a little
# longer than the time between Pi's frames (pi-tui draws at most every 16 ms, ~17.3 ms apart as
# it streams). At 1/60 s (17 ms after poll's rounding to milliseconds) the deadline raced Pi's
# next frame: each gathering found one frame or none (a wake-up more); at 19 ms none is empty
# and every ~10th brings two (docs/benchmarks.md#round-two-the-gathering-time)
GATHER = 0.019
GATHER_UNSEEN = 1 / 20  # the same while nobody looks (docs/design.md#unseen-output)
GATHER_TARGET = 8192  # bytes a gathering aims at: a Linux PTY holds ~14 KB before its writer waits
GATHER_MIN = 0.003  # seconds: a stream that would need shorter gatherings is relayed as it comes
GATHER_GAP = 0.001  # seconds: a chunk after a shorter pause is a flood's (relayed as it comes)
GATHER_FULL = 12288  # bytes: a read this large found the PTY (nearly) full: a flood's
ECHO_WINDOW = 0.05  # seconds after input in which output is relayed as it comes (its echo)


class Gathering:
    """Plain attributes, read and set by the relay on its per-frame path: ``on`` (the loop's
    deadline is set for the relay's read of what gathered), ``time`` (the gathering time
    now), ``last_out`` (when the last output relayed was written), ``echo_until`` (output is
    relayed as it comes until then: input's echo)."""

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self.on = False
        self.time = GATHER
        self.last_out = -inf
        self.echo_until = -inf

    def set_unseen(self, unseen: bool) -> None:
        """Nobody looks at the child's output now (``True``: the terminal said its focus is
        elsewhere, or tmux shows another window), or someone does again: a stream's output
        gathers for ``GATHER_UNSEEN`` instead of ``GATHER`` meanwhile. On the way back what
        gathered goes out at once (docs/design.md#unseen-output)."""
        gather = GATHER_UNSEEN if unseen else GATHER
        if gather == self.time:
            return
        self.time = gather
        now = self.loop.clock()
        if not unseen and self.on and self.loop.deadline > now:
            self.loop.deadline = now  # it was set for the longer time: at the next turn of the loop

    def typed(self, now: float) -> bool:
        """Input at ``now``: its echo is relayed as it comes, and a gathering on ends now (the
        answer to this input is not kept waiting); whether one was."""
        self.echo_until = now + ECHO_WINDOW
        return self.end()

    def wait(self, size: int, elapsed: float) -> float:
        """How long to let a stream that brought ``size`` bytes in ``elapsed`` seconds gather:
        a frame's time (or ``GATHER_UNSEEN``), shorter when the PTY would fill meanwhile (its
        writer would wait), not at all (0) for a flood."""
        if size >= GATHER_FULL:  # the writer may have waited: its rate is not known
            return 0.0
        gather = self.time
        if size * gather <= GATHER_TARGET * elapsed:
            return gather
        wait = GATHER_TARGET * elapsed / size
        return wait if wait >= GATHER_MIN else 0.0

    def start(self, now: float, wait: float) -> None:
        """Gather for ``wait`` seconds from ``now`` (the relay stopped watching the master)."""
        self.on = True
        self.loop.deadline = now + wait

    def end(self) -> bool:
        """Clear the loop's deadline if a gathering is on; whether one was."""
        if not self.on:
            return False
        self.on = False
        self.loop.deadline = inf
        return True
