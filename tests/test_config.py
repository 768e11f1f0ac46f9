from __future__ import annotations

from pathlib import Path

import pytest

from cuewrap.config import KEYS, ConfigError, Settings, default_config_path, load_settings

pytestmark = pytest.mark.unit


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def env_home(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **extra}


def test_each_section_holds_exactly_its_keys() -> None:
    """The sections of Settings are declared by KEYS: one field per key of the section, the
    value as KEYS gives it (argv lists as tuples), no other field."""
    sections = {spec.section for spec in KEYS}
    defaults = Settings()
    assert sections == {f for f in Settings._fields if hasattr(getattr(defaults, f), "_fields")}
    for section in sections:
        held = getattr(defaults, section)
        assert set(held._fields) == {spec.key for spec in KEYS if spec.section == section}
        for spec in KEYS:
            if spec.section == section:
                value = getattr(held, spec.key)
                assert value == (tuple(spec.default) if isinstance(spec.default, list) else
                                 spec.default), spec.name  # fmt: skip


def test_values_have_the_types_the_settings_declare(tmp_path: Path) -> None:
    env = env_home(tmp_path, CUEWRAP_NOTIFY_COMMAND="notify-me --urgent",
                   CUEWRAP_PRESENCE_IDLE_AFTER="5", CUEWRAP_NOTIFY_BELL="yes")  # fmt: skip
    s = load_settings(None, env, {})
    assert s.notify.command == ("notify-me", "--urgent")
    assert s.presence.idle_after == 5.0 and isinstance(s.presence.idle_after, float)
    assert s.notify.bell is True


def values(s: Settings) -> dict[str, tuple[type, object]]:
    """Each value, with its type (``True`` is not ``1`` here), of the keys the file tests set."""
    keys = ("cues.enabled", "notify.terminal", "notify.desktop", "notify.bell",
            "notify.title_marks", "presence.idle_after", "privacy.body", "keep_awake.enabled",
            "keep_awake.command")  # fmt: skip
    got = {k: getattr(getattr(s, k.split(".")[0]), k.split(".")[1]) for k in keys}
    return typed(got)


def typed(values: dict[str, object]) -> dict[str, tuple[type, object]]:
    return {k: (type(v), v) for k, v in values.items()}


def test_defaults_when_no_file(tmp_path: Path) -> None:
    s = load_settings(None, env_home(tmp_path), {})
    assert s == Settings()
    assert values(s) == typed({
        "cues.enabled": True, "notify.terminal": "auto", "notify.desktop": "auto",
        "notify.bell": False, "notify.title_marks": True, "presence.idle_after": 60.0,
        "privacy.body": "none", "keep_awake.enabled": False, "keep_awake.command": None,
    })  # fmt: skip
    assert s.log is None
    assert s.config_file is None
    assert s.origin("notify.bell") == "default"


def test_default_path_follows_xdg(tmp_path: Path) -> None:
    assert default_config_path({"HOME": "/h"}) == "/h/.config/cuewrap/config.toml"
    assert default_config_path({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}) == (
        "/x/cuewrap/config.toml"
    )
    # relative XDG_CONFIG_HOME is invalid per the XDG spec: ignored
    assert default_config_path({"HOME": "/h", "XDG_CONFIG_HOME": "rel"}) == (
        "/h/.config/cuewrap/config.toml"
    )
    xdg = tmp_path / "xdg"
    (xdg / "cuewrap").mkdir(parents=True)
    (xdg / "cuewrap" / "config.toml").write_text("[notify]\nbell = true\n")
    s = load_settings(None, env_home(tmp_path, XDG_CONFIG_HOME=str(xdg)), {})
    assert s.notify.bell is True
    assert s.config_file == str(xdg / "cuewrap" / "config.toml")


