"""cuewrap.deliver.delivery and the channel protocol: the channels the plan chose, each told in
turn and failing open on its own; withdrawn only where a channel can; what each declares.

Unit tier: the real ``Delivery`` with the terminal channel (bytes collected), the desktop off
(no graphical session) or chosen away by the plan, and a recording route for tmux. The
desktop and ``notify.command`` channels against real processes: tests/test_desktop_dbus.py,
tests/test_notify_command.py, tests/test_testnotify.py.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from shared import RecordingLog

from cuewrap.config import Settings
from cuewrap.context import Context
from cuewrap.deliver.channel import Capabilities, Channel, Message, Off
from cuewrap.deliver.channels import CommandChannel, DBusChannel, NotifyPyChannel, TerminalChannel
from cuewrap.deliver.delivery import Delivery
from cuewrap.deliver.plan import Answers
from cuewrap.engine.effects import Action, Eligibility, Notify, Withdraw
from cuewrap.loop import Loop
from cuewrap.tmux.view import Live, TmuxInfo

pytestmark = pytest.mark.unit

WEZTERM = {"TERM_PROGRAM": "WezTerm"}  # OSC 777, shows its own popup
KITTY = {"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}  # OSC 99
XTERM_DESKTOP = {"XTERM_VERSION": "XTerm(390)", "DISPLAY": ":99"}  # the desktop's popup only


def settings(**notify: Any) -> Settings:
    s = Settings()
    return s._replace(notify=s.notify._replace(**notify))


def note(cue: int) -> Notify:
    return Notify(
        cue, "finished", "completed", "Pi — proj", "Finished", Eligibility(0, None, cue, 0)
    )


def made(
    env: dict[str, str], s: Settings | None = None, answering: Any = None
) -> tuple[Delivery, RecordingLog, bytearray]:
    log, out = RecordingLog(), bytearray()
    ctx = Context(Loop(), s or settings(), log, {"TERM": "xterm-256color", **env})
    d = Delivery(ctx, out.extend, answering=answering)
    return d, log, out


def always(e: Eligibility) -> bool:
    return True


# -- the protocol ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cls", [TerminalChannel, DBusChannel, NotifyPyChannel, CommandChannel, Off]
)
def test_every_channel_has_the_protocols_methods_with_its_parameters(cls: type) -> None:
    for name, member in vars(Channel).items():
        if name.startswith("_") or not callable(member):
            continue
        mine = getattr(cls, name, None)
        assert callable(mine), (cls.__name__, name)
        assert list(inspect.signature(mine).parameters) == list(
            inspect.signature(member).parameters
        ), (cls.__name__, name)
    assert hasattr(cls, "name") or "name" in inspect.signature(cls).parameters


def test_what_each_channel_declares() -> None:
    assert DBusChannel.capabilities == Capabilities(
        withdraw=True, replace=True, buttons=True, receipt=True
    )
    assert (
        not NotifyPyChannel.capabilities.withdraw and NotifyPyChannel.capabilities.cannot_withdraw
    )
    assert CommandChannel.capabilities.receipt and not CommandChannel.capabilities.withdraw
    # the terminal: only kitty 0.36 or later can close its notification (the plan says so)
    d, _, _ = made(KITTY)
    assert d.capabilities()["terminal"] == Capabilities(
        cannot_withdraw="not known to support p=close (the terminal has not said so): not sent"
    )
    d.answered(Answers("kitty(0.36.1)", "a=focus:p=title,body,close", True))
    assert d.capabilities()["terminal"].withdraw
    assert not any(c.buttons for c in d.capabilities().values())  # no desktop here


def test_reading_the_choice_and_the_plan_logs_nothing() -> None:
    d, log, out = made(WEZTERM)
    assert [r["kind"] for r in log.records] == ["terminal_protocol"]  # made once, at the start
    for _ in range(3):
        assert d.plan.terminal and d.terminal_choice.protocol == "osc777"
        d.channels()
        d.capabilities()
    assert [r["kind"] for r in log.records] == ["terminal_protocol"] and out == b""


# -- a notification --------------------------------------------------------------------------
def test_one_notification_on_the_chosen_channels_in_order() -> None:
    d, log, out = made(WEZTERM, settings(bell=True))
    d.notify(note(1), eligible=always, session="proj")
    assert out.startswith(b"\x1b]777;notify;Pi \xe2\x80\x94 proj;Finished") and out.endswith(
        b"\x07"
    )
    assert log.of("delivery") == [
        {"cue": 1, "channel": "terminal", "state": "requested", "reason": "osc777"},
        {"cue": 1, "channel": "terminal", "state": "unconfirmable",
         "reason": "terminal OSC has no receipt"},
        {"cue": 1, "channel": "bell", "state": "unconfirmable", "reason": ""},
        {"cue": 1, "channel": "desktop", "state": "off",
         "reason": "no graphical session (neither DISPLAY nor WAYLAND_DISPLAY is set)"},
    ]  # fmt: skip


def test_the_plan_chooses_the_desktop_and_the_terminal_says_why_not_and_rings_the_bell() -> None:
    d, log, out = made(XTERM_DESKTOP, settings(bell=True))
    assert [c.name for c in d.chosen()] == ["terminal", "desktop"]
    assert isinstance(d.chosen()[1], DBusChannel)
    d._channels["desktop"] = Off("desktop", "stands in for the D-Bus worker", log_record(log))
    d.notify(note(1), eligible=always, session="proj")
    assert out == b"\x07"  # no OSC: the desktop's popup is the one
    [terminal, bell, desktop] = log.of("delivery")
    assert terminal["state"] == "off" and terminal["reason"].startswith(
        "not sent: cuewrap's desktop"
    )
    assert bell["channel"] == "bell" and desktop["reason"] == "stands in for the D-Bus worker"


def log_record(log: RecordingLog) -> Callable[[int, str, Any, str], None]:
    return lambda cue, ch, st, why: log.write("delivery", cue=cue, channel=ch, state=st, reason=why)


class Route:
    """Stands for the tmux side: records, then delivers with what tmux is said to say now
    (None: tmux could not be asked), or not at all (the cue went stale meanwhile)."""

    def __init__(self, live: Live | None = None, fail: bool = False) -> None:
        self.live, self.fail = live, fail
        self.deliver = True
        self.got: list[int] = []

    def notify(self, n: Notify, deliver: Callable[[Notify, Live | None], None]) -> None:
        if self.fail:
            raise RuntimeError("tmux broke")
        self.got.append(n.cue_id)
        if self.deliver:
            deliver(n, self.live)

    def live_now(self) -> Live | None:
        return self.live


IN_TMUX = {"TERM": "tmux-256color", "TMUX": "/tmp/t,1,0", "TMUX_PANE": "%0"}
PASSTHROUGH_OFF = TmuxInfo("off", "xterm-256color", "WezTerm 20240203", "3.4")


def in_tmux() -> tuple[Delivery, RecordingLog, bytearray]:
    """A session started inside tmux with allow-passthrough off (no desktop)."""
    log, out = RecordingLog(), bytearray()
    d = Delivery(Context(Loop(), settings(), log, IN_TMUX), out.extend, tmux_info=PASSTHROUGH_OFF)
    return d, log, out


def test_inside_tmux_the_route_comes_first_and_what_tmux_says_then_decides() -> None:
    d, log, out = in_tmux()
    route = Route(Live(TmuxInfo("on", "xterm-256color", "WezTerm 20240203", "3.4"), True))
    d.route_through(route)
    d.notify(note(1), eligible=always, session="proj")  # turned on since the start
    assert route.got == [1] and out.startswith(b"\x1bPtmux;\x1b\x1b]777;")
    assert log.of("delivery") == [
        {"cue": 1, "channel": "terminal", "state": "unconfirmable",
         "reason": "tmux passthrough (pane shown)"},
        {"cue": 1, "channel": "desktop", "state": "off",
         "reason": "no graphical session (neither DISPLAY nor WAYLAND_DISPLAY is set)"},
    ]  # fmt: skip
    assert [r["popup"] for r in log.of("channels_now")] == ["terminal"]
    del out[:]
    route.deliver = False  # gone stale while tmux was asked: the tmux side records it
    d.notify(note(2), eligible=always, session="proj")
    assert route.got == [1, 2] and out == b"" and len(log.of("delivery")) == 2
    route.deliver, route.live = True, None  # tmux could not be asked: as at the start
    d.notify(note(3), eligible=always, session="proj")
    assert out == b"" and [(r["channel"], r["state"]) for r in log.of("delivery")][2:] == [
        ("terminal", "off"), ("desktop", "off")
    ]  # fmt: skip
    assert "allow-passthrough" in log.of("delivery")[2]["reason"]
    assert len(log.of("channels_now")) == 1  # said once


def test_a_failing_route_is_logged_and_the_cue_goes_as_at_the_start() -> None:
    d, log, _ = made(WEZTERM)
    d.route_through(Route(fail=True))
    d.notify(note(1), eligible=always, session="proj")
    assert [r["where"] for r in log.of("internal_error")] == ["notify.tmux"]
    assert [r["channel"] for r in log.of("delivery")] == ["terminal", "terminal", "desktop"]


# -- withdrawal and escalation ---------------------------------------------------------------
def test_withdrawn_where_the_channel_can_close_it() -> None:
    d, log, out = made(KITTY)
    d.answered(Answers("kitty(0.36.1)", "a=focus:p=title,body,close", True))
    d.notify(note(1), eligible=always, session="proj")
    del out[:]
    d.withdraw(Withdraw(1, "user returned"))
    assert out.startswith(b"\x1b]99;") and b"p=close" in out
    assert log.of("withdrawal") == [
        {"cue": 1, "channel": "terminal", "state": "withdrawn", "reason": "user returned"}
    ]
    d.withdraw(Withdraw(1, "again"))  # nothing is withdrawn twice
    assert len(log.of("withdrawal")) == 1


def test_unsupported_where_it_went_and_cannot_be_closed_nothing_where_it_never_went() -> None:
    d, log, _ = made(WEZTERM, settings(command=["/bin/true"]))
    d.withdraw(Withdraw(7, "stale"))  # never sent: the terminal holds nothing of it
    assert log.of("withdrawal") == [
        {"cue": 7, "channel": "command", "state": "unsupported",
         "reason": "what notify.command sent is out of cuewrap's reach"},
    ]  # fmt: skip
    d._channels.pop("command")  # no process in the unit tier
    d.notify(note(1), eligible=always, session="proj")
    d.withdraw(Withdraw(1, "user returned"))
    assert log.of("withdrawal")[-1] == {
        "cue": 1, "channel": "terminal", "state": "unsupported",
        "reason": "osc777 has no way to close a notification",
    }  # fmt: skip
    d.withdraw(Withdraw(1, "again"))
    assert len(log.of("withdrawal")) == 2  # forgotten once said


def test_escalation_goes_to_every_channel_with_the_message_marked_escalated() -> None:
    d, log, out = made(WEZTERM)
    seen: list[Message] = []

    class Recording(Off):
        def escalate(self, m: Message) -> None:
            seen.append(m)

    d._channels["command"] = Recording("command", "", log_record(log))
    d.escalate(note(3), eligible=lambda e: e.cue_id == 3, session="proj")
    [m] = seen
    assert m.escalated and m.session == "proj" and m.ident.endswith("-3") and m.still_eligible()
    assert out == b"" and log.of("delivery") == []  # the terminal writes no second popup


def test_pending_and_close_ask_every_channel() -> None:
    d, log, _ = made(WEZTERM)

    class Busy(Off):
        closed = 0

        def pending(self) -> int:
            return 1

        def close(self) -> None:
            Busy.closed += 1
            raise RuntimeError("stuck")

    assert not d.pending()
    d._channels["command"] = Busy("command", "", log_record(log))
    assert d.pending()
    d.close()
    assert Busy.closed == 1 and [r["where"] for r in log.of("internal_error")] == ["command.close"]


# -- an answerable wait (docs/answering.md) --------------------------------------------------
class Answering:
    """Stands for the answerer: a token, two buttons, the clicks it is given."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.asked: list[int] = []  # cues whose buttons were made
        self.clicks: list[tuple[int, str]] = []

    def notification_answer(self) -> dict[str, Any] | None:
        if self.fail:
            raise RuntimeError("answerer broke")
        return {"token": "t" * 32, "options": ["Yes", "No"], "count": 2}

    def buttons(self, cue_id: int) -> tuple[Action, ...]:
        self.asked.append(cue_id)
        return (Action("answer-1", "Yes"), Action("answer-2", "No"))

    def button(self, cue_id: int, key: str) -> None:
        self.clicks.append((cue_id, key))


