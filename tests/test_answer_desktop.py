"""Answer buttons on the desktop notification (docs/answering.md): real Pi, real dunst on a
private bus; a button is clicked through dunst's context menu (``dunstctl context``, its
``dmenu`` setting picking the named action)."""

from __future__ import annotations

import statistics
import subprocess
import time
from typing import Any

import pytest
from desktoprig import Session
from fakemodel import FakeModel
from pirig import PiSession, dialog_finished, open_dialog, ready_away
from waiting import wait_until

pytestmark = pytest.mark.desktop


def away(s: PiSession) -> None:
    ready_away(s)


def delivered(s: PiSession, n: int) -> dict[str, Any]:
    """The desktop delivery of the n-th needs-input cue."""

    def found() -> dict[str, Any] | None:
        waits = [c["cue_id"] for c in s.log_records("cue") if c.get("cue") == "needs-input"]
        if len(waits) < n:
            return None
        return next((r for r in s.log_records("delivery") if r.get("cue") == waits[n - 1]
                     and r.get("channel") == "desktop" and r.get("state") == "delivered"),
                    None)  # fmt: skip

    got: dict[str, Any] = wait_until(found, 15, "the desktop notification", detail=s.dump)
    return got


def click(d: Session, server_id: int, button: int) -> None:
    (d.tmp / "dunst-pick").write_text(f"[{server_id},answer-{button}]\n")
    subprocess.run(["dunstctl", "context"], env=d.env, check=True, timeout=10)


def menu(d: Session) -> str:
    path = d.tmp / "dunst-menu"
    return path.read_text() if path.exists() else ""


def answers(s: PiSession) -> list[dict[str, Any]]:
    return [r for r in s.log_records("answer") if "result" in r]


def test_confirm_answered_yes_and_no_from_the_notification(
    pi_session: Any, fakemodel: FakeModel, dunst_menu: Session
) -> None:
    s: PiSession = pi_session(env=dunst_menu.desktop())
    away(s)
    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Now?"})
    sid = int(delivered(s, 1)["reason"].split()[-1])
    click(dunst_menu, sid, 1)
    dialog_finished(s, fakemodel, "confirmed: yes")
    assert f"#Yes (Pi — work) [{sid},answer-1]" in menu(dunst_menu)
    assert f"#No (Pi — work) [{sid},answer-2]" in menu(dunst_menu)

    open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": "Again?"})
    sid2 = int(delivered(s, 2)["reason"].split()[-1])
    click(dunst_menu, sid2, 2)
    dialog_finished(s, fakemodel, "confirmed: no")
    # the option each dialog closed with, as Pi said it
    assert [(a["source"], a["option"], a["result"], a["took"]) for a in answers(s)] == [
        ("desktop", 1, "answered", 1),
        ("desktop", 2, "answered", 2),
    ]
    # an answer button answers; it does not lead back
    clicks = [r for r in s.log_records("activated") if r.get("action", "").startswith("answer")]
    assert [c["lead_back"] for c in clicks] == ["", ""]


def test_select_buttons_are_numbers_without_summary_and_a_click_after_a_key_is_refused(
    pi_session: Any, fakemodel: FakeModel, dunst_menu: Session
) -> None:
    s: PiSession = pi_session(env=dunst_menu.desktop())
    away(s)
    open_dialog(s, fakemodel, "test_select", {"title": "Pick", "options": ["Red", "Green", "Blue"]})
    sid = int(delivered(s, 1)["reason"].split()[-1])
    wait_until(lambda: any(r.get("state") == "answerable" for r in s.log_records("answer")), 5,
               "the token")  # fmt: skip
    s.send("x")  # a key in the session after the reminder: its buttons' token dies
    wait_until(lambda: any(r.get("state") == "token dead" for r in s.log_records("answer")), 5,
               "the token dead")  # fmt: skip
    click(dunst_menu, sid, 3)
    wait_until(lambda: answers(s), 5, "the refused click")
    assert [(a["source"], a["option"], a["why"]) for a in answers(s)] == [
        ("desktop", 3, "stale token")
    ]
    assert f"#3 (Pi — work) [{sid},answer-3]" in menu(dunst_menu)  # labels stay inside
    assert "Blue" not in menu(dunst_menu)
    time.sleep(0.5)
    assert "→ Red" in s.screen_text  # nothing typed
    s.enter()
    dialog_finished(s, fakemodel, "selected: Red")


def test_button_press_to_dialog_closed(
    pi_session: Any, fakemodel: FakeModel, dunst_menu: Session
) -> None:
    """20 confirms answered by a click: from ``dunstctl context`` (the press) to the log's
    ui_prompt_end fact, and the session's claim-to-closed time."""
    s: PiSession = pi_session(env=dunst_menu.desktop())
    away(s)
    times: list[float] = []
    for i in range(20):
        open_dialog(s, fakemodel, "test_confirm", {"title": "Deploy", "message": f"#{i}?"})
        sid = int(delivered(s, i + 1)["reason"].split()[-1])
        before = len([r for r in s.log_records("fact") if r.get("type") == "UiPromptEnd"])
        pressed = time.time()
        click(dunst_menu, sid, 1)

        def closed(before: int = before) -> float | None:
            ends = [r for r in s.log_records("fact") if r.get("type") == "UiPromptEnd"]
            return float(ends[before]["t"]) if len(ends) > before else None

        t_closed = wait_until(closed, 10, "the dialog closed")
        times.append((t_closed - pressed) * 1000)
        dialog_finished(s, fakemodel, "confirmed: yes")
    inside = [float(a["ms"]) for a in answers(s)]
    assert len(inside) == 20 and all(a["result"] == "answered" for a in answers(s))
    print(
        f"\nbutton press -> ui_prompt_end ms: p50 {statistics.median(times):.0f}"
        f" max {max(times):.0f}; claim -> closed ms: p50 {statistics.median(inside):.1f}"
        f" max {max(inside):.1f}"
    )
