"""The attention budget at the edge (docs/attention.md): the time of day, the desktop's
do-not-disturb and this session's mute, told to the pure engine as facts.

- Quiet hours (``quiet.hours``): the local time is read at start and at each boundary of the
  ranges — one timer to the next one, no periodic timer — and a ``Quiet`` fact says when
  quiet begins and ends. The desktop's do-not-disturb (``quiet.follow_desktop``, read by
  ``deliver/dnd.py``) counts as quiet too; quiet hours are named first when both hold.
- Mute: ``cuewrap mute PID [DURATION]`` / ``unmute PID`` arrive on the session's control socket
  (``answer/control.py``: same uid, one bounded line), ``/cue mute [DURATION]`` / ``/cue unmute``
  through the bridge. A ``Mute`` fact goes to the engine, the registry entry and the events
  file say it (``muted``, ``muted_until``), a timer unmutes at the end of a duration.

Everything here fails open: an error is logged and cues go on as without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cuewrap.answer import wire
from cuewrap.facts import Mute, Quiet
from cuewrap.loop import Timer
from cuewrap.quiethours import next_change, parse_duration, parse_hours, quiet_at

if TYPE_CHECKING:
    from cuewrap.answer.control import ControlServer, Handler, MuteHandler, Reply
    from cuewrap.context import Context
    from cuewrap.deliver.dnd import DesktopWatch
    from cuewrap.engine import Event
    from cuewrap.sessions.publish import Publisher

QUIET_HOURS = "quiet hours"
DESKTOP_DND = "desktop do-not-disturb"


class Attention:
    """Made by the controller's constructor (a source, like the others): ``fact`` is the
    controller's. Its first reading of the time of day comes at the loop's first turn (the
    controller is whole by then); the desktop's watch starts here, where it is followed."""

    def __init__(
        self,
        ctx: Context,
        fact: Callable[[Event], None],
        publisher: Publisher,
        *,
        localtime: Callable[[], time.struct_time] = time.localtime,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.loop = ctx.loop
        self.log = ctx.log
        self.fact = fact
        self.publisher = publisher
        self.localtime = localtime
        self.wall = wall
        self.ranges = parse_hours(ctx.settings.quiet.hours)  # checked by the loader already
        self.hours_quiet = False
        self.desktop_quiet = False
        self.told: str | None = None
        self.muted_until: float | None = None
        self.muted = False
        self._mute_timer: Timer | None = None
        self._closed = False
        self._hours_timer: Timer | None = (
            self.loop.call_later(0, self._hours) if self.ranges else None
        )
        self.dnd: DesktopWatch | None = None  # the desktop's do-not-disturb (deliver/dnd.py)
        if ctx.settings.quiet.follow_desktop:
            from cuewrap.deliver.dnd import watch_desktop

            self.dnd = watch_desktop(ctx.loop, ctx.env, ctx.log, self.desktop)

    # -- quiet hours ------------------------------------------------------------------------
    def _hours(self) -> None:
        self._hours_timer = None
        if self._closed:
            return
        t = self.localtime()
        self.hours_quiet = quiet_at(self.ranges, t.tm_hour * 60 + t.tm_min)
        self._tell()
        ahead = next_change(self.ranges, t.tm_hour, t.tm_min, float(t.tm_sec))
        if ahead is not None:  # a little after the minute: the boundary has surely passed
            self._hours_timer = self.loop.call_later(ahead + 0.05, self._hours)

    def desktop(self, quiet: bool) -> None:
        """The desktop's do-not-disturb, as its watch reads it."""
        self.desktop_quiet = quiet
        self._tell()

    def _tell(self) -> None:
        why = QUIET_HOURS if self.hours_quiet else DESKTOP_DND if self.desktop_quiet else None
        if why != self.told:
            self.told = why
            self.fact(Quiet(why))

    # -- mute -------------------------------------------------------------------------------
    def mute(self, duration: float | None, via: str) -> str:
        """Mute for ``duration`` seconds (None: until unmuted); the reply's text."""
        if self._mute_timer is not None:
            self._mute_timer.cancel()
            self._mute_timer = None
        until = None if duration is None else round(self.wall() + duration, 3)
        if duration is not None:
            self._mute_timer = self.loop.call_later(duration, self._mute_over)
        self.muted, self.muted_until = True, until
        self.fact(Mute(True, via))
        self.publisher.set_muted(True, until)
        if until is None:
            return "cuewrap: muted until unmuted (/cue unmute)"
        return f"cuewrap: muted until {time.strftime('%H:%M', time.localtime(until))}"

    def unmute(self, via: str) -> str:
        if self._mute_timer is not None:
            self._mute_timer.cancel()
            self._mute_timer = None
        was = self.muted
        self.muted, self.muted_until = False, None
        self.fact(Mute(False, via))
        self.publisher.set_muted(False, None)
        return "cuewrap: reminders on again" if was else "cuewrap: was not muted"

    def _mute_over(self) -> None:
        self._mute_timer = None
        if not self._closed:
            self.unmute("duration over")

    def request(self, action: str) -> str | None:
        """``/cue mute [DURATION]`` / ``/cue unmute`` from Pi: the reply, or None when
        ``action`` is not one of them."""
        words = action.split()
        if words == ["unmute"]:
            return self.unmute("/cue")
        if words[:1] != ["mute"] or len(words) > 2:
            return None
        try:
            duration = parse_duration(words[1]) if len(words) == 2 else None
        except ValueError as exc:
            return f"cuewrap: {exc}"
        return self.mute(duration, "/cue")

    def on_mute(self, request: wire.MuteRequest, reply: Reply) -> None:
        """``cuewrap mute`` / ``unmute`` on the control socket."""
        self.log.write("mute_request", muted=request.muted, duration=request.duration)
        if request.muted:
            self.mute(request.duration, "cuewrap mute")
        else:
            self.unmute("cuewrap unmute")
        reply(True, "")

    def close(self) -> None:
        self._closed = True
        for timer in (self._hours_timer, self._mute_timer):
            if timer is not None:
                timer.cancel()
        if self.dnd is not None:
            self.dnd.close()


def control_socket(
    ctx: Context,
    answer: Handler | None,
    on_mute: MuteHandler,
    on_popup: Callable[[], None],
) -> ControlServer | None:
    """The session's control socket beside its registry entry: answers (Pi mode with the
    bridge: ``answer``; else refused), mute and unmute, the shared popup (None, logged: no
    registry directory, or it cannot listen)."""
    from cuewrap.answer.control import ControlServer
    from cuewrap.sessions.registry import own_directory

    directory = own_directory(ctx.env)
    if directory is None:
        ctx.log.write("control", state="no control socket", why="no registry directory")
        return None
    path = os.path.join(directory, f"{os.getpid()}.sock")
    control = ControlServer(
        ctx.loop, ctx.log, path, answer or _no_answers, on_mute=on_mute, on_popup=on_popup
    )
    return control if control.start() else None


def _no_answers(request: wire.Request, reply: Reply) -> None:
    reply(False, "no dialog of this session can be answered from elsewhere")