class Kept(Off):
    """A channel that keeps the messages it is given (and declares buttons if told)."""

    def __init__(self, name: str, log: RecordingLog, buttons: bool = False) -> None:
        super().__init__(name, "", log_record(log))
        self.capabilities = Capabilities(buttons=buttons)
        self.got: list[Message] = []

    def send(self, m: Message) -> None:
        self.got.append(m)

    def escalate(self, m: Message) -> None:
        self.got.append(m)


def waiting(cue: int) -> Notify:
    return Notify(
        cue, "needs-input", None, "Pi — proj", "Needs your input", Eligibility(0, None, cue, 0)
    )


def test_an_answerable_wait_carries_its_answer_and_its_buttons_where_a_channel_shows_them() -> None:
    answering = Answering()
    d, log, _ = made(XTERM_DESKTOP, answering=answering)
    desktop, command = Kept("desktop", log, buttons=True), Kept("command", log)
    d._channels.update(desktop=desktop, command=command)
    d.notify(waiting(1), eligible=always, session="proj")
    [on_desktop], [on_command] = desktop.got, command.got
    assert on_desktop.notify.actions == (Action("answer-1", "Yes"), Action("answer-2", "No"))
    assert on_command.answer == {"token": "t" * 32, "options": ["Yes", "No"], "count": 2}
    assert answering.asked == [1]
    d.notify(note(2), eligible=always, session="proj")  # finished: nothing to answer
    assert desktop.got[-1].notify.actions == () and command.got[-1].answer is None
    d.escalate(waiting(1), eligible=always, session="proj")  # the command's token again
    assert command.got[-1].escalated and command.got[-1].answer is not None
    assert answering.asked == [1]  # the buttons shown are raised in place: none made again
    d._on_action(1, "answer-2")  # a click comes back with its cue
    assert answering.clicks == [(1, "answer-2")]


