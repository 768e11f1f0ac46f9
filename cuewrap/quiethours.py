"""Quiet hours: local-time ranges ``"HH:MM-HH:MM"`` (pure; docs/attention.md).

A range holds from its start (included) to its end (excluded) and may cross midnight
(``"22:00-07:00"``); a range whose start equals its end is refused (a whole day is
``"00:00-24:00"``: ``24:00`` is allowed as an end only). ``quiet_at`` says whether a minute
of the day lies in any range; ``next_change`` how many seconds from a local time until that
answer may change (the edge sets one timer for then, no periodic timer).
"""

from __future__ import annotations

from cuewrap.records import NamedTuple

DAY = 24 * 60  # minutes


class Range(NamedTuple):
    start: int  # minute of the day, 0..1439
    end: int  # minute of the day, 1..1440


def parse_range(text: str) -> Range:
    """``"HH:MM-HH:MM"`` or ValueError with a short reason."""
    parts = text.strip().split("-")
    if len(parts) != 2:
        raise ValueError(f'{text!r} is not "HH:MM-HH:MM"')
    start, end = (_minute(p, text) for p in parts)
    if start == DAY:
        raise ValueError(f"{text!r}: 24:00 may only end a range")
    if start == end:
        raise ValueError(f"{text!r} is empty (start equals end)")
    return Range(start, end)


def _minute(part: str, text: str) -> int:
    hh, sep, mm = part.strip().partition(":")
    if not sep or not (hh.isdigit() and mm.isdigit()) or len(hh) > 2 or len(mm) != 2:
        raise ValueError(f'{text!r} is not "HH:MM-HH:MM"')
    h, m = int(hh), int(mm)
    if m > 59 or h > 24 or (h == 24 and m != 0):
        raise ValueError(f"{text!r}: no such time of day")
    return h * 60 + m


def parse_hours(items: list[str] | tuple[str, ...]) -> tuple[Range, ...]:
    return tuple(parse_range(i) for i in items)


def quiet_at(ranges: tuple[Range, ...], minute: int) -> bool:
    """Is ``minute`` (0..1439) of the day inside a range?"""
    for r in ranges:
        if r.start < r.end:
            if r.start <= minute < r.end:
                return True
        elif minute >= r.start or minute < r.end:  # crosses midnight
            return True
    return False


def next_change(ranges: tuple[Range, ...], hour: int, minute: int, second: float) -> float | None:
    """Seconds from ``hour:minute:second`` (local) to the next range boundary whose crossing
    changes ``quiet_at`` (None: it never changes, e.g. no ranges)."""
    now = hour * 60 + minute
    here = quiet_at(ranges, now)
    for ahead in range(1, DAY + 1):
        if quiet_at(ranges, (now + ahead) % DAY) != here:
            return max(0.0, ahead * 60.0 - second)
    return None


MAX_DURATION = 7 * 24 * 3600.0  # a mute lasts at most a week
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """``30s``, ``20m``, ``2h``, ``1d`` or a bare number of seconds, in seconds (> 0, at most a
    week); ValueError with a short reason otherwise."""
    t = text.strip().lower()
    unit = _UNITS.get(t[-1:], None)
    number = t[:-1] if unit is not None else t
    if not number.isdigit() or len(number) > 7:
        raise ValueError(f"{text!r} is not a duration (e.g. 30m, 2h, 1d, 90s)")
    seconds = int(number) * (unit or 1.0)
    if not 0 < seconds <= MAX_DURATION:
        raise ValueError(f"{text!r}: a duration from 1s to 7d")
    return seconds
