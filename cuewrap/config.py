"""Settings: TOML file, then ``CUEWRAP_*`` environment variables, then flags
(docs/design.md#command-line-and-settings).

``load_settings(path, env, flags)`` is pure apart from reading the one TOML file. Every
problem is a ``ConfigError`` whose ``str`` is one line naming the key (the CLI prints it after
``cuewrap: `` and exits 2). The key names, environment names and values are part of the
contract; ``KEYS`` is the one table they come from (the ``cuewrap config`` editor and
``cuewrap doctor`` read it).

Environment: ``CUEWRAP_`` + section + ``_`` + key, upper case (``notify.terminal`` ->
``CUEWRAP_NOTIFY_TERMINAL``). An empty variable counts as unset. Booleans accept
true/false/1/0/yes/no/on/off; ``CUEWRAP_KEEP_AWAKE_COMMAND`` is a shell-split string. A
variable that starts like a section (``CUEWRAP_NOTIFY_…``) but names no key is an error, so a
typo does not pass silently; other ``CUEWRAP_*`` variables (``CUEWRAP_LOG``,
``CUEWRAP_EVENTS`` …) are not settings.
"""

from __future__ import annotations

import math
import os
import shlex
import stat
from collections.abc import Callable, Mapping, Sequence

# typing costs milliseconds before the child is spawned: its names only for the type checker
from cuewrap.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Literal, TypeVar

    TerminalSetting = Literal["auto", "osc777", "osc9", "osc99", "off"]
    DesktopSetting = Literal["auto", "on", "off"]
    BodySetting = Literal["none", "summary"]
    ClipboardSetting = Literal["user", "allow", "block"]
    SequencesSetting = Literal["own", "allow"]
    # generic mode: which known program's signals to read (cuewrap.generic.presets; "auto": by name)
    PresetSetting = Literal["auto", "none", "claude", "codex", "aider", "gemini", "opencode"]
    _S = TypeVar("_S", bound=tuple[Any, ...])

# the values of each choice, as the Literal types above list them (tests/test_config.py)
CHOICES: dict[str, tuple[str, ...]] = {
    "TerminalSetting": ("auto", "osc777", "osc9", "osc99", "off"),
    "DesktopSetting": ("auto", "on", "off"),
    "BodySetting": ("none", "summary"),
    "ClipboardSetting": ("user", "allow", "block"),
    "SequencesSetting": ("own", "allow"),
    "PresetSetting": ("auto", "none", "claude", "codex", "aider", "gemini", "opencode"),
}

ENV_PREFIX = "CUEWRAP_"
# the largest number of seconds any setting accepts: a week (far below what poll() and the
# loop's timers can take, so no value that passes here can make a timer raise)
MAX_SECONDS = 7 * 24 * 3600.0
LOG_ENV = "CUEWRAP_LOG"
EVENTS_ENV = "CUEWRAP_EVENTS"


