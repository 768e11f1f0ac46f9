"""Cues end to end: real Pi (1.4.0 and latest) under ``python -m cuewrap --log LOG pi …``.

The rig (tests/pirig.py) plays the host terminal: ``focus_out``/``focus_in`` write the
focus reports into cuewrap's stdin, ``raw_output`` is every byte cuewrap wrote to its
terminal. Notifications are counted by parsing the OSC 777 sequences in ``raw_output``
(cuewrap picks OSC 777 for an unrecognised terminal, and desktop notifications are off: the
rig drops DISPLAY/WAYLAND_DISPLAY) and cross-checked with the decision log's ``cue`` and
``delivery`` records; title marks by parsing the OSC 0/2 title sequences (Pi writes its own
title as ``OSC 0;π - work BEL``, cuewrap composes marks as ``OSC 2;[✓] π - work ST``).

docs/design.md#cue-rules and #delivery are the reference; docs/pi-facts.md the Pi side.
"""

from __future__ import annotations

import os
import re
import signal
from typing import Any

import pytest
from fakemodel import FakeModel, http_error, text, tool_call
from pirig import (
    NOTIFY_TITLE,
    TITLE,
    PiSession,
    _descendants,
    _proc_stat,
    explain,
    ready_away,
    started_run,
)
from procstat import cmdline
from termscan import last_title, notifications, oscs, titles
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

MARK_WAITING, MARK_DONE, MARK_FAILED = "[?]", "[✓]", "[!]"


def marked(mark: str) -> str:
    return f"{mark} {TITLE}"


# --------------------------------------------------------------------------------------------
# Waiting


def wait_title(s: PiSession, expected: str, timeout: float = 5.0) -> None:
    wait_until(lambda: last_title(s.raw_output) == expected, timeout,
               f"last title {expected!r}", detail=lambda: explain(s))  # fmt: skip


def wait_notifications(s: PiSession, n: int, timeout: float = 5.0) -> list[tuple[str, str]]:
    return wait_until(
        lambda: (lambda got: got if len(got) >= n else None)(notifications(s.raw_output)),
        timeout,
        f"{n} notification(s)",
        detail=lambda: explain(s),
    )


def wait_settled(s: PiSession, count: int = 1, timeout: float = 15.0) -> dict[str, Any]:
    """The ``count``-th AgentSettled fact from the bridge."""

    def check() -> dict[str, Any] | None:
        got = [r for r in s.log_records("fact") if r.get("type") == "AgentSettled"]
        return got[count - 1] if len(got) >= count else None

    return wait_until(check, timeout, f"AgentSettled #{count}", detail=lambda: explain(s))


def cues(s: PiSession, kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in s.log_records("cue") if kind is None or r.get("cue") == kind]


def check_deliveries(s: PiSession) -> None:
    """Cross-check: one OSC 777 per ``cue`` record, each with terminal delivery records
    requested → unconfirmable (docs/design.md#cue-rules rule 13: a terminal OSC has no receipt)."""
    records = cues(s)
    assert len(notifications(s.raw_output)) == len(records), records
    deliveries = s.log_records("delivery")
    for rec in records:
        states = [
            d["state"]
            for d in deliveries
            if d.get("cue") == rec["cue_id"] and d.get("channel") == "terminal"
        ]
        assert states == ["requested", "unconfirmable"], (rec, deliveries)


def focus_fact_count(s: PiSession) -> int:
    return sum(1 for r in s.log_records("fact") if r.get("type") == "Presence")


def focus(s: PiSession, direction: str) -> None:
    """One focus report, and wait until cuewrap has stepped it (its Presence fact)."""
    n = focus_fact_count(s)
    s.focus_in() if direction == "in" else s.focus_out()
    wait_until(lambda: focus_fact_count(s) > n, 5, f"focus {direction} fact",
               detail=lambda: explain(s))  # fmt: skip


