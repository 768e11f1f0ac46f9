"""ntfy, pure: what cuewrap publishes and reads, and the phone settings' checks (no I/O).

ntfy's HTTP API as documented (docs.ntfy.sh, "Publishing" and "Subscribing"): a message is
published as JSON to the server's root (``topic``, ``title``, ``message``, ``priority``,
``tags``, ``actions``, ``sequence_id``); a message with the sequence id of an earlier one
replaces it on the phone (ntfy 2.16 and later; an older server shows a second one);
``PUT /<topic>/<sequence_id>/clear`` dismisses it, ``DELETE /<topic>/<sequence_id>`` removes
it. A topic's messages come as one JSON object per line from ``GET /<topic>/json``
(``since=<id>`` resumes after a message: nothing sent meanwhile is lost while the server keeps
it). An ``http`` action button makes its request when tapped: cuewrap's publish
``TOKEN N`` (the wait's single-use token, the option's number) to the reply topic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# the settings' checks run while settings load, before the child is spawned: nothing heavy
from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

TOPIC_RE = re.compile(r"[-_A-Za-z0-9]{1,64}")
MIN_TOPIC = 16  # characters: shorter names are guessable on a public server
# words of placeholders and examples (the old recipe's, ntfy's docs'): never a real topic
PLACEHOLDERS = ("change-me", "changeme", "mytopic", "my-topic", "example", "your-topic",
                "yourtopic", "replace", "placeholder", "test-topic")  # fmt: skip
MAX_REPLY = 200  # bytes of a reply message read: "TOKEN N" is about 40
MAX_TEXT = 200  # characters of a title or body published
PRIORITY = {"needs-input": 4, "failed": 4, "finished": 3}  # ntfy's 1..5; others 3
TAGS = {"needs-input": ["question"], "failed": ["x"], "finished": ["white_check_mark"],
        "cancelled": ["heavy_multiplication_x"], "exited": ["door"]}  # fmt: skip


def check_topic(name: str) -> str:
    """ "" for a topic nobody can guess, else why not (one line)."""
    if not TOPIC_RE.fullmatch(name):
        return "a topic is 1 to 64 letters, digits, - or _"
    low = name.lower()
    if any(word in low for word in PLACEHOLDERS):
        return f"{name!r} is a placeholder: run `cuewrap phone` for a topic nobody can guess"
    if len(name) < MIN_TOPIC or len(set(name)) < 8:
        return (
            f"{name!r} is guessable (a topic is a password on a public server): at least"
            f" {MIN_TOPIC} varied characters, e.g. from `cuewrap phone`"
        )
    return ""


def check_server(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{url!r} is not an http(s) URL, e.g. https://ntfy.sh"
    if parts.query or parts.fragment:
        return f"{url!r}: no query or fragment"
    return ""


def check_setting(key: str, text: str) -> str:
    """The check of ``phone.<key>``'s value (the config loader's): "" or why not."""
    text = text.strip()
    if key in ("topic", "reply_topic"):
        return check_topic(text)
    if key == "ntfy_server":
        return check_server(text)
    if key in ("token", "reply_token"):
        if not text or any(c.isspace() or not c.isprintable() for c in text) or len(text) > 256:
            return "an access token is one word of printable characters"
    return ""


def new_topic(prefix: str = "cuewrap") -> str:
    """A topic nobody can guess: 128 random bits."""
    import secrets

    return f"{prefix}-{secrets.token_urlsafe(16).replace('_', 'x')}"


def base(server: str) -> str:
    return server.strip().rstrip("/")


def subscribe_link(server: str, topic: str) -> str:
    """The ``ntfy://`` link the ntfy app opens (or scans as a QR code) to subscribe."""
    from urllib.parse import urlsplit

    parts = urlsplit(base(server))
    link = f"ntfy://{parts.netloc}{parts.path}/{topic}"
    return link + ("?secure=false" if parts.scheme == "http" else "")


def one_line(text: str, limit: int = MAX_TEXT) -> str:
    """Printable, one line, bounded (what leaves the machine is already privacy-safe)."""
    clean = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(clean.split())[:limit]


def reminder(
    topic: str,
    sequence_id: str,
    *,
    event: str,
    title: str,
    body: str,
    buttons: Sequence[tuple[int, str]] = (),
    token: str | None = None,
    reply_url: str = "",
    reply_auth: str | None = None,
) -> dict[str, Any]:
    """A reminder: ``title`` and ``body`` as the engine made them (privacy-safe), priority and
    tags by the cue's event; one ``http`` button per ``(option, label)`` that publishes
    ``TOKEN N`` to the reply topic (``reply_auth``: the write-only token it carries)."""
    msg: dict[str, Any] = {
        "topic": topic,
        "sequence_id": sequence_id,
        "title": one_line(title),
        "message": one_line(body) or "cuewrap",
        "priority": PRIORITY.get(event, 3),
        "tags": TAGS.get(event, []),
    }
    if buttons and token:
        actions = []
        for option, label in buttons[:3]:
            action: dict[str, Any] = {"action": "http", "label": one_line(label, 40),
                                      "url": reply_url, "method": "POST",
                                      "body": f"{token} {option}", "clear": False}  # fmt: skip
            if reply_auth:
                action["headers"] = {"Authorization": f"Bearer {reply_auth}"}
            actions.append(action)
        msg["actions"] = actions
    return msg


def outcome(topic: str, sequence_id: str, title: str, text: str) -> dict[str, Any]:
    """The reminder replaced by what became of the answer (no buttons: nothing to press)."""
    return {"topic": topic, "sequence_id": sequence_id, "title": one_line(title),
            "message": one_line(text), "priority": 2, "tags": ["speech_balloon"]}  # fmt: skip


def parse_reply(text: str) -> tuple[str, str] | None:
    """``TOKEN N`` (a button's body) -> (token, choice); None for anything else."""
    if len(text) > MAX_REPLY:
        return None
    words = text.split()
    if len(words) != 2 or not re.fullmatch(r"[-_A-Za-z0-9]{16,64}", words[0]):
        return None
    if not words[1].isdecimal() or len(words[1]) > 2:
        return None
    return words[0], words[1]
