"""The phone built in (docs/phone.md), end to end: real Pi on the fake model, cuewrap's own
phone channel and a local stand-in for ntfy's HTTP API (tests/ntfystand.py). What reaches
the phone is read from the stand-in (every event of a topic, and what a phone shows now), a
tap is the ``http`` request the ntfy app makes, and what reached Pi from the fake model's
side (the tool's result)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakemodel import FakeModel, text, tool_call
from ntfystand import NtfyStandIn
from pirig import PiSession, ready_away
from waiting import absence_window, wait_until

pytestmark = pytest.mark.pi

TOPIC, REPLY = "cuewrap-test-reminders-Q7x2Lk9v", "cuewrap-test-answers-Zr48TmwP3"


def phone_env(ntfy: NtfyStandIn, **more: str) -> dict[str, str]:
    return {
        "CUEWRAP_PHONE_ENABLED": "true",
        "CUEWRAP_PHONE_NTFY_SERVER": ntfy.url,
        "CUEWRAP_PHONE_TOPIC": TOPIC,
        "CUEWRAP_PHONE_REPLY_TOPIC": REPLY,
        **more,
    }


def confirm_away(s: PiSession, fm: FakeModel, **args: str) -> None:
    ready_away(s)
    fm.push(tool_call("test_confirm", {"title": "Deploy", "message": "Now?", **args}),
            text("after the dialog"))  # fmt: skip
    s.prompt("run test_confirm")


def reminder(ntfy: NtfyStandIn, s: PiSession) -> dict[str, Any]:
    [note] = wait_until(lambda: [m for m in ntfy.published(TOPIC) if m.get("actions")], 15,
                        "the phone's reminder with buttons", detail=s.dump)  # fmt: skip
    return note


def shown(ntfy: NtfyStandIn, s: PiSession, note: dict[str, Any], starts: str) -> dict[str, Any]:
    """Wait until the phone shows ``note``'s notification (its sequence id) with a text that
    starts with ``starts`` (and no buttons: nothing more to press)."""
    sid = note["sequence_id"]

    def now() -> dict[str, Any] | None:
        cur = [m for m in ntfy.current(TOPIC) if m["sequence_id"] == sid]
        ok = cur and cur[0]["message"].startswith(starts) and not cur[0].get("actions")
        return cur[0] if ok else None

    found: dict[str, Any] = wait_until(now, 10, f"the phone showing {starts!r}", detail=s.dump)
    return found


def tapped_while_down(ntfy: NtfyStandIn, s: PiSession, fm: FakeModel, label: str) -> dict[str, Any]:
    """Away, a confirm's reminder; the session's connection to the reply topic cut (and new
    ones refused until ``ntfy.refuse_streams`` is False), then the button ``label`` tapped."""
    confirm_away(s, fm)
    note = reminder(ntfy, s)
    s.wait_log(lambda r: r.get("kind") == "phone_listen" and r.get("state") == "open")
    ntfy.refuse_streams = True
    ntfy.drop()
    s.wait_log(lambda r: r.get("kind") == "phone_listen" and r.get("state") == "down")
    assert ntfy.tap(note, label) == 200  # while the session cannot hear it
    return note


def answers(s: PiSession) -> list[dict[str, Any]]:
    return [r for r in s.log_records("answer") if "result" in r]


def test_a_tap_answers_the_dialog_and_the_phone_hears_it(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    with NtfyStandIn(token="tk_machine") as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy, CUEWRAP_PHONE_TOKEN="tk_machine",
                                                CUEWRAP_PHONE_REPLY_TOKEN="tk_write"))  # fmt: skip
        ntfy.write_only["tk_write"] = {REPLY}
        confirm_away(s, fakemodel)
        note = reminder(ntfy, s)
        assert [b["label"] for b in note["actions"]] == ["Yes", "No"]
        assert all(b["url"] == f"{ntfy.url}/{REPLY}" for b in note["actions"])
        # the buttons carry the write-only token, never the machine's
        assert all(b["headers"] == {"Authorization": "Bearer tk_write"} for b in note["actions"])
        assert note["priority"] == 4 and len(ntfy.published(TOPIC)) == 1
        assert ntfy.tap(note, "No") == 200
        s.wait_for_screen(r"after the dialog")
        assert fakemodel.content_text(fakemodel.tool_results()[-1]) == "confirmed: no"
        shown(ntfy, s, note, "Answered: No")
        [attempt] = answers(s)
        assert (attempt["source"], attempt["option"], attempt["result"]) == ("phone", 2, "answered")
        # the same button again: too late, nothing typed
        assert ntfy.tap(note, "No") == 200
        shown(ntfy, s, note, "Too late")
        wait_until(lambda: len(answers(s)) == 2, 10, "the second attempt's record")
        assert answers(s)[1]["result"] == "refused" and answers(s)[1]["why"] == "stale token"
        assert ntfy.refused == 0
        assert s.isalive()


def test_an_answer_sent_while_the_connection_was_down_is_taken_after_it(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    with NtfyStandIn() as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy))
        note = tapped_while_down(ntfy, s, fakemodel, "Yes")
        time.sleep(1.0)
        assert not answers(s)
        ntfy.refuse_streams = False
        s.wait_for_screen(r"after the dialog", timeout=20)
        assert fakemodel.content_text(fakemodel.tool_results()[-1]) == "confirmed: yes"
        shown(ntfy, s, note, "Answered: Yes")


def test_an_answer_sent_while_down_is_refused_once_the_dialog_closed(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    with NtfyStandIn() as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy))
        note = tapped_while_down(ntfy, s, fakemodel, "No")
        s.focus_in()
        s.send(b"\r")  # answered at the terminal: Yes
        s.wait_for_screen(r"after the dialog")
        ntfy.refuse_streams = False
        shown(ntfy, s, note, "Too late: answered at the terminal")
        assert fakemodel.content_text(fakemodel.tool_results()[-1]) == "confirmed: yes"
        [attempt] = answers(s)
        assert (attempt["source"], attempt["result"]) == ("phone", "refused")


def test_coming_back_clears_the_phones_reminder(pi_session: Any, fakemodel: FakeModel) -> None:
    with NtfyStandIn() as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy))
        confirm_away(s, fakemodel)
        note = reminder(ntfy, s)
        s.focus_in()
        wait_until(lambda: not ntfy.current(TOPIC), 10, "the reminder cleared", detail=s.dump)
        [clear] = [e for e in ntfy.events[TOPIC] if e["event"] == "message_clear"]
        assert clear["sequence_id"] == note["sequence_id"]
        wait_until(lambda: [w for w in s.log_records("withdrawal")
                            if w["channel"] == "phone" and w["state"] == "withdrawn"], 10,
                   "the phone's withdrawal record")  # fmt: skip


def test_a_server_before_sequence_ids_is_logged_as_unsupported(
    pi_session: Any, fakemodel: FakeModel
) -> None:
    with NtfyStandIn(legacy=True) as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy))
        confirm_away(s, fakemodel)
        reminder(ntfy, s)
        s.focus_in()
        [w] = wait_until(
            lambda: [w for w in s.log_records("withdrawal") if w["channel"] == "phone"],
            10, "the withdrawal record",
        )  # fmt: skip
        assert w["state"] == "unsupported" and "2.16" in w["reason"]


def test_privacy_none_publishes_no_dialog_text(pi_session: Any, fakemodel: FakeModel) -> None:
    words = ("Sekrit", "Kumquat", "Zebrafish", "Marmalade", "Pickone")
    with NtfyStandIn() as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy))
        ready_away(s)
        fakemodel.push(tool_call("test_select", {"title": "Pickone Sekrit",
                                                 "options": ["Kumquat", "Zebrafish", "Marmalade"]}),
                       text("after the dialog"))  # fmt: skip
        s.prompt("run test_select")
        note = reminder(ntfy, s)
        assert [b["label"] for b in note["actions"]] == ["1", "2", "3"]
        assert ntfy.tap(note, "3") == 200
        s.wait_for_screen(r"after the dialog")
        shown(ntfy, s, note, "Answered: 3")
        sent = b"".join(ntfy.raw)
        assert sent and not [w for w in words if w.encode() in sent]


def test_quiet_hours_publish_nothing(pi_session: Any, fakemodel: FakeModel) -> None:
    with NtfyStandIn() as ntfy:
        s: PiSession = pi_session(env=phone_env(ntfy, CUEWRAP_QUIET_HOURS="00:00-23:59"))
        s.wait_log(lambda r: r.get("kind") == "quiet" and r.get("state") == "on")
        confirm_away(s, fakemodel)
        s.wait_dialog()
        wait_until(lambda: s.log_records("held"), 10, "the cue held", detail=s.dump)
        absence_window(2.0, "a publish")
        assert ntfy.requests == []


@pytest.mark.parametrize("mode", ["down", "5xx", "4xx", "slow"])
def test_a_failing_server_costs_no_local_reminder(
    pi_session: Any, fakemodel: FakeModel, mode: str
) -> None:
    with NtfyStandIn() as ntfy:
        ntfy.mode, ntfy.slow = mode, 8.0
        s: PiSession = pi_session(env=phone_env(ntfy, CUEWRAP_NOTIFY_TERMINAL="osc777"))
        confirm_away(s, fakemodel)
        s.wait_dialog()
        wait_until(lambda: [d for d in s.log_records("delivery")
                            if d["channel"] == "terminal" and d["state"] == "unconfirmable"],
                   10, "the terminal's reminder", detail=s.dump)  # fmt: skip
        s.send(b"\r")  # the session answers at once meanwhile
        s.wait_for_screen(r"after the dialog")
        if mode != "slow":
            failed, *_ = wait_until(lambda: [d for d in s.log_records("delivery")
                                           if d["channel"] == "phone" and d["state"] == "failed"],
                                  20, "the phone's failure", detail=s.dump)  # fmt: skip
            # a 4xx is not tried again; a connection closed or a 5xx three times
            assert ("after 1 tries" if mode == "4xx" else "after 3 tries") in failed["reason"]
        assert s.isalive()
