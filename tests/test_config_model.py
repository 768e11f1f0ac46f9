"""The settings editor's model without a terminal: rows from KEYS with their sources, edits
checked with the loader's rules (notify.command's program too), the file kept as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuewrap.config import KEYS
from cuewrap.configure.model import Model
from cuewrap.configure.store import ConfigFile

pytestmark = pytest.mark.unit

TEXT = "# mine\n[notify]\nbell = true  # yes, the bell\n"


def model(tmp_path: Path, env: dict[str, str] | None = None, **flags: bool) -> Model:
    path = tmp_path / "config.toml"
    if not path.exists():
        path.write_text(TEXT)
    return Model(ConfigFile(str(path)), env or {"PATH": "/usr/bin:/bin"}, flags)


def test_rows_follow_keys_with_sources(tmp_path: Path) -> None:
    m = model(tmp_path, {"PATH": "/bin", "CUEWRAP_PRESENCE_IDLE_AFTER": "5"}, keep_awake=True)
    rows = {r.spec.name: r for r in m.rows()}
    assert list(rows) == [spec.name for spec in KEYS]
    assert (rows["notify.bell"].value, rows["notify.bell"].source) == ("true", "file")
    assert rows["presence.idle_after"].source == "env CUEWRAP_PRESENCE_IDLE_AFTER"
    assert rows["keep_awake.enabled"][1:3] == ("true", "flag --keep-awake")
    assert rows["cues.enabled"].source == "default"
    assert "overrides the file" in m.note(rows["presence.idle_after"].spec)


def test_edits_are_checked_cycled_reset_and_saved_with_the_comment(tmp_path: Path) -> None:
    m = model(tmp_path)
    spec = {s.name: s for s in KEYS}
    assert m.set_text(spec["presence.idle_after"], "soon") == (
        "presence.idle_after must be a number of seconds (got 'soon')"
    )
    assert m.set_text(spec["presence.idle_after"], "90") is None
    m.cycle(spec["notify.terminal"], 1)
    assert m.file_text_of(spec["notify.terminal"]) == "osc777"  # auto -> the next choice
    m.reset(spec["notify.bell"])
    assert m.row(spec["notify.bell"]).source == "default*"
    assert m.dirty
    m.save()
    text = (tmp_path / "config.toml").read_text()
    assert text.startswith("# mine\n[notify]\n") and "bell" not in text.split("# mine")[1]
    assert "idle_after = 90" in text and 'terminal = "osc777"' in text
    assert not m.dirty


def test_a_notifier_that_is_not_on_path_is_refused(tmp_path: Path) -> None:
    m = model(tmp_path, {"PATH": str(tmp_path)})
    spec = next(s for s in KEYS if s.name == "notify.command")
    problem = m.check(spec, "no-such-notifier --flag")
    assert problem is not None and "no-such-notifier: command not found" in problem
    assert m.set_text(spec, "no-such-notifier") is not None
    assert not m.dirty
