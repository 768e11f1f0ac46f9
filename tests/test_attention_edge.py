"""The attention budget's edge (docs/attention.md): quiet-hours ranges and durations read, the
control socket's mute requests, the clock that tells the engine when quiet begins and ends,
a mute's end. Real loop and timers, an injected local time; no timed assertions."""

from __future__ import annotations

import time
from typing import Any

import pytest

from cuewrap.answer import wire
from cuewrap.config import ConfigError, load_settings
from cuewrap.context import Context
from cuewrap.decisionlog import DecisionLog
from cuewrap.facts import Mute, Quiet
from cuewrap.loop import Loop
from cuewrap.quiethours import next_change, parse_duration, parse_hours, parse_range, quiet_at
from cuewrap.wiring.attention import Attention

pytestmark = pytest.mark.unit


def test_ranges_cross_midnight_and_refuse_what_is_not_a_range() -> None:
    night = parse_hours(["22:00-07:00"])
    assert [quiet_at(night, m) for m in (21 * 60 + 59, 22 * 60, 0, 6 * 60 + 59, 7 * 60)] == [
        False, True, True, True, False,
    ]  # fmt: skip
    day = parse_hours(["00:00-24:00"])
    assert all(quiet_at(day, m) for m in range(0, 1440, 7))
    for bad in ("22:00", "22:00-22:00", "25:00-01:00", "7:5-8:00", "24:00-01:00", "a-b"):
        with pytest.raises(ValueError):
            parse_range(bad)
    assert next_change(night, 21, 59, 30.0) == 30.0
    assert next_change(night, 23, 0, 0.0) == 8 * 3600.0
    assert next_change((), 12, 0, 0.0) is None


def test_settings_read_ranges_from_the_file_and_the_environment(tmp_path: Any) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[quiet]\nhours = ["22:00-07:00", "12:30-13:00"]\nurgent_after = 900\n')
    s = load_settings(str(f), {}, {})
    assert s.quiet.hours == ("22:00-07:00", "12:30-13:00") and s.quiet.urgent_after == 900
    assert s.quiet.follow_desktop is True
    env = {"CUEWRAP_QUIET_HOURS": "22:00-07:00, 12:30-13:00"}
    assert load_settings(None, {**env, "HOME": str(tmp_path)}, {}).quiet.hours == s.quiet.hours
    f.write_text('[quiet]\nhours = ["22:00-22:00"]\n')
    with pytest.raises(ConfigError, match=r"quiet\.hours"):
        load_settings(str(f), {}, {})


def test_durations() -> None:
    assert [parse_duration(t) for t in ("90", "90s", "30m", "2h", "1d")] == [
        90.0, 90.0, 1800.0, 7200.0, 86400.0,
    ]  # fmt: skip
    for bad in ("", "0", "8d", "-5m", "1.5h", "2w", "m"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_the_control_socket_reads_mute_requests_bounded() -> None:
    assert wire.read_request(wire.mute_line(True, 1800.0)) == wire.MuteRequest(True, 1800.0)
    assert wire.read_request(wire.mute_line(True, None)) == wire.MuteRequest(True, None)
    assert wire.read_request(wire.mute_line(False, None)) == wire.MuteRequest(False, None)
    for line in (
        b'{"v": 1, "op": "mute", "duration": 0}\n',
        b'{"v": 1, "op": "mute", "duration": 1e12}\n',
        b'{"v": 1, "op": "mute", "duration": true}\n',
        b'{"v": 1, "op": "mute", "duration": "2h"}\n',
    ):
        assert wire.read_request(line) == "bad duration"
    assert wire.read_request(b'{"v": 1, "op": "unmute", "x": 1}\n') == "bad request"
    assert wire.read_request(b'{"v": 1, "op": "silence"}\n') == "unknown request"


class Publisher:
    def __init__(self) -> None:
        self.muted: list[tuple[bool, float | None]] = []

    def set_muted(self, muted: bool, until: float | None) -> None:
        self.muted.append((muted, until))


def attention(tmp_path: Any, hours: str, clock: list[time.struct_time]) -> tuple[Any, ...]:
    loop = Loop()
    env = {"CUEWRAP_QUIET_HOURS": hours, "HOME": str(tmp_path)}
    ctx = Context(loop, load_settings(None, env, {}), DecisionLog(None), env)
    facts: list[object] = []
    pub = Publisher()
    att = Attention(ctx, facts.append, pub, localtime=lambda: clock[0])  # type: ignore[arg-type]
    return loop, att, facts, pub


def at(h: int, m: int, s: int) -> time.struct_time:
    return time.struct_time((2026, 12, 6, h, m, s, 6, 340, 0))


def test_quiet_begins_and_ends_at_the_boundaries(tmp_path: Any) -> None:
    clock = [at(21, 59, 59)]
    loop, att, facts, _ = attention(tmp_path, "22:00-22:01", clock)
    loop.run_once(max_timeout=1)  # the first reading, at the loop's first turn
    assert facts == []  # not quiet: nothing said
    clock[0] = at(22, 0, 59)  # what the clock says when the boundary's timer runs
    while not facts:
        loop.run_once(max_timeout=5)
    assert facts == [Quiet("quiet hours")]
    clock[0] = at(22, 1, 0)  # the next timer: a second later (read from 22:00:59)
    while len(facts) < 2:
        loop.run_once(max_timeout=5)
    assert facts == [Quiet("quiet hours"), Quiet(None)]
    att.close()


def test_the_desktop_counts_as_quiet_and_quiet_hours_are_named_first(tmp_path: Any) -> None:
    clock = [at(12, 0, 0)]
    _, att, facts, _ = attention(tmp_path, "", clock)
    att.desktop(True)
    att.desktop(True)
    att.desktop(False)
    assert facts == [Quiet("desktop do-not-disturb"), Quiet(None)]


def test_a_mute_ends_by_itself_after_its_duration(tmp_path: Any) -> None:
    loop, att, facts, pub = attention(tmp_path, "", [at(12, 0, 0)])
    said = att.request("mute 1s")
    assert said is not None and said.startswith("cuewrap: muted until ")
    assert facts == [Mute(True, "/cue")]
    assert pub.muted[0][0] is True and pub.muted[0][1] == pytest.approx(time.time() + 1, abs=5)
    while len(facts) < 2:
        loop.run_once(max_timeout=5)
    assert facts[1] == Mute(False, "duration over") and pub.muted[-1] == (False, None)
    assert att.request("mute 9x") is not None and len(facts) == 2  # refused, nothing done
    assert att.request("status") is None
    assert att.request("unmute") == "cuewrap: was not muted"