def test_no_buttons_where_no_chosen_channel_shows_them_and_a_broken_answerer_fails_open() -> None:
    answering = Answering()
    d, log, _ = made(WEZTERM, answering=answering)  # the desktop is off here
    command = Kept("command", log)
    d._channels["command"] = command
    d.notify(waiting(1), eligible=always, session="proj")
    assert answering.asked == [] and command.got[0].notify.actions == ()
    assert command.got[0].answer is not None
    answering.fail = True
    d.notify(waiting(2), eligible=always, session="proj")
    assert command.got[1].answer is None  # sent all the same, without the answer
    assert [r["where"] for r in log.of("internal_error")] == ["answer.notify"]


def test_inside_tmux_a_cue_is_withdrawn_as_its_own_plan_allows() -> None:
    """Each cue inside tmux has the plan of its moment: one sent to a kitty that closes its
    notifications is closed when it goes stale, though the plan changed since (passthrough
    turned off: the next cue went to the desktop)."""
    log, out = RecordingLog(), bytearray()
    kitty = TmuxInfo("on", "xterm-kitty", "kitty(0.36.1)", "3.4")
    d = Delivery(Context(Loop(), settings(), log, IN_TMUX), out.extend, tmux_info=kitty)
    route = Route(Live(kitty, True))
    d.route_through(route)
    d.notify(note(1), eligible=always, session="proj")
    assert out.startswith(b"\x1bPtmux;\x1b\x1b]99;")
    route.live = Live(TmuxInfo("off", "xterm-kitty", "kitty(0.36.1)", "3.4"), True)
    d.notify(note(2), eligible=always, session="proj")
    assert log.of("delivery")[-2]["reason"].startswith("inside tmux with allow-passthrough off")
    del out[:]
    d.withdraw(Withdraw(1, "user returned"))
    assert out.startswith(b"\x1bPtmux;\x1b\x1b]99;") and b"p=close" in out
    assert log.of("withdrawal") == [
        {"cue": 1, "channel": "terminal", "state": "withdrawn", "reason": "user returned"}
    ]
    d.withdraw(Withdraw(2, "user returned"))  # never shown by the terminal: nothing to close
    assert len(log.of("withdrawal")) == 1


