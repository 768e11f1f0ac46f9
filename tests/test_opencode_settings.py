"""What cuewrap supplies for opencode's notifications (``generic/opencode.py``): a settings file
of its own, named by ``OPENCODE_TUI_CONFIG``, only where nothing of the user's speaks of
``attention``; the user's files are never written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cuewrap.generic import opencode

pytestmark = pytest.mark.unit


def test_nothing_of_the_users_a_file_of_cuewraps_own(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    folder, why = opencode.supply(env)
    assert folder is not None and "no setting of the user's" in why
    try:
        settings = json.loads((Path(folder) / "tui.json").read_text())
        assert settings == {"attention": {"enabled": True, "sound": False}}
        assert not Path(folder).is_relative_to(tmp_path)  # not in the user's config
    finally:
        shutil.rmtree(folder)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["tui.json", "tui.jsonc"])
def test_the_users_global_file_that_speaks_of_attention_stands(tmp_path: Path, name: str) -> None:
    config = tmp_path / "cfg" / "opencode"
    config.mkdir(parents=True)
    (config / name).write_text('{ // mine\n "attention": { "enabled": false } }')
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert opencode.supply(env)[0] is None
    assert "sets attention" in (opencode.user_says(env) or "")
    (config / name).write_text('{"theme": "dark"}')  # about something else: supplied
    folder, _ = opencode.supply(env)
    assert folder is not None
    shutil.rmtree(folder)


def test_a_file_the_user_names_is_theirs(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "OPENCODE_TUI_CONFIG": str(tmp_path / "mine.json")}
    folder, why = opencode.supply(env)
    assert folder is None and "OPENCODE_TUI_CONFIG is set" in why
