"""Terminal notifications: which OSC the host terminal shows, and the bytes to send
(docs/design.md#delivery).

``detect_terminal_protocol`` is pure given its inputs (the environment, ``notify.terminal``,
and a callable that asks tmux once); ``query_tmux`` is that callable's default. Run it once
at startup, before the relay loop: it spawns ``tmux`` (a few ms, bounded by a timeout).

Detection (``notify.terminal = auto``), first match wins:

| signal                                                        | protocol |
|---------------------------------------------------------------|----------|
| kitty: ``KITTY_WINDOW_ID``, TERM ``xterm-kitty``              | osc99    |
| iTerm2: TERM_PROGRAM ``iTerm.app``, LC_TERMINAL ``iTerm2``    | osc9     |
| WezTerm: TERM_PROGRAM ``WezTerm``, TERM ``wezterm``           | osc777   |
| ghostty: TERM_PROGRAM ``ghostty``, TERM ``xterm-ghostty``     | osc777   |
| VS Code: TERM_PROGRAM ``vscode``                              | osc99    |
| Windows Terminal: ``WT_SESSION``                              | osc777   |
| Konsole: ``KONSOLE_VERSION``                                  | osc777   |
| foot: TERM ``foot*``; rxvt-unicode: TERM ``rxvt*``            | osc777   |
| VTE (GNOME Terminal, Tilix, …): ``VTE_VERSION``               | osc777   |
| Terminal.app: TERM_PROGRAM ``Apple_Terminal``                 | off      |
| anything else                                                 | osc777   |

Why: kitty's own protocol is OSC 99 (it has title and body); iTerm2's is OSC 9. WezTerm and
ghostty show both OSC 9 and OSC 777; OSC 777 carries a title. VS Code shows OSC 99. Windows
Terminal added OSC 777 in 2026 (microsoft/terminal#20012) and reads ``OSC 9 ; <n> ;`` as
ConEmu commands, so never OSC 9 there. Konsole shows OSC 777 as its own popup (app
"Konsole"), and its bell while not the active window as another ("Bell in …"). foot and
urxvt (notify extension) show OSC 777; VTE shows it only with the Fedora/Ubuntu patch,
upstream VTE ≥ 0.46 ignores it silently.
Terminal.app shows none of them. Anything else gets OSC 777: terminals ignore an OSC they
do not know, so it costs nothing where unsupported. The delivery state of a terminal OSC is
always "unconfirmable": no terminal acknowledges one.

Inside tmux (``TMUX`` set): the outer terminal is identified from the attached client
(``client_termtype``, the terminal's XTVERSION answer, and ``client_termname``, its TERM)
before the environment, whose KITTY_WINDOW_ID/TERM_PROGRAM may be stale from whatever
started the tmux server. The sequence is wrapped in DCS passthrough only when the pane's
effective ``allow-passthrough`` is on/all (tmux < 3.3 has no such option and always passes
it). With it off, tmux drops the sequence either way, so none is sent and the reason says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from cuewrap.engine.effects import Notify
from cuewrap.term.sequences import (
    BEL,
    PROGRESS_BUSY,
    PROGRESS_OFF,
    osc9,
    osc99,
    osc99_close,
    osc777,
    tmux_passthrough,
)
from cuewrap.tmux.command import older_than_3_3, passthrough_allowed, run_blocking
from cuewrap.tmux.view import Live, TmuxInfo

TerminalProtocol = Literal["osc777", "osc9", "osc99", "off"]
Shows = Literal["yes", "no", "maybe"]
PROTOCOLS: tuple[TerminalProtocol, ...] = ("osc777", "osc9", "osc99", "off")


@dataclass(frozen=True)
class Choice:
    protocol: TerminalProtocol
    tmux_passthrough: bool  # wrap in tmux DCS passthrough
    reason: str  # for `cuewrap doctor` and the decision log
    terminal: str = "unknown"  # the terminal that was recognised


# -- detection ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Rule:
    name: str
    protocol: TerminalProtocol
    why: str
    termtypes: tuple[str, ...] = ()  # XTVERSION answer (tmux client_termtype) prefixes
    terms: tuple[str, ...] = ()  # TERM (or tmux client_termname) prefixes
    programs: tuple[str, ...] = ()  # TERM_PROGRAM values
    env: tuple[tuple[str, str | None], ...] = ()  # (variable, value or None = set at all)
    # does the terminal turn its own notifications into desktop notifications?
    # "maybe": only in some builds or setups (patched VTE, urxvt's perl extension)
    desktop: Shows = "yes"
    # does a bell while it is not the active window pop up a desktop notification of its own?
    bell_pops: bool = False


TERMINAL_RULES: tuple[_Rule, ...] = (
    _Rule("kitty", "osc99", "kitty's own notification protocol is OSC 99",
          termtypes=("kitty",), terms=("xterm-kitty",), env=(("KITTY_WINDOW_ID", None),)),
    _Rule("iTerm2", "osc9", "iTerm2 shows OSC 9",
          termtypes=("iterm2",), programs=("iTerm.app",), env=(("LC_TERMINAL", "iTerm2"),)),
    _Rule("WezTerm", "osc777", "WezTerm shows OSC 777 (with a title)",
          termtypes=("wezterm",), terms=("wezterm",), programs=("WezTerm",)),
    _Rule("ghostty", "osc777", "ghostty shows OSC 777 (with a title)",
          termtypes=("ghostty",), terms=("xterm-ghostty",), programs=("ghostty",)),
    _Rule("VS Code", "osc99", "VS Code shows OSC 99", programs=("vscode",)),
    _Rule("Windows Terminal", "osc777",
          "Windows Terminal shows OSC 777 and reads OSC 9 as ConEmu commands",
          env=(("WT_SESSION", None),)),
    _Rule("foot", "osc777", "foot shows OSC 777", termtypes=("foot",), terms=("foot",)),
    _Rule("Konsole", "osc777", "Konsole shows OSC 777 as its own desktop notification",
          termtypes=("konsole",), env=(("KONSOLE_VERSION", None),), bell_pops=True),
    _Rule("rxvt-unicode", "osc777", "rxvt-unicode shows OSC 777 (notify extension)",
          terms=("rxvt",), desktop="maybe"),
    _Rule("VTE", "osc777", "VTE shows OSC 777 where patched (Fedora/Ubuntu), else ignores it",
          termtypes=("vte",), env=(("VTE_VERSION", None),), desktop="maybe"),
    _Rule("Terminal.app", "off", "Terminal.app shows no terminal notifications",
          programs=("Apple_Terminal",), desktop="no"),
    _Rule("xterm", "osc777", "xterm shows no notification (it ignores OSC 777 silently)",
          termtypes=("xterm(",), env=(("XTERM_VERSION", None),), desktop="no"),
)  # fmt: skip


def _evidence(
    rule: _Rule, termtype: str, term: str, program: str, env: Mapping[str, str]
) -> str | None:
    if termtype and termtype.lower().startswith(rule.termtypes):
        return f"terminal type {termtype}"
    if term and term.lower().startswith(rule.terms):
        return f"TERM={term}"
    if program and program in rule.programs:
        return f"TERM_PROGRAM={program}"
    for var, value in rule.env:
        have = env.get(var)
        if have and (value is None or have == value):
            return f"{var}={have}" if value is not None else f"{var} is set"
    return None


def identify_terminal(
    env: Mapping[str, str], info: TmuxInfo | None, version: str = ""
) -> tuple[str, TerminalProtocol, str]:
    """(terminal, protocol, reason). ``version``: the terminal's own XTVERSION answer, which
    comes before everything else (the environment can be stale, or inherited)."""
    # (termtype, term, program, env) per pass; inside tmux the attached client comes first,
    # and the environment's TERM is tmux's own, so it is not used.
    passes: list[tuple[str, str, str, Mapping[str, str]]] = []
    if version:
        passes.append((version, "", "", {}))
    if info is not None:
        passes.append((info.client_termtype, info.client_termname, "", {}))
    program = env.get("TERM_PROGRAM", "")
    passes.append(
        (
            "",
            "" if info is not None else env.get("TERM", ""),
            "" if program == "tmux" else program,
            env,
        )
    )
    for termtype, term, prog, variables in passes:
        for rule in TERMINAL_RULES:
            evidence = _evidence(rule, termtype, term, prog, variables)
            if evidence is not None:
                return rule.name, rule.protocol, f"{rule.name} ({evidence}): {rule.why}"
    return "unknown", "osc777", "unrecognised terminal: OSC 777, ignored where unsupported"


def terminal_shows(terminal: str) -> Shows:
    """Does ``terminal`` (a name from ``identify_terminal``) turn its own notifications into
    desktop notifications? An unrecognised terminal: "maybe"."""
    for rule in TERMINAL_RULES:
        if rule.name == terminal:
            return rule.desktop
    return "maybe"


def bell_pops(terminal: str) -> bool:
    """Is a bell in ``terminal`` (a name from ``identify_terminal``) a desktop popup of its
    own while its window is not the active one (Konsole's "Bell in …")?"""
    return any(rule.bell_pops for rule in TERMINAL_RULES if rule.name == terminal)


def detect_terminal_protocol(
    env: Mapping[str, str],
    setting: str,
    tmux_query: Callable[[], TmuxInfo | None],
    version: str = "",
) -> Choice:
    """Pick the notification OSC for this terminal (``setting``: ``notify.terminal``;
    ``version``: the terminal's XTVERSION answer, when it gave one)."""
    if setting == "off":  # tmux is not asked: nothing will be sent through it
        # the terminal still named where the environment tells (a bell that pops up in it)
        terminal = "unknown" if env.get("TMUX") else identify_terminal(env, None, version)[0]
        return Choice("off", False, "notify.terminal is off", terminal)
    in_tmux = bool(env.get("TMUX"))
    info = tmux_query() if in_tmux else None
    terminal, protocol, reason = identify_terminal(env, info, version)
    if setting != "auto":
        if setting not in PROTOCOLS:
            raise ValueError(f"notify.terminal: unknown protocol {setting!r}")
        protocol = setting
        reason = f"notify.terminal = {setting} (terminal: {terminal})"
    if protocol == "off" or not in_tmux:
        return Choice(protocol, False, reason, terminal)
    if info is None:
        return Choice("off", False, "inside tmux, but tmux could not be queried", terminal)
    if passthrough_allowed(info.allow_passthrough, info.version):
        if info.allow_passthrough is None or older_than_3_3(info.version):
            why = f"{reason}; tmux {info.version or '< 3.3'} passes DCS through: wrapped"
        else:
            why = f"{reason}; tmux allow-passthrough is {info.allow_passthrough}: wrapped"
        return Choice(protocol, True, why, terminal)
    return Choice(
        "off",
        False,
        "inside tmux with allow-passthrough off: tmux would drop the notification "
        "(enable with: tmux set -g allow-passthrough on)",
        terminal,
    )


NOT_SHOWN = "Pi's window is not shown: tmux would drop it"


def live_choice(env: Mapping[str, str], setting: str, live: Live) -> Choice:
    """The choice for one delivery inside tmux, from what tmux says now (``live``) rather than
    what it said at start: an option changed while Pi runs counts at the next cue. From a
    pane no client shows nothing gets through, whatever ``allow-passthrough`` says: that is
    the reason given then."""
    choice = detect_terminal_protocol(env, setting, lambda: live.info)
    if live.shown:
        return choice
    if choice.protocol == "off":  # would it go from a shown pane with passthrough on?
        on = dataclasses.replace(live.info, allow_passthrough="on")
        if detect_terminal_protocol(env, setting, lambda: on).protocol == "off":
            return choice  # not for tmux's sake (notify.terminal, the terminal itself)
    return Choice("off", False, NOT_SHOWN, choice.terminal)


# -- asking tmux ---------------------------------------------------------------------------------
_FORMAT = "#{version}\t#{client_termname}\t#{client_termtype}"


def query_tmux(env: Mapping[str, str], timeout: float = 1.0) -> TmuxInfo | None:
    """Ask the tmux server of ``$TMUX`` about this pane; None when it cannot be asked.

    Blocking (two short ``tmux`` commands, each bounded by ``timeout``): call it once, at
    startup or from ``cuewrap doctor``, never from the relay loop.
    """
    pane = env.get("TMUX_PANE", "")
    target = ["-t", pane] if pane else []
    shown = run_blocking(env, ["display-message", "-p", *target, _FORMAT], timeout)
    if shown is None or shown[0] != 0:
        return None
    version, termname, termtype = [*shown[1].rstrip("\n").split("\t"), "", "", ""][:3]
    option = run_blocking(env, ["show-options", "-Apv", *target, "allow-passthrough"], timeout)
    if option is None:
        return None
    if option[0] == 0:
        allow: str | None = option[1].strip().lower() or "off"
    elif older_than_3_3(version) or "invalid option" in option[2] or "unknown" in option[2]:
        allow = None  # no such option: this tmux always passes DCS through
    else:
        return None
    return TmuxInfo(allow, termname, termtype, version)


# -- building ------------------------------------------------------------------------------------
class TerminalNotifier:
    """Builds the bytes of one terminal notification (the relay injects them)."""

    def __init__(self, choice: Choice, bell: bool = False) -> None:
        self.choice = choice
        self.bell = bell

    @property
    def enabled(self) -> bool:
        """Whether ``build`` ever returns bytes (an OSC, or the bell)."""
        return self.choice.protocol != "off" or self.bell

    def build(self, notify: Notify, ident: str | None = None) -> bytes:
        """The sanitized OSC (wrapped for tmux when needed), plus one BEL if the bell is on.
        ``ident``: the notification's id (OSC 99 ``i=``; ``cuewrap-<cue id>`` by default)."""
        payload = self._osc(notify, ident or f"cuewrap-{notify.cue_id}")
        if payload and self.choice.tmux_passthrough:
            payload = tmux_passthrough(payload)
        return payload + BEL if self.bell else payload

    def withdraw(self, ident: str) -> bytes:
        """What closes notification ``ident``: only OSC 99 can (b"" for the others)."""
        if self.choice.protocol != "osc99":
            return b""
        return self._wrap(osc99_close(ident))

    def progress(self, on: bool) -> bytes:
        """OSC 9;4 busy / off (wrapped for tmux when notifications are)."""
        return self._wrap(PROGRESS_BUSY if on else PROGRESS_OFF)

    def _wrap(self, payload: bytes) -> bytes:
        return tmux_passthrough(payload) if self.choice.tmux_passthrough else payload

    def _osc(self, notify: Notify, ident: str) -> bytes:
        protocol = self.choice.protocol
        if protocol == "osc777":
            return osc777(notify.title, notify.body)
        if protocol == "osc99":
            return osc99(notify.title, notify.body, ident=ident)
        if protocol == "osc9":
            text = ": ".join(part for part in (notify.title, notify.body) if part)
            return osc9(text)
        return b""
