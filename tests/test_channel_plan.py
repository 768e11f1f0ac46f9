"""cuewrap.deliver.plan: one desktop popup per cue, and closing only where the terminal can."""

from __future__ import annotations

import pytest
from shared import RecordingLog

from cuewrap.deliver.plan import Answers, can_close, kitty_version, make_plan
from cuewrap.deliver.terminal import Choice, detect_terminal_protocol
from cuewrap.tmux.view import TmuxInfo

pytestmark = pytest.mark.unit

KITTY = Choice("osc99", False, "kitty", "kitty")
XTERM = Choice("osc777", False, "xterm", "xterm")
UNKNOWN = Choice("osc777", False, "unknown", "unknown")
GHOSTTY_TMUX = Choice("osc777", True, "ghostty in tmux", "ghostty")
CLOSES = Answers("kitty(0.36.1)", "a=focus:p=title,body,?,close", True)
OLD = Answers("kitty(0.26.5)", None, True)
LOCAL = (True, "local graphical session (DISPLAY=:0)")
SSH = (False, "over SSH (SSH_CONNECTION is set): it would show on the remote machine")


def plan(choice: Choice, t: str = "auto", d: str = "auto", desktop=LOCAL, **kw):  # type: ignore[no-untyped-def]
    return make_plan(choice, t, d, *desktop, in_tmux=kw.pop("in_tmux", False), **kw)


def test_kitty_with_defaults_one_popup_its_own() -> None:
    p = plan(KITTY, answers=CLOSES)
    assert (p.terminal, p.desktop, p.path, p.duplicates) == (True, False, "terminal", False)
    assert "kitty shows its own notifications on the desktop" in p.why
    assert p.can_close and "p=close" in p.close_why


def test_old_kitty_one_popup_and_no_close() -> None:
    p = plan(KITTY, answers=OLD)
    assert (p.terminal, p.desktop, p.path) == (True, False, "terminal")
    assert not p.can_close
    assert "kitty(0.26.5)" in p.close_why and "0.36" in p.close_why
    assert "cannot close" in p.why


def test_kitty_that_did_not_answer_the_query_gets_no_close() -> None:
    p = plan(KITTY, answers=Answers("", None, True))
    assert not p.can_close and "p=?" in p.close_why


def test_kitty_answer_without_close_gets_no_close() -> None:
    p = plan(KITTY, answers=Answers("kitty(0.40.0)", "p=title,body", True))
    assert not p.can_close and "does not list" in p.close_why


def test_xterm_cuewraps_desktop_notification_only() -> None:
    p = plan(XTERM)
    assert (p.terminal, p.desktop, p.path) == (False, True, "desktop")
    assert "xterm shows no desktop notification of its own" in p.why


def test_unknown_terminal_cuewraps_desktop_notification_sure_to_show_once() -> None:
    p = plan(UNKNOWN)
    assert (p.terminal, p.desktop, p.path) == (False, True, "desktop")


def test_inside_tmux_cuewraps_notification_its_click_selects_the_pane() -> None:
    p = plan(GHOSTTY_TMUX, in_tmux=True)
    assert (p.terminal, p.desktop, p.path) == (False, True, "desktop")
    assert "tmux pane" in p.why


def test_over_ssh_the_terminals_own() -> None:
    p = plan(KITTY, desktop=SSH, answers=OLD)
    assert (p.terminal, p.desktop, p.path) == (True, False, "terminal")
    assert "over SSH" in p.why


def test_both_set_on_explicitly_both_sent_and_it_says_so() -> None:
    p = plan(KITTY, "osc99", "on", answers=CLOSES)
    assert (p.terminal, p.desktop, p.path, p.duplicates) == (True, True, "both", True)
    assert "pop up twice" in p.why


def test_both_on_in_xterm_is_no_duplicate() -> None:
    p = plan(XTERM, "osc777", "on")
    assert (p.terminal, p.desktop, p.duplicates) == (True, True, False)


def test_one_explicit_the_other_yields() -> None:
    p = plan(KITTY, "osc99", "auto", answers=CLOSES)
    assert (p.terminal, p.desktop) == (True, False)
    p = plan(KITTY, "auto", "on", answers=CLOSES)
    assert (p.terminal, p.desktop) == (False, True)


def test_terminal_off_desktop_only() -> None:
    p = plan(Choice("off", False, "notify.terminal is off"), "off")
    assert (p.terminal, p.desktop, p.path) == (False, True, "desktop")
    p = plan(Choice("off", False, "notify.terminal is off"), "off", desktop=SSH)
    assert (p.terminal, p.desktop, p.path) == (False, False, "none")


