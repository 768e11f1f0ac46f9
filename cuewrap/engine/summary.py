"""Saying why (``privacy.body = "summary"``): the one place a summary is made safe.

A summary is a short text from Pi that says why a notification came: a dialog's title or the
Ask questionnaire's first question (needs-input), the first line of Pi's last answer
(finished), the error's status and message (failed). It reaches cuewrap only when the user
chose ``privacy.body = "summary"`` (the bridge extension sends no text otherwise) and is never
the user's prompt.

Pure, no I/O. ``clean`` makes any text one safe line: escape sequences (CSI, OSC, DCS and the
other string controls, in 7-bit and 8-bit form) are removed whole, the remaining control
characters, bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, also
U+200E/U+200F/U+061C), other format characters and lone surrogates are dropped, every kind of
whitespace (newlines, tabs, U+2028 ...) becomes one space. ``body`` puts a status and a
summary together in at most ``BODY_MAX`` characters, status words included.
"""

from __future__ import annotations

import json
import re

BODY_MAX = 200  # characters of a notification body with a summary, status words included
ELLIPSIS = "…"

# Escape sequences, removed whole (their parameters would otherwise be left as text):
# CSI (ESC [ or 8-bit 0x9B) params intermediates final; OSC, DCS, SOS, PM, APC strings up to
# their terminator (BEL, ESC \ or 8-bit ST), or to the end of the text; any other ESC + byte.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# bidirectional controls: embeddings and overrides, isolates, marks
_BIDI = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C])


def clean(text: str) -> str:
    """``text`` as one safe line (see the module docstring); "" when nothing is left."""
    if not text:
        return ""
    text = _ESCAPE.sub("", text)
    out: list[str] = []
    for ch in text:
        if ch.isspace():
            out.append(" ")
        elif ch.isprintable() and ord(ch) not in _BIDI:
            # not printable: C0/C1 controls, format characters (bidi among them), lone
            # surrogates, private use, unassigned code points
            out.append(ch)
    return " ".join("".join(out).split())


_STATUS = re.compile(r"\s*(\d{3})\s*:?\s*(.*)", re.S)


def error_text(text: str) -> str:
    """Pi's error message as ``<status> <message>``: ``400: {"message":"x",…}`` (or
    ``{"error":{"message":"x"}}``) gives ``400 x``; other texts stay as they are. The bridge
    extension does the same before it sends an error (its ``errorText``)."""
    m = _STATUS.fullmatch(text[:4096])
    if m is None:
        return text
    status, rest = m.group(1), m.group(2)
    try:
        data = json.loads(rest)
    except ValueError:
        data = None
    said: object = None
    if isinstance(data, dict):
        inner = data.get("error")
        said = data.get("message")
        if not isinstance(said, str) and isinstance(inner, dict):
            said = inner.get("message")
    return f"{status} {said if isinstance(said, str) else rest}"


def body(status: str, summary: str | None, cap: int = BODY_MAX) -> str:
    """``"<status>: <summary>"``, at most ``cap`` characters; the summary is cut (with "…")
    when it does not fit, the status never is (it is cuewrap's own short text)."""
    status = clean(status)
    said = clean(summary or "")
    if not said:
        return status[:cap]
    room = cap - len(status) - 2  # ": "
    if room <= len(ELLIPSIS):
        return status[:cap]
    if len(said) > room:
        said = said[: room - len(ELLIPSIS)].rstrip() + ELLIPSIS
    return f"{status}: {said}"