class ConfigError(Exception):
    """A bad setting. ``str(err)`` is the one-line message for the user."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(f"config: {message}")
        self.key = key


class KeySpec(NamedTuple):
    section: str
    key: str
    kind: Literal["bool", "choice", "seconds", "argv", "hours", "text"]
    default: object
    choices: tuple[str, ...] = ()
    help: str = ""
    zero_ok: bool = False  # "seconds" only: 0 is allowed (and means off)
    maximum: float = 0.0  # "seconds": the largest value accepted (0: MAX_SECONDS)

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def env(self) -> str:
        return f"{ENV_PREFIX}{self.section}_{self.key}".upper()


KEYS: tuple[KeySpec, ...] = (
    KeySpec("cues", "enabled", "bool", True, help="send cues at all"),
    KeySpec(
        "notify",
        "terminal",
        "choice",
        "auto",
        CHOICES["TerminalSetting"],
        "terminal notification protocol",
    ),
    KeySpec(
        "notify", "desktop", "choice", "auto", CHOICES["DesktopSetting"], "desktop notifications"
    ),
    KeySpec("notify", "bell", "bool", False, help="one BEL per notification"),
    KeySpec("notify", "title_marks", "bool", True, help="[?] [✓] [!] [-] in the title"),
    KeySpec("notify", "command", "argv", None, help="run per notification, cue JSON on stdin"),
    KeySpec("notify", "command_timeout", "seconds", 10.0, help="notify.command is killed after"),
    KeySpec(
        "notify",
        "escalate_after",
        "seconds",
        0.0,
        help="needs-input unanswered this long while away: notify.command again (0 = off)",
        zero_ok=True,
    ),
    KeySpec("notify", "progress", "bool", False, help="terminal progress indicator during runs"),
    KeySpec("presence", "idle_after", "seconds", 60.0, help="no keystroke for this long = away"),
    KeySpec(
        "privacy", "body", "choice", "none", CHOICES["BodySetting"], "what a notification says"
    ),
    KeySpec("keep_awake", "enabled", "bool", False, help="keep the machine awake while Pi works"),
    KeySpec("keep_awake", "command", "argv", None, help="inhibitor that runs until killed"),
    KeySpec(
        "guard",
        "clipboard",
        "choice",
        "user",
        CHOICES["ClipboardSetting"],
        "OSC 52 clipboard writes from the program: only right after your own action (user)",
    ),
    KeySpec(
        "guard",
        "sequences",
        "choice",
        "own",
        CHOICES["SequencesSetting"],
        "titles, notifications, status reports: only the program's own, not what it renders (own)",
    ),
    KeySpec(
        "generic",
        "quiet_after",
        "seconds",
        15.0,
        help="generic mode: output quiet this long after activity = seems to be waiting (0 = off)",
        zero_ok=True,
    ),
    KeySpec(
        "generic",
        "preset",
        "choice",
        "auto",
        CHOICES["PresetSetting"],
        "generic mode: what the program's bell and notifications mean (auto: by command name)",
    ),
    KeySpec(
        "quiet",
        "hours",
        "hours",
        (),
        help='local-time ranges "HH:MM-HH:MM" when nothing pops up or sounds (may cross midnight)',
    ),
    KeySpec(
        "quiet",
        "urgent_after",
        "seconds",
        0.0,
        help="needs-input unanswered this long in quiet hours: notify.command once (0 = never)",
        zero_ok=True,
    ),
    KeySpec(
        "quiet",
        "follow_desktop",
        "bool",
        True,
        help="the desktop's do-not-disturb counts as quiet hours",
    ),
    # the phone (docs/phone.md): `cuewrap phone` sets these up
    KeySpec("phone", "enabled", "bool", False, help="reminders and answers through ntfy"),
    KeySpec("phone", "ntfy_server", "text", "https://ntfy.sh", help="the ntfy server's URL"),
    KeySpec("phone", "topic", "text", None, help="the reminders' topic (a password: unguessable)"),
    KeySpec("phone", "reply_topic", "text", None, help="the answers' topic (unguessable)"),
    KeySpec("phone", "token", "text", None, help="an ntfy access token (better: token_command)"),
    KeySpec("phone", "token_command", "argv", None, help="prints the ntfy access token"),
    KeySpec(
        "phone",
        "reply_token",
        "text",
        None,
        help="a write-only token for the reply topic: the buttons carry it",
    ),
)
_BY_NAME = {spec.name: spec for spec in KEYS}
_SECTIONS = tuple(dict.fromkeys(spec.section for spec in KEYS))

_EXAMPLE = {"keep_awake.command": "systemd-inhibit", "notify.command": "my-notifier"}
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


# The sections: the types of the values, by key. Each section's fields are exactly the keys of
# that section in KEYS, and their values (defaults included) come from KEYS only (``_section``;
# tests/test_config.py checks the fields against KEYS).
class CuesSettings(NamedTuple):
    enabled: bool


class NotifySettings(NamedTuple):
    terminal: TerminalSetting
    desktop: DesktopSetting
    bell: bool
    title_marks: bool
    command: tuple[str, ...] | None  # notify.command: argv, run per notification
    command_timeout: float
    escalate_after: float  # 0: off
    progress: bool


class PresenceSettings(NamedTuple):
    idle_after: float


class PrivacySettings(NamedTuple):
    body: BodySetting


class KeepAwakeSettings(NamedTuple):
    enabled: bool
    command: tuple[str, ...] | None  # None: the platform default


class GuardSettings(NamedTuple):
    clipboard: ClipboardSetting  # OSC 52 from the child (docs/terminal-guard.md)
    sequences: SequencesSetting  # titles, notifications, status inside frames: removed (own)


class QuietSettings(NamedTuple):
    hours: tuple[str, ...]  # "HH:MM-HH:MM" each, checked (cuewrap.quiethours)
    urgent_after: float  # 0 = never
    follow_desktop: bool


class PhoneSettings(NamedTuple):
    enabled: bool
    ntfy_server: str
    topic: str | None  # checked (cuewrap.ntfy.check_topic)
    reply_topic: str | None
    token: str | None
    token_command: tuple[str, ...] | None
    reply_token: str | None  # write-only for reply_topic: what the buttons carry


class GenericSettings(NamedTuple):
    quiet_after: float  # 0 = off
    preset: PresetSetting


_DEFAULTS: dict[str, object] = {spec.name: spec.default for spec in KEYS}


def _section(cls: type[_S], section: str, values: Mapping[str, object]) -> _S:
    """The section ``cls`` from the values of its keys (checked against KEYS on the way in; an
    argv list becomes a tuple)."""
    fields: tuple[str, ...] = getattr(cls, "_fields")  # noqa: B009  (a NamedTuple's)
    make: Callable[..., _S] = cls
    return make(**{f: _held(values[f"{section}.{f}"]) for f in fields})


def _held(value: object) -> object:
    return tuple(str(a) for a in value) if isinstance(value, list) else value


class Settings(NamedTuple):
    cues: CuesSettings = _section(CuesSettings, "cues", _DEFAULTS)
    notify: NotifySettings = _section(NotifySettings, "notify", _DEFAULTS)
    presence: PresenceSettings = _section(PresenceSettings, "presence", _DEFAULTS)
    privacy: PrivacySettings = _section(PrivacySettings, "privacy", _DEFAULTS)
    keep_awake: KeepAwakeSettings = _section(KeepAwakeSettings, "keep_awake", _DEFAULTS)
    generic: GenericSettings = _section(GenericSettings, "generic", _DEFAULTS)
    guard: GuardSettings = _section(GuardSettings, "guard", _DEFAULTS)
    quiet: QuietSettings = _section(QuietSettings, "quiet", _DEFAULTS)
    phone: PhoneSettings = _section(PhoneSettings, "phone", _DEFAULTS)
    log: str | None = None  # decision log path (--log / CUEWRAP_LOG)
    events: str | None = None  # state changes for scripts (--events / CUEWRAP_EVENTS)
    config_file: str | None = None  # the TOML file that was read, if any
    # where each non-default value came from: ("notify.bell", "CUEWRAP_NOTIFY_BELL"), …
    origins: tuple[tuple[str, str], ...] = ()

    def origin(self, name: str) -> str:
        """``"default"``, the file path, the environment variable, or ``"--flag"``."""
        return dict(self.origins).get(name, "default")


def default_config_path(env: Mapping[str, str]) -> str:
    """``$XDG_CONFIG_HOME/cuewrap/config.toml`` (a relative XDG_CONFIG_HOME is ignored)."""
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".config")
    return os.path.join(base, "cuewrap", "config.toml")


def load_settings(path: str | None, env: Mapping[str, str], flags: Mapping[str, Any]) -> Settings:
    """Defaults < TOML file < environment < flags (``no_cues``, ``keep_awake``, ``log``,
    ``events``).

    ``path`` is ``--config PATH`` (must exist) or None for the default location (may be
    missing). Unknown flag names are ignored, so the CLI may pass its whole namespace.
    """
    values: dict[str, object] = {spec.name: spec.default for spec in KEYS}
    origins: dict[str, str] = {}

    config_file = _read_file(path, env, values, origins)
    _read_env(env, values, origins)

    log = env.get(LOG_ENV) or None
    if flags.get("no_cues"):
        values["cues.enabled"] = False
        origins["cues.enabled"] = "--no-cues"
    if flags.get("keep_awake"):
        values["keep_awake.enabled"] = True
        origins["keep_awake.enabled"] = "--keep-awake"
    if flags.get("log"):
        log = str(flags["log"])
    events = str(flags["events"]) if flags.get("events") else env.get(EVENTS_ENV) or None

    v = values
    return Settings(
        cues=_section(CuesSettings, "cues", v),
        notify=_section(NotifySettings, "notify", v),
        presence=_section(PresenceSettings, "presence", v),
        privacy=_section(PrivacySettings, "privacy", v),
        keep_awake=_section(KeepAwakeSettings, "keep_awake", v),
        generic=_section(GenericSettings, "generic", v),
        guard=_section(GuardSettings, "guard", v),
        quiet=_section(QuietSettings, "quiet", v),
        phone=_section(PhoneSettings, "phone", v),
        log=log,
        events=events,
        config_file=config_file,
        origins=tuple(sorted(origins.items())),
    )


# -- the file ---------------------------------------------------------------------------------
def _read_file(
    path: str | None, env: Mapping[str, str], values: dict[str, object], origins: dict[str, str]
) -> str | None:
    explicit = path is not None
    file = path if path is not None else default_config_path(env)
    try:
        # O_NONBLOCK: a FIFO without a writer must not hang the start (regular files ignore it)
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"--config {file}: no such file") from None
        return None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{file}: not a regular file")
    fh = os.fdopen(fd, "rb")  # closed by the with below
    import tomllib  # only when there is a file: it is on the start-up path

    try:
        with fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read: {exc.__class__.__name__}: {exc}") from None

    for section, table in data.items():
        if section not in _SECTIONS:
            raise ConfigError(f"unknown section [{section}] in {file}", key=section)
        if not isinstance(table, dict):
            raise ConfigError(f"{section} must be a table ([{section}]) in {file}", key=section)
        for key, raw in table.items():
            name = f"{section}.{key}"
            spec = _BY_NAME.get(name)
            if spec is None:
                raise ConfigError(f"unknown key {name} in {file}", key=name)
            values[name] = _from_toml(spec, raw, file)
            origins[name] = file
    return file


def _from_toml(spec: KeySpec, raw: object, file: str) -> object:
    where = f" in {file}"
    if spec.kind == "bool":
        if isinstance(raw, bool):
            return raw
        raise ConfigError(f"{spec.name} must be true or false (got {raw!r}){where}", spec.name)
    if spec.kind == "choice":
        if isinstance(raw, str) and raw in spec.choices:
            return raw
        raise ConfigError(_choice_message(spec.name, spec, raw) + where, spec.name)
    if spec.kind == "seconds":
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return _check_seconds(spec.name, spec, float(raw), where)
        raise ConfigError(
            f"{spec.name} must be a number of seconds (got {raw!r}){where}", spec.name
        )
    if spec.kind == "hours":
        if isinstance(raw, list) and all(isinstance(a, str) for a in raw):
            return _check_hours(spec.name, raw, where)
        raise ConfigError(
            f'{spec.name} must be a list of "HH:MM-HH:MM" strings, e.g. ["22:00-07:00"] '
            f"(got {raw!r}){where}",
            spec.name,
        )
    if spec.kind == "text":
        if isinstance(raw, str):
            return _check_text(spec, spec.name, raw, where)
        raise ConfigError(f"{spec.name} must be a string (got {raw!r}){where}", spec.name)
    # argv
    if isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw) and raw[0]:
        return list(raw)
    example = _EXAMPLE.get(spec.name, "cmd")
    raise ConfigError(
        f'{spec.name} must be a non-empty list of strings, e.g. ["{example}", …] '
        f"(got {raw!r}){where}",
        spec.name,
    )


# -- the environment ----------------------------------------------------------------------------
def _read_env(env: Mapping[str, str], values: dict[str, object], origins: dict[str, str]) -> None:
    by_env = {spec.env: spec for spec in KEYS}
    section_prefixes = tuple(f"{ENV_PREFIX}{s.upper()}_" for s in _SECTIONS)
    for var in sorted(env):
        if not var.startswith(section_prefixes):
            continue
        spec = by_env.get(var)
        if spec is None:
            raise ConfigError(f"unknown setting {var} (no such key)", key=var)
        raw = env[var]
        if raw == "":
            continue
        values[spec.name] = _from_env(spec, var, raw)
        origins[spec.name] = var


def _from_env(spec: KeySpec, var: str, raw: str) -> object:
    text = raw.strip()
    if spec.kind == "bool":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ConfigError(
            f"{var} must be one of true, false, 1, 0, yes, no, on, off (got {raw!r})", spec.name
        )
    if spec.kind == "choice":
        if text.lower() in spec.choices:
            return text.lower()
        raise ConfigError(_choice_message(var, spec, raw), spec.name)
    if spec.kind == "seconds":
        try:
            seconds = float(text)
        except ValueError:
            raise ConfigError(
                f"{var} must be a number of seconds (got {raw!r})", spec.name
            ) from None
        return _check_seconds(var, spec, seconds, "")
    if spec.kind == "hours":  # comma or space separated; empty: none
        return _check_hours(var, text.replace(",", " ").split(), "")
    if spec.kind == "text":
        return _check_text(spec, var, text, "")
    # argv: a shell-split string
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"{var} is not a valid shell command line: {exc}", spec.name) from None
    if not argv:
        raise ConfigError(f"{var} must name a command (got {raw!r})", spec.name)
    return argv


# -- shared -------------------------------------------------------------------------------------
def _choice_message(label: str, spec: KeySpec, raw: object) -> str:
    return f"{label} must be one of {', '.join(spec.choices)} (got {raw!r})"


def _check_hours(label: str, items: list[str], where: str) -> list[str]:
    from cuewrap.quiethours import parse_range

    for item in items:
        try:
            parse_range(item)
        except ValueError as exc:
            raise ConfigError(f"{label}: {exc}{where}", "quiet.hours") from None
    return [item.strip() for item in items]


def _check_text(spec: KeySpec, label: str, text: str, where: str) -> str:
    """The phone's strings: a topic must be unguessable, the server an http(s) URL."""
    from cuewrap.ntfy import check_setting

    why = check_setting(spec.key, text)
    if why:
        raise ConfigError(f"{label}: {why}{where}", spec.name)
    return text.strip()


