"""The pure parts of cuewrap's tmux support, with made-up tmux output (the real thing is in
test_tmux_pi.py): the pane view, the presence merge, the advice."""

from __future__ import annotations

import pytest

from cuewrap.advice import FOCUS_EVENTS, PASSTHROUGH, Where, fixes, situation
from cuewrap.tmux.command import literal
from cuewrap.tmux.view import CLIENT_FORMAT, PANE_FORMAT, PresenceMerge, parse_view

pytestmark = pytest.mark.unit

# --- text for display-message -------------------------------------------------------------


def test_literal_keeps_tmux_formats_out() -> None:
    assert literal("Pi — #{pane_id} #[fg=red]") == "Pi — ##{pane_id} ##[fg=red]"


# --- the pane view ---------------------------------------------------------------------------


def pane(window_active: str = "1", passthrough: str = "0", focus: str = "0") -> str:
    fields = ["$1", "work", "@2", "0", "pi", window_active, "%3", passthrough, focus, "1", "3.3a"]
    assert len(fields) == PANE_FORMAT.count("\t") + 1
    return "\t".join(fields)


def client(
    name: str,
    window: str,
    pane_id: str,
    *,
    control: bool = False,
    flags: str = "",
    termtype: str = "kitty(0.36.0)",
) -> str:
    fields = [name, "1" if control else "0", "$1", window, pane_id, flags or "attached,focused"]
    fields += ["xterm-kitty", termtype]
    assert len(fields) == CLIENT_FORMAT.count("\t") + 1
    return "\t".join(fields)


def test_view_states() -> None:
    front = parse_view((pane(),), (client("/dev/pts/1", "@2", "%3"),))
    assert front is not None and front.state == "active" and front.clients_elsewhere() == ()
    split = parse_view((pane(),), (client("/dev/pts/1", "@2", "%4"),))
    assert split is not None and split.state == "visible"
    assert split.clients_elsewhere() == ("/dev/pts/1",)
    other = parse_view((pane("0"),), (client("/dev/pts/1", "@5", "%6"),))
    assert other is not None and other.state == "hidden" and other.flag_works()
    # a control client (another program's), a suspended client and an exiting one are nobody
    nobody = parse_view(
        (pane(),),
        (
            client("client-9", "@2", "%3", control=True),
            client("/dev/pts/2", "@2", "%3", flags="attached,suspended"),
            client("/dev/pts/3", "@2", "%3", flags="attached,exited"),
        ),
    )
    assert nobody is not None and nobody.state == "hidden" and nobody.clients == ()
    # Pi's window is current but nobody is attached: flagged
    assert nobody.flag_works() and not front.flag_works()
    assert front.where() == "session work, window 0 (pi)"


def test_view_names_the_terminal_that_shows_the_pane() -> None:
    """The client in front of Pi's pane, else one showing its window, else any: its terminal
    is what a notification from the pane reaches (its termtype kept whole, tabs and all)."""
    elsewhere = client("/dev/pts/1", "@5", "%6", termtype="XTerm(390)")
    split = client("/dev/pts/2", "@2", "%4", termtype="foot(1.20)")
    front = client("/dev/pts/3", "@2", "%3", termtype="kitty(0.36.0)\tbuild x")
    view = parse_view((pane(),), (elsewhere, split, front))
    assert view is not None and view.state == "active"
    looker = view.looker()
    assert looker is not None and looker.name == "/dev/pts/3"
    assert looker.termtype == "kitty(0.36.0)\tbuild x" and looker.termname == "xterm-kitty"
    view = parse_view((pane(),), (elsewhere, split))
    assert view is not None and view.looker() is not None and view.looker().name == "/dev/pts/2"
    view = parse_view((pane(),), (elsewhere,))
    assert view is not None and view.looker() is not None and view.looker().name == "/dev/pts/1"
    view = parse_view((pane(),), ())
    assert view is not None and view.looker() is None


def test_view_options_and_malformed_answers() -> None:
    on = parse_view((pane(passthrough="on", focus="1"),), ())
    assert on is not None and on.passthrough and on.focus_events
    assert parse_view((), ()) is None
    assert parse_view(("not\ta\tpane",), ()) is None
    view = parse_view((pane(),), ("garbage", client("/dev/pts/1", "@2", "%3")))
    assert view is not None and len(view.clients) == 1


# --- the presence merge ----------------------------------------------------------------------


def test_presence_merge() -> None:
    p = PresenceMerge()
    assert p.on_tmux("active") is None  # nothing known: the engine starts there anyway
    assert p.on_tmux("hidden") == "away"
    assert p.on_focus("focused") is None  # still hidden
    assert p.on_tmux("active") == "focused"
    assert p.on_focus("away") == "away"
    assert p.on_tmux("visible") is None  # still away
    assert p.on_focus("focused") is None
    assert p.on_tmux("active") == "focused"
    q = PresenceMerge()
    assert q.on_tmux("hidden") == "away"
    assert q.on_tmux("active") == "unknown"  # back in front, no focus report: keys and idle
    assert q.on_tmux(None) is None  # tmux gone: focus reports alone (none: unknown)


# --- advice ----------------------------------------------------------------------------------


def test_advice_names_one_setting_per_weakness() -> None:
    weak = Where(ssh=True, tmux=True, tmux_version="3.3a", focus_events=False, passthrough=False)
    found = fixes(weak)
    assert [f.rsplit(": ", 1)[1] for f in found] == [FOCUS_EVENTS, PASSTHROUGH]
    text = "\n".join(situation(weak))
    assert "over SSH" in text and "desktop notifications are off" in text
    assert "inside tmux 3.3a" in text and "focus-events off" in text
    good = Where(ssh=False, tmux=True, focus_events=True, passthrough=True, focus_reported=True)
    assert fixes(good) == []
    silent = Where(ssh=False, tmux=False, focus_reported=False, terminal_notifications=False)
    found = fixes(silent)
    assert "presence.idle_after" in found[0] and "notify.desktop = on" in found[1]
    assert "notify.command" in fixes(Where(ssh=True, tmux=False, terminal_notifications=False))[0]


def test_presence_merge_forgets_a_focus_report_tmux_no_longer_makes() -> None:
    p = PresenceMerge()
    p.on_tmux("active")
    assert p.on_focus("away") == "away"
    p.forget_focus()
    assert p.on_tmux("active") == "unknown"