def test_full_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[cues]
enabled = false
[notify]
terminal = "osc99"
desktop = "off"
bell = true
title_marks = false
[presence]
idle_after = 90
[privacy]
body = "summary"
[keep_awake]
enabled = true
command = ["caffeinate", "-i"]
""",
    )
    s = load_settings(path, {}, {})
    assert values(s) == typed({
        "cues.enabled": False, "notify.terminal": "osc99", "notify.desktop": "off",
        "notify.bell": True, "notify.title_marks": False, "presence.idle_after": 90.0,
        "privacy.body": "summary", "keep_awake.enabled": True,
        "keep_awake.command": ("caffeinate", "-i"),
    })  # fmt: skip
    assert isinstance(s.presence.idle_after, float)
    assert s.origin("notify.terminal") == path


def test_explicit_config_missing_is_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^config: --config .*nope.toml: no such file$"):
        load_settings(str(tmp_path / "nope.toml"), {}, {})


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (
            '[notify]\nterminal = "x"\n',
            r"^config: notify.terminal must be one of auto, osc777, osc9, osc99, off "
            r"\(got 'x'\) in .*config.toml$",
        ),
        ("[notify]\nbell = 1\n", r"notify.bell must be true or false \(got 1\)"),
        ('[presence]\nidle_after = "soon"\n', r"presence.idle_after must be a number"),
        (
            "[presence]\nidle_after = -3\n",
            r"presence.idle_after must be a positive number",
        ),
        ("[presence]\nidle_after = true\n", r"presence.idle_after must be a number"),
        ("[presence]\nidle_after = 1e12\n", r"idle_after must be .* at most 604800 \(got 1e\+12\)"),
        ('[keep_awake]\ncommand = "sleep 1"\n', r"keep_awake.command must be a non-empty list"),
        ("[keep_awake]\ncommand = []\n", r"keep_awake.command must be a non-empty list"),
        ('[notify]\nterminl = "osc9"\n', r"unknown key notify.terminl in "),
        ("[nope]\na = 1\n", r"unknown section \[nope\]"),
        ("notify = 3\n", r"notify must be a table"),
        ("[notify\n", r"not valid TOML"),
    ],
)
def test_bad_file_values(tmp_path: Path, text: str, pattern: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=pattern) as info:
        load_settings(path, {}, {})
    assert "\n" not in str(info.value)


def test_env_overrides_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[notify]\nterminal = "osc9"\nbell = true\n')
    env = {
        "CUEWRAP_NOTIFY_TERMINAL": "OSC777",
        "CUEWRAP_NOTIFY_BELL": "off",
        "CUEWRAP_CUES_ENABLED": "no",
        "CUEWRAP_PRESENCE_IDLE_AFTER": "2.5",
        "CUEWRAP_PRIVACY_BODY": "summary",
        "CUEWRAP_KEEP_AWAKE_ENABLED": "1",
        "CUEWRAP_KEEP_AWAKE_COMMAND": "my-inhibit --why 'Pi is working'",
        "CUEWRAP_NOTIFY_DESKTOP": "",  # empty = unset
        "CUEWRAP_LOG": "/var/log/x.jsonl",
        "CUEWRAP_CACHE": "/whatever",  # not a setting: ignored
    }
    s = load_settings(path, env, {})
    assert s.notify.terminal == "osc777"
    assert s.notify.bell is False
    assert s.cues.enabled is False
    assert s.presence.idle_after == 2.5
    assert s.privacy.body == "summary"
    assert s.keep_awake.enabled is True
    assert s.keep_awake.command == ("my-inhibit", "--why", "Pi is working")
    assert s.notify.desktop == "auto"
    assert s.log == "/var/log/x.jsonl"
    assert s.origin("notify.bell") == "CUEWRAP_NOTIFY_BELL"


@pytest.mark.parametrize("word", ["true", "1", "yes", "on", "TRUE", " On "])
def test_env_bool_true_words(tmp_path: Path, word: str) -> None:
    assert load_settings(None, env_home(tmp_path, CUEWRAP_NOTIFY_BELL=word), {}).notify.bell


@pytest.mark.parametrize("word", ["false", "0", "no", "off", "No"])
def test_env_bool_false_words(tmp_path: Path, word: str) -> None:
    s = load_settings(None, env_home(tmp_path, CUEWRAP_NOTIFY_TITLE_MARKS=word), {})
    assert s.notify.title_marks is False


@pytest.mark.parametrize(
    ("var", "value", "pattern"),
    [
        (
            "CUEWRAP_NOTIFY_TERMINAL",
            "x",
            r"^config: CUEWRAP_NOTIFY_TERMINAL must be one of auto, osc777, osc9, osc99, "
            r"off \(got 'x'\)$",
        ),
        ("CUEWRAP_NOTIFY_BELL", "maybe", r"CUEWRAP_NOTIFY_BELL must be one of true, false"),
        ("CUEWRAP_PRESENCE_IDLE_AFTER", "1m", r"CUEWRAP_PRESENCE_IDLE_AFTER must be a number"),
        ("CUEWRAP_PRESENCE_IDLE_AFTER", "nan", r"must be a positive number"),
        ("CUEWRAP_PRESENCE_IDLE_AFTER", "0", r"must be a positive number"),
        ("CUEWRAP_PRESENCE_IDLE_AFTER", "9999999999", r"at most 604800 \(got 1e\+10\)"),
        ("CUEWRAP_KEEP_AWAKE_COMMAND", "a 'b", r"CUEWRAP_KEEP_AWAKE_COMMAND is not a valid shell"),
        ("CUEWRAP_KEEP_AWAKE_COMMAND", "   ", r"CUEWRAP_KEEP_AWAKE_COMMAND must name a command"),
        ("CUEWRAP_NOTIFY_TERMNAL", "osc9", r"unknown setting CUEWRAP_NOTIFY_TERMNAL"),
        ("CUEWRAP_KEEP_AWAKE_ON", "1", r"unknown setting CUEWRAP_KEEP_AWAKE_ON"),
    ],
)
def test_bad_env_values(tmp_path: Path, var: str, value: str, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern) as info:
        load_settings(None, env_home(tmp_path, **{var: value}), {})
    assert "\n" not in str(info.value)


def test_flags_override_env(tmp_path: Path) -> None:
    env = env_home(
        tmp_path,
        CUEWRAP_CUES_ENABLED="true",
        CUEWRAP_KEEP_AWAKE_ENABLED="false",
        CUEWRAP_LOG="/from/env",
    )
    s = load_settings(None, env, {"no_cues": True, "keep_awake": True, "log": "/from/flag"})
    assert s.cues.enabled is False
    assert s.keep_awake.enabled is True
    assert s.log == "/from/flag"
    assert s.origin("cues.enabled") == "--no-cues"
    assert s.origin("keep_awake.enabled") == "--keep-awake"


def test_absent_flags_do_not_override(tmp_path: Path) -> None:
    env = env_home(tmp_path, CUEWRAP_CUES_ENABLED="false", CUEWRAP_KEEP_AWAKE_ENABLED="true")
    flags = {"no_cues": False, "keep_awake": False, "log": None, "no_bridge": True}
    s = load_settings(None, env, flags)
    assert s.cues.enabled is False
    assert s.keep_awake.enabled is True


def test_every_key_has_its_env_name() -> None:
    names = {spec.name: spec.env for spec in KEYS}
    assert names == {
        "cues.enabled": "CUEWRAP_CUES_ENABLED",
        "notify.terminal": "CUEWRAP_NOTIFY_TERMINAL",
        "notify.desktop": "CUEWRAP_NOTIFY_DESKTOP",
        "notify.bell": "CUEWRAP_NOTIFY_BELL",
        "notify.title_marks": "CUEWRAP_NOTIFY_TITLE_MARKS",
        "notify.command": "CUEWRAP_NOTIFY_COMMAND",
        "notify.command_timeout": "CUEWRAP_NOTIFY_COMMAND_TIMEOUT",
        "notify.escalate_after": "CUEWRAP_NOTIFY_ESCALATE_AFTER",
        "notify.progress": "CUEWRAP_NOTIFY_PROGRESS",
        "presence.idle_after": "CUEWRAP_PRESENCE_IDLE_AFTER",
        "privacy.body": "CUEWRAP_PRIVACY_BODY",
        "keep_awake.enabled": "CUEWRAP_KEEP_AWAKE_ENABLED",
        "keep_awake.command": "CUEWRAP_KEEP_AWAKE_COMMAND",
        "guard.clipboard": "CUEWRAP_GUARD_CLIPBOARD",
        "guard.sequences": "CUEWRAP_GUARD_SEQUENCES",
        "generic.quiet_after": "CUEWRAP_GENERIC_QUIET_AFTER",
        "generic.preset": "CUEWRAP_GENERIC_PRESET",
        "quiet.hours": "CUEWRAP_QUIET_HOURS",
        "quiet.urgent_after": "CUEWRAP_QUIET_URGENT_AFTER",
        "quiet.follow_desktop": "CUEWRAP_QUIET_FOLLOW_DESKTOP",
        "phone.enabled": "CUEWRAP_PHONE_ENABLED",
        "phone.ntfy_server": "CUEWRAP_PHONE_NTFY_SERVER",
        "phone.topic": "CUEWRAP_PHONE_TOPIC",
        "phone.reply_topic": "CUEWRAP_PHONE_REPLY_TOPIC",
        "phone.token": "CUEWRAP_PHONE_TOKEN",
        "phone.token_command": "CUEWRAP_PHONE_TOKEN_COMMAND",
        "phone.reply_token": "CUEWRAP_PHONE_REPLY_TOKEN",
    }


def test_settings_are_frozen_and_hashable(tmp_path: Path) -> None:
    s = load_settings(None, env_home(tmp_path), {})
    with pytest.raises(AttributeError):
        s.log = "x"  # type: ignore[misc]
    hash(s)


def test_generic_quiet_after_zero_is_off_and_negative_refused(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text("[generic]\nquiet_after = 0\npreset = 'codex'\n")
    s = load_settings(str(f), {}, {})
    assert s.generic.quiet_after == 0.0 and s.generic.preset == "codex"
    assert load_settings(None, {"HOME": str(tmp_path)}, {}).generic.quiet_after == 15.0
    env = {"HOME": str(tmp_path), "CUEWRAP_GENERIC_QUIET_AFTER": "2.5"}
    assert load_settings(None, env, {}).generic.quiet_after == 2.5
    with pytest.raises(
        ConfigError, match=r"CUEWRAP_GENERIC_QUIET_AFTER must be 0 \(off\) or a positive"
    ):
        load_settings(None, {**env, "CUEWRAP_GENERIC_QUIET_AFTER": "-1"}, {})
    with pytest.raises(ConfigError, match=r"presence\.idle_after must be a positive"):
        f.write_text("[presence]\nidle_after = 0\n")
        load_settings(str(f), {}, {})
    with pytest.raises(ConfigError, match="CUEWRAP_GENERIC_PRESET must be one of auto, none"):
        load_settings(None, {"HOME": str(tmp_path), "CUEWRAP_GENERIC_PRESET": "vim"}, {})


def test_presets_match_the_setting_choices() -> None:
    from cuewrap.generic.presets import PRESETS

    spec = next(k for k in KEYS if k.name == "generic.preset")
    assert set(spec.choices) == {"auto", "none", *(p.name for p in PRESETS)}


@pytest.mark.parametrize(
    ("name", "default", "other", "bad", "one_of"),
    [("sequences", "own", "allow", "block", "own, allow"),
     ("clipboard", "user", "block", "sometimes", "user, allow")],
)  # fmt: skip
def test_guard_choices(
    tmp_path: Path, name: str, default: str, other: str, bad: str, one_of: str
) -> None:
    var = f"CUEWRAP_GUARD_{name.upper()}"
    assert getattr(load_settings(None, env_home(tmp_path), {}).guard, name) == default
    env = {**env_home(tmp_path), var: other}
    assert getattr(load_settings(None, env, {}).guard, name) == other
    with pytest.raises(ConfigError, match=f"{var} must be one of {one_of}"):
        load_settings(None, {**env_home(tmp_path), var: bad}, {})


def test_choices_are_the_literal_types_values() -> None:
    """The Literal types exist for the type checker only (typing is not imported at start):
    each one's values, read from the source, are the runtime CHOICES of the same name."""
    import ast

    import cuewrap.config as config

    source = ast.parse(Path(config.__file__).read_text(encoding="utf-8"))
    literals: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(source):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "Literal"
            and isinstance(node.targets[0], ast.Name)
        ):
            literals[node.targets[0].id] = ast.literal_eval(node.value.slice)
    assert literals == config.CHOICES
    assert len(literals) == 6
