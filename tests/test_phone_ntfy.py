"""cuewrap/phone/ntfy.py: the pure part of the phone (docs/phone.md)."""

from __future__ import annotations

import pytest

from cuewrap import ntfy

pytestmark = pytest.mark.unit


def test_new_topics_pass_the_check_and_differ() -> None:
    a, b = ntfy.new_topic(), ntfy.new_topic()
    assert a != b and not ntfy.check_topic(a) and not ntfy.check_topic(b)


@pytest.mark.parametrize(
    "name", ["mytopic", "my-reminders-change-me", "short", "x" * 30, "with space", "a/b", "é" * 20]
)
def test_guessable_or_invalid_topics_are_refused(name: str) -> None:
    assert ntfy.check_topic(name)


def test_the_subscribe_link() -> None:
    assert ntfy.subscribe_link("https://ntfy.sh/", "abc") == "ntfy://ntfy.sh/abc"
    assert ntfy.subscribe_link("http://h:8080/n", "abc") == "ntfy://h:8080/n/abc?secure=false"


def test_a_reply_is_a_token_and_a_number_only() -> None:
    token = "A" * 32
    assert ntfy.parse_reply(f"{token} 2") == (token, "2")
    for bad in (
        f"{token} yes",
        f"{token} 2 3",
        "short 1",
        f"{token} 123",
        f"{token} 2" + " " * 300,
    ):
        assert ntfy.parse_reply(bad) is None


def test_a_reminder_carries_the_buttons_and_never_the_machines_token() -> None:
    msg = ntfy.reminder("t" * 20, "cuewrap-1-2", event="needs-input", title="Pi\x1b]0;x\x07",
                        body="b\nc", buttons=[(1, "Yes"), (2, "No")], token="T" * 32,
                        reply_url="https://ntfy.sh/r", reply_auth="tk_write")  # fmt: skip
    assert msg["title"] == "Pi ]0;x" and msg["message"] == "b c" and msg["priority"] == 4
    assert [a["body"] for a in msg["actions"]] == ["T" * 32 + " 1", "T" * 32 + " 2"]
    assert all(a["headers"] == {"Authorization": "Bearer tk_write"} for a in msg["actions"])
    assert "actions" not in ntfy.reminder("t" * 20, "s", event="finished", title="", body="")
