"""What each Pi version gives cuewrap, and what cuewrap does without it (pure: no I/O).

The bridge extension (``bridge/extension/cuewrap-bridge.ts``) keeps the same table (``SINCE``)
and sends the features its Pi has in its ``hello`` (``capabilities``); ``cuewrap doctor``
reads the version of the Pi it would run. The versions are those of the first npm release with
the feature (checked against the published packages, 2026-12):

- ``agent_settled`` 0.80.4: the end of a run, after retries and follow-ups;
- ``ui_prompt`` 0.84.4: ``ui_prompt_start``/``ui_prompt_end`` around Pi's own dialogs;
- ``agent_before_settle`` 0.87.0: a run's outcome;
- ``osc7501`` 1.3.0: Pi's OSC 7501 program status (``PI_PROGRAM_STATUS=1``).

Full cues need all of them: Pi ≥ ``FULL_SINCE``. An older Pi still gets cues from what it has
(``describe`` says what is missing and what cuewrap does instead).
"""

from __future__ import annotations

from typing import NamedTuple


class Feature(NamedTuple):
    name: str
    since: str  # first npm release with it
    gives: str  # what cuewrap uses it for
    without: str  # what cuewrap does when it is missing


FEATURES: tuple[Feature, ...] = (
    Feature(
        "agent_settled",
        "0.80.4",
        "the end of a run",
        "runs end at agent_end",
    ),
    Feature(
        "ui_prompt",
        "0.84.4",
        "Pi's own dialogs",
        "no cue for Pi's own dialogs",
    ),
    Feature(
        "agent_before_settle",
        "0.87.0",
        "a run's outcome",
        "outcome from the stop reason",
    ),
    Feature(
        "osc7501",
        "1.3.0",
        "OSC 7501 status reports",
        "no OSC 7501 cross-check",
    ),
)
NAMES = tuple(f.name for f in FEATURES)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"1.4.0"`` -> (1, 4, 0); a pre-release or build suffix is ignored; None if not x.y.z."""
    core = text.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0]
    parts = core.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


FULL_SINCE = max((f.since for f in FEATURES), key=lambda v: parse_version(v) or (0, 0, 0))


def features_of(version: str | None) -> frozenset[str] | None:
    """The features of Pi ``version``; None when the version is unknown or unreadable."""
    v = parse_version(version) if version else None
    if v is None:
        return None
    return frozenset(f.name for f in FEATURES if v >= (parse_version(f.since) or (0, 0, 0)))


def missing(capabilities: frozenset[str] | None) -> tuple[Feature, ...]:
    """Features not in ``capabilities`` (None: unknown, nothing counts as missing)."""
    if capabilities is None:
        return ()
    return tuple(f for f in FEATURES if f.name not in capabilities)


def describe(version: str | None, capabilities: frozenset[str] | None) -> str | None:
    """One plain line when this Pi cannot get full cues, else None."""
    gone = missing(capabilities)
    if not gone:
        return None
    pi = f"Pi {version}" if version else "this Pi"
    lacks = ", ".join(f.name for f in gone)
    instead = "; ".join(f.without for f in gone)
    return f"{pi} has no {lacks} (full cues need Pi ≥ {FULL_SINCE}): {instead}."


def summaries(capabilities: frozenset[str] | None) -> str:
    """What ``privacy.body = "summary"`` can say with a Pi of these features: the Ask
    questionnaire's first question, the answer's first line and the error come from events
    every Pi has (the Ask tool's start, ``agent_end``); Pi's own dialog titles need
    ``ui_prompt``."""
    said = "Ask's first question, the answer's first line, the error"
    if capabilities is None or "ui_prompt" in capabilities:
        return f"dialog titles, {said}"
    since = next(f.since for f in FEATURES if f.name == "ui_prompt")
    return f"{said}; no dialog titles (they need ui_prompt, Pi ≥ {since})"


def node_requirement(engines: str | None) -> tuple[int, int, int] | None:
    """The minimum Node of an ``engines.node`` range of the simple form ``>=x.y.z``."""
    if not engines:
        return None
    text = engines.strip()
    if not text.startswith(">="):
        return None
    return parse_version(text[2:].split()[0]) if text[2:].strip() else None
