"""``cuewrap config list|get|set|unset|path``: the scripted settings commands, run as a user
would (``python -m cuewrap`` in a fresh HOME)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuewrap.config import KEYS, load_settings

pytestmark = pytest.mark.pty

COMMENTED = """\
# my cuewrap settings
[notify]
# the bell annoys my colleagues
bell = false
terminal = "osc9"  # my terminal only does OSC 9

[privacy]
body = "none"
"""


def run(home: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CUEWRAP_", "XDG_"))}
    base.update(HOME=str(home), **env)
    return subprocess.run(
        [sys.executable, "-m", "cuewrap", *argv],
        capture_output=True, text=True, env=base, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def cfg(home: Path) -> Path:
    return home / ".config" / "cuewrap" / "config.toml"


def ok(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return r.stdout


def refused(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines and lines[0].startswith("cuewrap: "), r.stderr
    for w in words:
        assert w in lines[0], r.stderr


def test_path_is_the_xdg_file_or_config_flag(home: Path, tmp_path: Path) -> None:
    assert ok(run(home, "config", "path")) == f"{cfg(home)}\n"
    xdg = tmp_path / "xdg"
    assert ok(run(home, "config", "path", XDG_CONFIG_HOME=str(xdg))) == (
        f"{xdg}/cuewrap/config.toml\n"
    )
    other = tmp_path / "other.toml"
    assert ok(run(home, "--config", str(other), "config", "path")) == f"{other}\n"


def test_set_creates_the_file_and_get_reads_it_back(home: Path) -> None:
    cases = {
        "notify.bell": ("yes", "true"),
        "notify.terminal": ("OSC777", "osc777"),
        "presence.idle_after": ("90", "90"),
        "keep_awake.command": ("systemd-inhibit --what=idle 'sleep' infinity", None),
    }
    for key, (typed, _) in cases.items():
        ok(run(home, "config", "set", key, typed))
    for key, (typed, shown) in cases.items():
        assert ok(run(home, "config", "get", key)) == f"{shown or typed.replace(chr(39), '')}\n"
    s = load_settings(str(cfg(home)), {}, {})
    assert s.notify.bell is True
    assert s.notify.terminal == "osc777"
    assert s.presence.idle_after == 90.0
    assert s.keep_awake.command == ("systemd-inhibit", "--what=idle", "sleep", "infinity")
    text = cfg(home).read_text()
    assert "idle_after = 90\n" in text  # whole seconds stay an integer
    assert 'command = ["systemd-inhibit", "--what=idle", "sleep", "infinity"]' in text
    # a value with a fraction round-trips too
    ok(run(home, "config", "set", "presence.idle_after", "2.5"))
    assert ok(run(home, "config", "get", "presence.idle_after")) == "2.5\n"


def test_set_and_unset_keep_comments_order_and_other_keys(home: Path) -> None:
    cfg(home).parent.mkdir(parents=True)
    cfg(home).write_text(COMMENTED)
    ok(run(home, "config", "set", "notify.bell", "true"))
    ok(run(home, "config", "set", "presence.idle_after", "30"))
    text = cfg(home).read_text()
    assert text.startswith(
        "# my cuewrap settings\n[notify]\n# the bell annoys my colleagues\nbell = true\n"
        'terminal = "osc9"  # my terminal only does OSC 9\n'
    )
    assert text.index("[privacy]") < text.index("[presence]")  # new table appended
    ok(run(home, "config", "unset", "notify.bell"))
    text = cfg(home).read_text()
    assert "bell" not in text.replace("# the bell annoys", "")
    assert "# the bell annoys my colleagues" in text
    assert 'terminal = "osc9"  # my terminal only does OSC 9' in text
    assert ok(run(home, "config", "get", "notify.bell")) == "false\n"  # the default again
    # unsetting what is not set: no error, file untouched
    before = cfg(home).read_bytes()
    ok(run(home, "config", "unset", "keep_awake.command"))
    assert cfg(home).read_bytes() == before


def test_list_shows_every_key_with_value_and_source(home: Path) -> None:
    cfg(home).parent.mkdir(parents=True)
    cfg(home).write_text(COMMENTED)
    out = ok(
        run(home, "--keep-awake", "config", "list", CUEWRAP_PRESENCE_IDLE_AFTER="15")
    ).splitlines()
    assert [line.split()[0] for line in out] == [spec.name for spec in KEYS]
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in out}
    assert rows["cues.enabled"] == ["true", "default"]
    assert rows["notify.terminal"] == ["osc9", f"file {cfg(home)}"]
    assert rows["presence.idle_after"] == ["15", "env CUEWRAP_PRESENCE_IDLE_AFTER"]
    assert rows["keep_awake.enabled"] == ["true", "flag --keep-awake"]
    assert rows["keep_awake.command"][0] == "(platform"


def test_set_names_an_overriding_environment_variable(home: Path) -> None:
    r = run(home, "config", "set", "notify.bell", "true", CUEWRAP_NOTIFY_BELL="0")
    assert r.returncode == 0
    assert "CUEWRAP_NOTIFY_BELL=0 overrides notify.bell" in r.stderr
    assert "bell = true" in cfg(home).read_text()  # the file has the value, not the env's
    assert ok(run(home, "config", "get", "notify.bell", CUEWRAP_NOTIFY_BELL="0")) == "false\n"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["set", "notify.bel", "true"], ["unknown key 'notify.bel'"]),
        (["set", "notify.bell", "maybe"], ["notify.bell must be one of true, false"]),
        (["set", "notify.terminal", "osc8"], ["notify.terminal must be one of auto, osc777"]),
        (["set", "presence.idle_after", "soon"], ["presence.idle_after must be a number"]),
        (["set", "presence.idle_after", "-5"], ["presence.idle_after must be a positive"]),
        (["set", "keep_awake.command", "sleep 'inf"], ["keep_awake.command is not a valid"]),
        (["set", "keep_awake.command", "  "], ["keep_awake.command must name a command"]),
        # a program cuewrap would refuse to start with (README's TOML list syntax typed here)
        (["set", "notify.command", "no-such-notifier -q"], ["no-such-notifier: command not found"]),
        (["set", "notify.command", '["sh", "-c", "x"]'], ["[sh,: command not found"]),
        (["set", "notify.bell"], ["set takes two arguments"]),
        (["get"], ["get takes one argument"]),
        (["unset", "nope"], ["unknown key 'nope'"]),
        (["frobnicate"], ["unknown action 'frobnicate'"]),
    ],
)
def test_bad_key_or_value_is_one_line_exit_2_file_unchanged(
    home: Path, argv: list[str], words: list[str]
) -> None:
    cfg(home).parent.mkdir(parents=True)
    cfg(home).write_text(COMMENTED)
    os.chmod(cfg(home), 0o600)
    before = (cfg(home).read_bytes(), cfg(home).stat().st_mtime_ns)
    r = run(home, "config", *argv)
    refused(r, *words)
    assert (cfg(home).read_bytes(), cfg(home).stat().st_mtime_ns) == before
    assert sorted(p.name for p in cfg(home).parent.iterdir()) == ["config.toml"]  # no temp left


def test_a_file_cuewrap_would_refuse_is_never_rewritten(home: Path) -> None:
    cfg(home).parent.mkdir(parents=True)
    for text, words in (
        ("[notify]\nbel = true\n", ["unknown key notify.bel"]),
        ("[notify\n", ["not valid TOML"]),
    ):
        cfg(home).write_text(text)
        refused(run(home, "config", "set", "notify.bell", "true"), *words)
        assert cfg(home).read_text() == text


def test_saving_keeps_the_file_mode(home: Path) -> None:
    cfg(home).parent.mkdir(parents=True)
    cfg(home).write_text(COMMENTED)
    os.chmod(cfg(home), 0o600)
    ok(run(home, "config", "set", "notify.bell", "on"))
    assert cfg(home).stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in cfg(home).parent.iterdir()) == ["config.toml"]