# -- the title in Konsole ----------------------------------------------------------------------
KONSOLE = {"KONSOLE_VERSION": "221203"}


def _later(d: Delivery, seconds: float) -> None:
    """The loop's clock ``seconds`` on, and the timers due by then run."""
    now = d.loop.clock()
    d.loop.clock = lambda: now + seconds
    d.loop.run_due_timers()


def test_in_konsole_the_title_is_written_again_a_moment_later_as_it_then_stands() -> None:
    """Konsole takes a title in 20 ms after it arrives and shows it at its next look (2 s after
    output): a look in between misses it until more output comes (docs/terminals.md). The
    title as it stands then is written again; a title meanwhile, the child's own too,
    replaces that second write."""
    from cuewrap.deliver.delivery import KONSOLE_AGAIN
    from cuewrap.term.sequences import set_title

    d, _, out = made(KONSOLE)
    d.child_title("π - work")
    assert out == b""  # the child's own title: cuewrap writes nothing
    d.set_mark("[✓]")
    assert out == set_title("[✓] π - work")
    _later(d, KONSOLE_AGAIN / 2)
    assert out == set_title("[✓] π - work")
    _later(d, KONSOLE_AGAIN)
    assert out == set_title("[✓] π - work") * 2
    _later(d, 10 * KONSOLE_AGAIN)
    assert out == set_title("[✓] π - work") * 2  # once
    del out[:]
    d.set_mark(None)
    d.child_title("π - other")  # before the second write: the child's own is what stands
    _later(d, 10 * KONSOLE_AGAIN)
    assert out == set_title("π - work")
    del out[:]
    d.set_mark("[?]")
    d.close()
    _later(d, 10 * KONSOLE_AGAIN)
    assert out == set_title("[?] π - other")  # closed: nothing more


@pytest.mark.parametrize("env", [{}, {**KONSOLE, "TMUX": "/tmp/t,1,0"}])
def test_outside_konsole_a_title_is_written_once(env: dict[str, str]) -> None:
    from cuewrap.deliver.delivery import KONSOLE_AGAIN
    from cuewrap.term.sequences import set_title

    d, _, out = made(env)
    d.child_title("π - work")
    d.set_mark("[✓]")
    _later(d, 10 * KONSOLE_AGAIN)
    assert out == set_title("[✓] π - work")