@pytest.mark.parametrize(
    ("version", "expect"),
    [("kitty(0.26.5)", (0, 26, 5)), ("kitty(0.36.0)", (0, 36, 0)), ("XTerm(379)", None)],
)
def test_kitty_version(version: str, expect: tuple[int, ...] | None) -> None:
    assert kitty_version(version) == expect


def test_tmux_client_termtype_tells_the_version() -> None:
    ok, why = can_close(KITTY, Answers(), tmux_termtype="kitty(0.35.2)")
    assert not ok and "0.36" in why
    ok, _ = can_close(KITTY, Answers(), tmux_termtype="kitty(0.36.0)")
    assert ok


def test_the_terminals_own_answer_comes_before_the_environment() -> None:
    # an xterm started from a kitty inherits KITTY_WINDOW_ID: its XTVERSION says what it is
    env = {"TERM": "xterm", "KITTY_WINDOW_ID": "1", "XTERM_VERSION": "XTerm(379)"}
    assert detect_terminal_protocol(env, "auto", lambda: None).terminal == "kitty"
    choice = detect_terminal_protocol(env, "auto", lambda: None, "XTerm(379)")
    assert choice.terminal == "xterm"
    assert plan(choice).path == "desktop"


def test_tmux_info_is_not_asked_for_the_answers() -> None:
    info = TmuxInfo("on", "xterm-kitty", "kitty(0.36.0)", "3.4")
    env = {"TMUX": "/tmp/t,1,0", "TERM": "tmux-256color"}
    choice = detect_terminal_protocol(env, "auto", lambda: info)
    assert choice.terminal == "kitty" and choice.tmux_passthrough


def test_inside_tmux_each_delivery_is_planned_from_what_tmux_says_then() -> None:
    """``Delivery.decide``: the plan for a cue comes from tmux's view at that cue, not from what
    tmux said at start: passthrough turned on (or off), the pane hidden, another client's
    terminal. Still one popup: where the terminal's cannot get through, cuewrap's desktop one
    goes instead. A change is logged once (``channels_now``)."""
    import dataclasses

    from cuewrap.config import Settings
    from cuewrap.context import Context
    from cuewrap.deliver.delivery import Delivery
    from cuewrap.loop import Loop
    from cuewrap.tmux.view import Live

    base = Settings()
    settings = base._replace(notify=base.notify._replace(terminal="osc777"))
    env = {"TMUX": "/tmp/x,1,0", "TMUX_PANE": "%0", "DISPLAY": ":0"}
    log = RecordingLog()
    start = TmuxInfo("off", "xterm-256color", "WezTerm 20240203", "3.4")  # off at start
    loop = Loop()
    try:
        d = Delivery(Context(loop, settings, log, env), lambda b: None, tmux_info=start)
        assert not d.plan.terminal and d.plan.desktop  # at start: passthrough off
        on = Live(dataclasses.replace(start, allow_passthrough="on"), shown=True)
        notifier, p = d.decide(on)
        assert p.terminal and not p.desktop and notifier.choice.tmux_passthrough
        assert notifier.build(_note(), "x").startswith(b"\x1bPtmux;")
        assert d.decide(on) == (notifier, p)  # made once while tmux says the same
        hidden = Live(on.info, shown=False)
        notifier, p = d.decide(hidden)
        assert not p.terminal and p.desktop
        assert notifier.choice.reason == "Pi's window is not shown: tmux would drop it"
        off = Live(start, shown=True)
        notifier, p = d.decide(off)
        assert not p.terminal and p.desktop and "allow-passthrough on" in notifier.choice.reason
        told = [f["popup"] for f in log.of("channels_now")]
        assert told == ["terminal", "desktop", "desktop"], told  # on, hidden, off

        # /cue and the advice read tmux's last view
        class Route:  # the tmux side, as /cue asks it
            def notify(self, n: object, deliver: object) -> None: ...

            def live_now(self) -> Live:
                return on

        d.route_through(Route())
        assert d.plan.terminal and d.terminal_choice.protocol == "osc777"
    finally:
        loop.close()


def _note():  # type: ignore[no-untyped-def]
    from cuewrap.engine.effects import Eligibility, Notify

    eligibility = Eligibility(generation=0, run=1, cue_id=1, epoch=0)
    return Notify(1, "finished", None, "Pi", "Finished", eligibility)
