"""What cuewrap supplies a program for the session (cuewrap/generic/supply.py): Gemini CLI's
system-defaults file (the real session, root-owned: tests/test_generic_gemini.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cuewrap.generic import supply as S

pytestmark = pytest.mark.unit


def test_the_defaults_merged_and_theirs_win() -> None:
    assert S.merged_defaults(None) == {
        "general": {"enableNotifications": True, "notificationMethod": "osc777"}
    }
    real = '{"ui": {"theme": "x"}, // a comment\n "general": {"notificationMethod": "bell"}}'
    assert S.merged_defaults(real) == {
        "ui": {"theme": "x"},
        "general": {"enableNotifications": True, "notificationMethod": "bell"},
    }
    said = '{"general": {"enableNotifications": false}}'
    assert S.merged_defaults(said) == (
        "the system defaults set general.enableNotifications themselves"
    )
    assert isinstance(S.merged_defaults("[1]"), str) and isinstance(S.merged_defaults("{"), str)
    assert S.merged_defaults('{"url": "http://a//b"}') == {
        "url": "http://a//b",  # a // inside a string is no comment
        "general": dict(S.ADDED),
    }


def test_where_gemini_reads_its_system_defaults() -> None:
    assert S.real_defaults_path({}) == "/etc/gemini-cli/system-defaults.json"
    assert S.real_defaults_path({S.SETTINGS_VAR: "/opt/g/settings.json"}) == (
        "/opt/g/system-defaults.json"
    )
    assert S.real_defaults_path({S.DEFAULTS_VAR: "/x/d.json"}) == "/x/d.json"


def _stat(uid: int, mode: int) -> Any:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


def test_secure_only_root_owned_all_the_way_up_none_writable_by_others() -> None:
    root = lambda p: _stat(0, stat.S_IFDIR | 0o755)  # noqa: E731
    assert S.secure_for_gemini("/a/b", root)
    user = lambda p: _stat(1000 if p == "/a" else 0, stat.S_IFDIR | 0o755)  # noqa: E731
    assert not S.secure_for_gemini("/a/b", user)
    sticky = lambda p: _stat(0, stat.S_IFDIR | (0o1777 if p == "/tmp" else 0o755))  # noqa: E731
    assert not S.secure_for_gemini("/tmp/x", sticky)


def test_not_root_nothing_supplied(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    logged: list[dict[str, Any]] = []
    remove = S.gemini_defaults(env, lambda kind, **f: logged.append(f), root=False)
    remove()
    assert S.DEFAULTS_VAR not in env and list(tmp_path.iterdir()) == []
    assert logged[0]["supplied"] is False and "not root" in logged[0]["why"]


def test_supplied_then_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "secure_for_gemini", lambda path, *a: True)
    (tmp_path / "etc").mkdir()
    real = tmp_path / "etc" / "system-defaults.json"
    real.write_text('{"general": {"vimMode": true}}')
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), S.DEFAULTS_VAR: str(real)}
    logged: list[dict[str, Any]] = []
    remove = S.gemini_defaults(env, lambda kind, **f: logged.append(f), root=True)
    made = Path(env[S.DEFAULTS_VAR])
    assert made.parent.parent == home  # (no .cache there)
    assert json.loads(made.read_text()) == {"general": {"vimMode": True, **S.ADDED}}
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert logged == [{"program": "gemini", "supplied": True, "merged": True}]
    remove()
    assert not made.parent.exists()
    assert real.read_text() == '{"general": {"vimMode": true}}'  # theirs untouched


def test_a_killed_sessions_directory_goes_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(S, "secure_for_gemini", lambda path, *a: True)
    dead = tmp_path / f"{S.PREFIX}999999999-x"  # no such pid
    live = tmp_path / f"{S.PREFIX}{os.getpid()}-y"
    dead.mkdir()
    live.mkdir()
    env = {"HOME": "", "XDG_RUNTIME_DIR": str(tmp_path), S.DEFAULTS_VAR: str(tmp_path / "none")}
    remove = S.gemini_defaults(env, lambda kind, **f: None, root=True)
    assert not dead.exists() and live.exists()
    remove()
