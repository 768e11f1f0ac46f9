"""The channel protocol: what every way a notification reaches the user implements
(docs/architecture.md#a-cue).

A channel is told about a cue (``send``), later maybe that it went stale (``withdraw``) or
is still unanswered (``escalate``); ``pending`` says how much of its work has not finished
(the session lets it finish at the end), ``close`` ends it. Each declares what it can do
(``Capabilities``): ``Delivery`` asks a channel to withdraw only where it can, and records
"unsupported" for the others itself.

Every state a channel reaches goes to the decision log through the two writers it is built
with: ``delivery`` records (``Record``: cue, channel, state, reason) and ``withdrawal``
records. A channel never writes to the screen itself: terminal bytes go to ``inject``.

The channels: ``terminal`` (the terminal's OSC and the bell, ``deliver.terminal``; inside
tmux DCS-wrapped, as decided from tmux's view at each notification), ``desktop`` (D-Bus,
``deliver.dbus``; on macOS notify-py, ``deliver.desktop``), ``command`` (``notify.command``,
``deliver.command``), and ``Off`` (a channel the plan did not choose: one "off" record per
cue, with the reason).
Their adapters to this protocol are in ``deliver.channels``. ``Capabilities`` and ``Message``
are named tuples: cheaper to create than dataclasses when the cue side is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from cuewrap.deliver import DeliveryState
from cuewrap.engine.effects import Notify

Record = Callable[[int, str, DeliveryState, str], None]
"""``record(cue_id, channel, state, reason)``: one ``delivery`` record."""

WithdrawalRecord = Callable[[int, str, str, str], None]
"""``withdrawal(cue_id, channel, state, reason)``: one ``withdrawal`` record."""


class Capabilities(NamedTuple):
    """What a channel can do beyond showing a notification once."""

    withdraw: bool = False  # close a notification it showed (a stale cue)
    replace: bool = False  # show a later one in place of the earlier (and raise it in place)
    buttons: bool = False  # show a notification's ``actions`` and report the one chosen
    receipt: bool = False  # says whether the notification was delivered (else "unconfirmable")
    cannot_withdraw: str = ""  # why not, for the "unsupported" withdrawal record


class Message(NamedTuple):
    """One notification as every channel is given it."""

    notify: Notify  # the engine's effect: cue id, kind, title, body, actions…
    ident: str  # the notification's id, unique across cuewrap processes (OSC 99 ``i=``)
    session: str  # the session's label
    still_eligible: Callable[[], bool]  # asked right before an asynchronous call
    escalated: bool = False  # sent again: still unanswered after notify.escalate_after
    # an answerable dialog's {token, options, count} (a needs-input cue in Pi mode,
    # docs/answering.md): notify.command's ``answer``; its buttons are in ``notify.actions``
    answer: Mapping[str, Any] | None = None

    @property
    def cue_id(self) -> int:
        return self.notify.cue_id


class Channel(Protocol):
    """One way a notification reaches the user."""

    @property
    def name(self) -> str:
        """The ``channel`` of its records."""

    @property
    def capabilities(self) -> Capabilities:
        """What it can do (the terminal's depends on the plan: it may change once)."""

    def send(self, m: Message) -> None:
        """Show ``m`` (or record why not); its states go to the log."""

    def holds(self, cue_id: int) -> bool:
        """Something of cue ``cue_id`` may still be shown here (it was sent, not withdrawn)."""

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        """Close what cue ``cue_id`` showed (only asked where ``capabilities.withdraw``)."""

    def forget(self, cue_id: int) -> None:
        """Cue ``cue_id`` went stale where it cannot be withdrawn: no longer held."""

    def escalate(self, m: Message) -> None:
        """``m`` is still unanswered: again, more urgent, where this channel can."""

    def pending(self) -> int:
        """Work not finished yet (a worker's call, a command still running)."""

    def close(self) -> None:
        """cuewrap exits: end what still runs and reap it (bounded)."""


class Off:
    """A channel the plan did not choose (or that is off): one "off" record per cue."""

    capabilities = Capabilities()

    def __init__(self, name: str, why: str, record: Record) -> None:
        self.name = name
        self.why = why
        self._record = record

    def send(self, m: Message) -> None:
        self._record(m.cue_id, self.name, "off", self.why)

    def holds(self, cue_id: int) -> bool:
        return False

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        pass

    def forget(self, cue_id: int) -> None:
        pass

    def escalate(self, m: Message) -> None:
        pass

    def pending(self) -> int:
        return 0

    def close(self) -> None:
        pass