def assert_quiet(s: PiSession, seconds: float, notes: int, title: str | None) -> None:
    """Nothing new for ``seconds``: still ``notes`` notifications and the same last title."""
    absence_window(seconds, "a new notification or title")
    assert len(notifications(s.raw_output)) == notes, notifications(s.raw_output)
    assert last_title(s.raw_output) == title, titles(s.raw_output)[-5:]


def one_finished_cue(s: PiSession) -> None:
    """One cue, for a run that completed: its notification, the title's mark, its record."""
    [(title, body)] = wait_notifications(s, 1)
    assert title == NOTIFY_TITLE
    assert re.search(r"finished|completed", body, re.I), body
    wait_title(s, marked(MARK_DONE))
    [cue] = cues(s)
    assert cue["cue"] == "finished" and cue["outcome"] == "completed"


# --------------------------------------------------------------------------------------------
# 1-2: a run settles while away / while present


def test_run_settles_while_away(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 1", "all done", prompt="run the tool", away=True)
    s.wait_for_screen(r"^ all done$")
    assert wait_settled(s)["aborted"] is False
    one_finished_cue(s)
    check_deliveries(s)
    s.wait_idle()
    # The user comes back: the mark goes (the child's own title is re-sent), nothing new.
    focus(s, "in")
    wait_title(s, TITLE)
    assert_quiet(s, 1.0, 1, TITLE)
    assert len(cues(s)) == 1
    # Rule 6: a run that settled (and was cued) does not cue again when the user leaves.
    focus(s, "out")
    assert_quiet(s, 0.5, 1, TITLE)


def test_run_settles_while_present(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(
        tool_call("bash", {"command": "sleep 1"}), text("first done"),
        tool_call("bash", {"command": "sleep 1"}), text("second done"),
    )  # fmt: skip
    s: PiSession = pi_session()
    # (a) No focus report ever: presence is "unknown", the typed prompt counts as present
    # and presence.idle_after (60 s by default) is far away.
    s.prompt("first run")
    s.wait_for_screen(r"^ first done$")
    wait_settled(s, 1)
    s.wait_idle()
    # (b) The terminal reports focus: focused, and it stays so through the run.
    focus(s, "in")
    s.prompt("second run")
    s.wait_for_screen(r"^ second done$")
    wait_settled(s, 2)
    s.wait_idle()
    absence_window(0.5, "a late cue for a run settled while present")
    assert notifications(s.raw_output) == []
    assert cues(s) == []
    assert all(t == TITLE for t in titles(s.raw_output)), titles(s.raw_output)
    assert [r.get("mark") for r in s.log_records("mark")] == []
    reasons = [r["reason"] for r in s.log_records("no_cue") if r.get("cue") == "finished"]
    assert len(reasons) == 2, reasons
    assert re.search(r"present|keystroke", reasons[0]) and "focus" in reasons[1], reasons
    # Rule 6: leaving after a run settled while focused produces nothing.
    focus(s, "out")
    assert_quiet(s, 1.0, 0, TITLE)


# --------------------------------------------------------------------------------------------
# 3: an LLM error


def test_llm_error_while_away(pi_session: Any, fakemodel: FakeModel, pi_home: Any) -> None:
    pi_home.write_settings(retry={"enabled": True, "maxRetries": 2, "baseDelayMs": 200})
    fakemodel.push(*[http_error(500)] * 3)
    s: PiSession = pi_session()
    ready_away(s)
    s.prompt("fail please")
    s.wait_for_screen(r"Retry failed after 2 attempts")
    wait_settled(s)
    [(title, body)] = wait_notifications(s, 1)
    assert title == NOTIFY_TITLE
    assert re.search(r"fail|error", body, re.I), body
    assert not re.search(r"finished|completed", body, re.I), body
    wait_title(s, marked(MARK_FAILED))
    [cue] = cues(s)
    assert cue["cue"] == "finished" and cue["outcome"] == "failed"
    assert len(fakemodel.requests) == 3  # the retries are inside the one run: one cue
    check_deliveries(s)
    assert_quiet(s, 0.8, 1, marked(MARK_FAILED))


# --------------------------------------------------------------------------------------------
# 4: a dialog while away


def test_dialog_while_away(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("test_confirm", {"message": "Deploy now?"}), text("deployed"))
    s: PiSession = pi_session()
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    # Rule 2: the wait starts while away -> [?] and ONE notification.
    [(title, body)] = wait_notifications(s, 1)
    assert title == NOTIFY_TITLE
    assert re.search(r"input|waiting|needs", body, re.I), body
    wait_title(s, marked(MARK_WAITING))
    assert [c["cue"] for c in cues(s)] == ["needs-input"]
    # Rule 3: focus returns -> every mark hidden, the wait stays pending.
    focus(s, "in")
    wait_title(s, TITLE)
    assert s.state == "dialog"
    # Rule 4: leaving again while the same wait is pending -> [?] again, no new notification.
    focus(s, "out")
    wait_title(s, marked(MARK_WAITING))
    focus(s, "in")
    wait_title(s, TITLE)
    focus(s, "out")
    wait_title(s, marked(MARK_WAITING))
    assert_quiet(s, 0.8, 1, marked(MARK_WAITING))
    assert len(cues(s)) == 1
    # Answer the dialog. The last focus report said "away", and with focus reports a keystroke says
    # nothing about presence (docs/design.md#presence: keys count only without any focus report), so
    # by docs/design.md#cue-rules rule 6 the run settles while away: one finished cue follows — a
    # new cue for a new fact (the run's end), not a second one for the wait (rule 4 covers only the
    # wait). Had the user focused the window first, nothing would follow.
    s.enter()
    s.wait_for_screen(r"confirmed: yes")
    s.wait_for_screen(r"^ deployed$")
    assert wait_settled(s)["aborted"] is False
    notes = wait_notifications(s, 2)
    assert len(notes) == 2 and re.search(r"finished|completed", notes[1][1], re.I), notes
    wait_title(s, marked(MARK_DONE))
    assert [(c["cue"], c["outcome"]) for c in cues(s)] == [
        ("needs-input", None),
        ("finished", "completed"),
    ]
    check_deliveries(s)
    assert_quiet(s, 0.5, 2, marked(MARK_DONE))


# --------------------------------------------------------------------------------------------
# 5: Pi killed


def test_pi_killed_while_away(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(pi_session, fakemodel, "sleep 30", prompt="sleep long")
    s.wait_for_screen(r"Elapsed")
    ready_away(s)
    tree = _descendants(s.pid)
    # Pi runs under cuewrap's session leader (a child of cuewrap): Pi is cuewrap's grandchild
    leaders = {p for p, _ in tree if (st := _proc_stat(p)) is not None and st[0] == s.pid}
    pi_pids = [p for p, _ in tree if (st := _proc_stat(p)) is not None and st[0] in leaders]
    assert len(pi_pids) == 1, [(p, cmdline(p)) for p, _ in tree]
    sleeps = [p for p, _ in tree if cmdline(p).startswith("sleep")]
    try:
        os.kill(pi_pids[0], signal.SIGKILL)
        assert s.wait_exit(10) == 128 + signal.SIGKILL
    finally:  # the tool's sleep outlives a SIGKILLed Pi (no longer our descendant)
        for pid in sleeps:
            if cmdline(pid).startswith("sleep"):
                os.kill(pid, signal.SIGKILL)
    [(title, body)] = notifications(s.raw_output)
    assert title == NOTIFY_TITLE
    assert re.search(r"killed", body, re.I), body
    [cue] = cues(s)
    assert cue["cue"] == "exited" and cue.get("signal") == signal.SIGKILL, cue
    check_deliveries(s)
    # The terminal is restored last: after the notification come only mode resets (CSI),
    # among them focus reporting off, the user's title popped and the alt screen left.
    raw = s.raw_output
    tail = raw[raw.rfind(b"\x1b]777;") :]
    tail = tail[tail.index(b"\x1b\\") + 2 :]
    assert re.fullmatch(rb"(?:\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e])+", tail), tail
    for restore in (b"\x1b[?1004l", b"\x1b[23;0t", b"\x1b[?1049l"):
        assert restore in tail, (restore, tail)


# --------------------------------------------------------------------------------------------
# 6: reload after a dialog wait


def test_reload_drops_the_old_wait(pi_session: Any, fakemodel: FakeModel) -> None:
    """Real Pi cannot ``/reload`` while a dialog of a run is open: the dialog owns the
    keyboard, and ``/reload`` during a run only shows "Wait for the current response to
    finish before reloading." (interactive-mode ``handleReloadCommand``). So the old wait is
    notified and shown while away, then answered, the run settles (cued), and ``/reload``
    (still away) opens the gap: the mark goes, and nothing of the old wait or the old run —
    no ``[?]``, no ``[✓]``, no notification — comes back on later focus changes."""
    fakemodel.push(tool_call("test_confirm", {"message": "Reload soon?"}), text("answered"))
    s: PiSession = pi_session()
    ready_away(s)
    s.prompt("confirm please")
    s.wait_dialog()
    wait_notifications(s, 1)
    wait_title(s, marked(MARK_WAITING))
    focus(s, "in")
    wait_title(s, TITLE)
    focus(s, "out")
    wait_title(s, marked(MARK_WAITING))
    s.enter()
    s.wait_for_screen(r"^ answered$")
    wait_settled(s)
    wait_notifications(s, 2)
    wait_title(s, marked(MARK_DONE))
    s.wait_idle()
    s.submit("/reload")
    gap = s.wait_log("gap", timeout=10)
    assert "reload" in gap["reason"], gap
    wait_title(s, TITLE)
    s.wait_log(lambda r: r.get("kind") == "fact" and r.get("type") == "SessionStart"
               and r.get("reason") == "reload", timeout=10)  # fmt: skip
    s.wait_idle()
    marks = [r.get("mark") for r in s.log_records("mark")]
    assert marks[-1] is None, marks
    # The old wait ended (answered) and nothing stale is left: focus changes bring back
    # no mark and no notification.
    waits = [r for r in s.log_records("wait") if r.get("state") == "ended"]
    assert waits, s.log_records("wait")
    for direction in ("in", "out", "in", "out"):
        focus(s, direction)
    assert_quiet(s, 1.0, 2, TITLE)
    assert [c["cue"] for c in cues(s)] == ["needs-input", "finished"]
    check_deliveries(s)


# --------------------------------------------------------------------------------------------
# 7: /cue off, /cue on


def test_cue_off_then_on_replays_nothing(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(
        pi_session, fakemodel, "sleep 2", "settled quietly", prompt="run for a while", away=True
    )
    s.wait_for_screen(r"Elapsed")
    s.submit("/cue off")  # an extension command runs at once, even during a run
    s.wait_for_screen(r"cues off")
    s.wait_log(lambda r: r.get("kind") == "toggle" and r.get("enabled") is False)
    s.wait_for_screen(r"^ settled quietly$")
    wait_settled(s)
    s.wait_idle()
    no_cue = s.wait_log(lambda r: r.get("kind") == "no_cue" and r.get("cue") == "finished")
    assert no_cue["reason"] == "cues are off", no_cue
    s.submit("/cue on")
    s.wait_for_screen(r"cues on")
    s.wait_log(lambda r: r.get("kind") == "toggle" and r.get("enabled") is True)
    # Rule 7: turning cues back on never replays old cues.
    assert_quiet(s, 1.5, 0, TITLE)
    assert cues(s) == []
    assert all(t == TITLE for t in titles(s.raw_output)), titles(s.raw_output)


# --------------------------------------------------------------------------------------------
# 8: privacy


SECRET_PROMPT = "SECRET-PROMPT-123"
SECRET_ANSWER = "SECRET-ANSWER-456"
SECRET_TOOL = "SECRET-TOOL-789"  # the tool's output; the command line itself does not hold it
SECRET_QUESTION = "SECRET-QUESTION-000"


def test_privacy_nothing_of_the_conversation_leaks(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(
        tool_call("bash", {"command": "echo SECRET-TOOL-$((700 + 89))"}),
        tool_call("test_confirm", {"title": "Secret", "message": SECRET_QUESTION}),
        text(f"The answer is {SECRET_ANSWER}."),
    )
    s: PiSession = pi_session()
    ready_away(s)
    s.prompt(f"please do {SECRET_PROMPT}")
    s.wait_for_screen(SECRET_TOOL)
    s.wait_dialog()
    wait_notifications(s, 1)  # needs-input
    s.enter()
    s.wait_for_screen(SECRET_ANSWER)
    wait_settled(s)
    wait_notifications(s, 2)  # finished
    s.wait_idle()
    assert FakeModel.content_text(fakemodel.tool_results(1)[0]).strip() == SECRET_TOOL
    secrets = (SECRET_PROMPT, SECRET_ANSWER, SECRET_TOOL, SECRET_QUESTION, "SECRET")
    raw = s.raw_output
    written = oscs(raw, "777", "9", "99", "0", "2")
    assert len([p for n, p in written if n == "777"]) == 2
    for num, payload in written:
        for secret in secrets:
            assert secret not in payload, (num, payload)
    assert s.log_path is not None
    log_text = s.log_path.read_text(encoding="utf-8")
    for secret in secrets:
        assert secret not in log_text, secret
    check_deliveries(s)


# --------------------------------------------------------------------------------------------
# 9: focus reports never abort a run


def test_focus_changes_do_not_abort_a_run(pi_session: Any, fakemodel: FakeModel) -> None:
    s = started_run(
        pi_session,
        fakemodel,
        "sleep 2; echo still here",
        "completed ok",
        prompt="run while I wander",
    )
    s.wait_for_screen(r"Elapsed")
    for _ in range(4):
        focus(s, "out")
        focus(s, "in")
    s.wait_for_screen(r"^ completed ok$")
    settled = wait_settled(s)
    assert settled["aborted"] is False
    s.wait_idle()
    screen = s.screen_text
    assert "Command aborted" not in screen and "Operation aborted" not in screen
    assert "[O" not in screen and "[I" not in screen  # never typed into the editor
    before = [r for r in s.log_records("fact") if r.get("type") == "AgentBeforeSettle"]
    assert [r["outcome"] for r in before] == ["completed"]
    # Focused at the end: nothing to cue.
    assert cues(s) == []
    s.quit()
    assert s.wait_exit(10) == 0
    raw = s.raw_output
    assert b"\x1b[?1004l" in raw and b"\x1b[23;0t" in raw


# --------------------------------------------------------------------------------------------
# 10: no focus reports: idle time counts as away


def test_idle_fallback_without_focus_reports(pi_session: Any, fakemodel: FakeModel) -> None:
    fakemodel.push(tool_call("bash", {"command": "sleep 3"}), text("idle done"))
    s: PiSession = pi_session(env={"CUEWRAP_PRESENCE_IDLE_AFTER": "1"})
    s.prompt("run and let me wander off")
    s.wait_for_screen(r"^ idle done$", timeout=15)
    wait_settled(s)
    one_finished_cue(s)
    idle = [r for r in s.log_records("presence") if r.get("via") == "idle"]
    assert idle and idle[0]["presence"] == "away", s.log_records("presence")
    assert not [r for r in s.log_records("fact") if r.get("type") == "Presence"]
    check_deliveries(s)