def _check_seconds(label: str, spec: KeySpec, seconds: float, where: str) -> float:
    if spec.zero_ok and seconds == 0:
        return 0.0
    top = spec.maximum or MAX_SECONDS
    if not math.isfinite(seconds) or seconds <= 0 or seconds > top:
        what = "0 (off) or a positive" if spec.zero_ok else "a positive"
        raise ConfigError(
            f"{label} must be {what} number of seconds, at most {top:g} (got {seconds:g}){where}",
            spec.name,
        )
    return seconds


# -- for the `cuewrap config` command and `cuewrap doctor` ------------------------------------
def find_key(name: str) -> KeySpec | None:
    """The spec of ``section.key``, or None."""
    return _BY_NAME.get(name)


def parse_text(spec: KeySpec, text: str) -> object:
    """A value typed by the user (``cuewrap config set``, the editor) as the loader reads an
    environment variable, with the same messages, labelled with the key name. ``argv`` values
    are shell-split."""
    return _from_env(spec, spec.name, text)


def effective_value(settings: Settings, name: str) -> object:
    """The value in effect for ``section.key`` (tuples for argv lists)."""
    section, key = name.split(".", 1)
    return getattr(getattr(settings, section, None), key, None)


def check_commands(settings: Settings, env: Mapping[str, str]) -> None:
    """A configured ``notify.command`` must exist on ``env``'s PATH, or ConfigError."""
    argv = settings.notify.command
    if argv:
        check_command(argv, settings.origin("notify.command"), env)


