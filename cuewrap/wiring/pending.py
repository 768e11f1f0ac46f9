"""The cue side as the relay knows it from the start: one object with a small interface (its
event sink ``relay_event``, its output tap ``tap``, the terminal's answers), built before the
cue side itself, which comes after the child's first frame, not while the child boots
(docs/architecture.md#start-up).

Building the cue side (the controller, the engine, delivery, the bridge server, the screen gate:
most of cuewrap's modules) takes tens of milliseconds of CPU. Done right after the spawn, it
competes with the booting child for the CPU and its first frame comes later. So the relay starts
with this stand-in as its event sink, output tap and tracker policies: it keeps what the relay
tells it, in order, and builds the cue side (``build``, which returns the controller or None when
it failed) once the child has drawn:

- soon after an output chunk that ends a synchronized frame (``CSI ? 2026 l``: Pi's frames);
- other children: when the output pauses for ``QUIET`` after some output;
- ``LATEST`` after the start (a child that is silent, or never ends a frame);
- at once when the child exits, or ``MAX_KEPT`` bytes of output were kept.

Then it replays what it kept (output chunks and sizes to the output tap, events to the
controller, in the order they came), and from then on its ``tap`` is the controller's (the
relay reads it at each chunk) and events go straight on. It is never built in the middle of a
scan: the tracker's decisions come from the rules handed down (``relay/decisions.py``; until
the first, the engine's at start). A cue side that failed to build leaves the session a plain
passthrough: events dropped, the rules at start kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from cuewrap.loop import Loop, Timer
from cuewrap.term import sequences as seq

if TYPE_CHECKING:
    from cuewrap.relay.events import RelayEvent
    from cuewrap.relay.relay import OutputTap
    from cuewrap.term.answers import TerminalAnswer
    from cuewrap.wiring.controller import Controller

QUIET = 0.05  # seconds without output after some output: the child has drawn
LATEST = 1.0  # seconds after the start: built even if the child is silent or never pauses
MAX_KEPT = 1 << 20  # bytes of output kept for the tap before it is built
FRAME_END = b"\x1b[?%dl" % seq.MODE_SYNC_OUTPUT  # a synchronized frame ends

_Kept = tuple[str, object]


class PendingCueSide:
    """The relay's cue side: keeps what the relay tells it until the controller is built
    (``build`` is handed this object: the screen gate tells it when it needs no more output,
    :meth:`tap_done`), then passes it on."""

    def __init__(
        self,
        loop: Loop,
        build: Callable[[PendingCueSide], Controller | None],
        on_error: Callable[[str, BaseException], None],
        *,
        frames: bool = False,
    ) -> None:
        self.loop = loop
        # the child draws synchronized frames (Pi): built after the first one, not at a pause
        # (a pause can come between its first output and its first frame)
        self.frames = frames
        self.on_error = on_error
        self._build: Callable[[PendingCueSide], Controller | None] | None = build
        self.controller: Controller | None = None
        # what sees every output chunk (the relay reads it at each one): this object, keeping
        # them; once built, the controller's tap; None when nothing needs them
        self.tap: OutputTap | None = self
        self._kept: list[_Kept] = []
        self._kept_bytes = 0
        self._timer: Timer | None = loop.call_later(LATEST, self.build)

    @property
    def built(self) -> bool:
        return self._build is None

    def build(self) -> None:
        """Build the cue side now (once) and replay what was kept."""
        build, self._build = self._build, None
        if build is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        kept, self._kept = self._kept, []
        self.tap = None  # the replay below feeds the controller's tap
        controller = self.controller = build(self)
        if controller is None:
            return
        tap: Any = controller.output_tap
        for kind, item in kept:
            try:
                if kind == "feed" and tap is not None:
                    tap.feed(item)
                elif kind == "resize" and tap is not None:
                    size = cast("tuple[int, int]", item)
                    tap.resize(rows=size[0], cols=size[1])
                elif kind == "event":
                    controller.relay_event(item)  # type: ignore[arg-type]
                elif kind == "answer":
                    controller.terminal_answer(item)  # type: ignore[arg-type]
            except Exception as exc:  # as the relay does: a failing tap is dropped
                if kind in ("feed", "resize"):
                    tap = None
                self.on_error("replay", exc)
        if self.tap is None:  # not done meanwhile: from now on the relay feeds it directly
            self.tap = tap

    def tap_done(self, tap: OutputTap, instead: OutputTap | None = None) -> None:
        """``tap`` needs no more output (the screen gate decided it will not run): the relay
        stops handing it every chunk, if it is the tap now; ``instead`` takes its place where
        there is none then."""
        if self.tap is tap:
            self.tap = None
        if self.tap is None and instead is not None:
            self.tap = instead

    def _soon(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_later(delay, self.build)

    # -- the relay's output tap -----------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.built:  # not the tap any more (a chunk read before the build)
            return
        self._kept.append(("feed", data))
        self._kept_bytes += len(data)
        if self._kept_bytes >= MAX_KEPT or FRAME_END in data:
            self._soon(0.0)  # after this chunk is written to the terminal
        elif not self.frames:
            self._soon(QUIET)

    def resize(self, *, rows: int, cols: int) -> None:
        if self.built:
            return
        self._kept.append(("resize", (rows, cols)))

    # -- the relay's sink -----------------------------------------------------------------
    def relay_event(self, event: RelayEvent) -> None:
        if self._build is not None:  # not built yet (``built``, without the call: every key)
            from cuewrap.relay.events import ChildExited

            self._kept.append(("event", event))
            if isinstance(event, ChildExited):
                self.build()
            return
        if self.controller is not None:
            self.controller.relay_event(event)

    def terminal_answer(self, answer: TerminalAnswer | None) -> None:
        if not self.built:
            self._kept.append(("answer", answer))
        elif self.controller is not None:
            self.controller.terminal_answer(answer)