def check_command(argv: Sequence[str], where: str, env: Mapping[str, str]) -> None:
    """``notify.command``'s program must exist on ``env``'s PATH, or ConfigError: at start,
    and where it is set (``cuewrap config set``), so a saved value never stops cuewrap."""
    import shutil  # only with a command configured: shutil is off the start-up path

    if argv and shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
        raise ConfigError(
            f"notify.command: {argv[0]}: command not found (set in {where})", "notify.command"
        )


# -- how settings read for the user (`cuewrap config`, `cuewrap doctor`) ------------------------


def show_value(value: object, none: str = "(platform default)") -> str:
    """A value as the user types it: ``true``, ``60``, ``osc9``, a shell-quoted argv."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple | list):
        return shlex.join(str(a) for a in value)
    if value is None:
        return none
    return str(value)


SECRETS = ("phone.token", "phone.reply_token")  # never shown in a listing: "(set)"


def listed_value(settings: Settings, name: str) -> str:
    """A setting as ``config list`` and ``doctor`` show it: an access token only as set."""
    value = effective_value(settings, name)
    if name in SECRETS and value:
        return "(set)"
    return show_value(value, unset_text(name))


def unset_text(name: str) -> str:
    """How an unset optional value reads: only the keep-awake command has a platform default
    (``notify.command`` has none)."""
    return "(platform default)" if name == "keep_awake.command" else "(none)"


def show_origin(origin: str) -> str:
    """``Settings.origin(name)`` in words: default, file PATH, env VAR or flag --FLAG."""
    if origin == "default":
        return "default"
    if origin.startswith("--"):
        return f"flag {origin}"
    if origin.startswith(ENV_PREFIX):
        return f"env {origin}"
    return f"file {origin}"
