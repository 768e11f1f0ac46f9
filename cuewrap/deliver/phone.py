"""The phone as a channel of the delivery plan (docs/phone.md), on the session's loop.

A reminder goes to ``phone.topic`` with the cue's sequence id (its ``ident``); a needs-input
cue of an answerable dialog gets one ``http`` button per answer the answerer offers, each
publishing ``TOKEN N`` to ``phone.reply_topic``. While such a reminder stands (and for
``LATE_FOR`` seconds after, so that a late tap hears it is late) the session listens on the
reply topic; a reply is handed to the answerer exactly as ``cuewrap answer --token`` is
(``answer(choice, token, reply, "phone")``), and the reminder is replaced by the outcome
("Answered: Yes", "Too late: …", "Refused: …"). A stale reminder (you came back, the dialog
was answered, a new task) is cleared by its sequence id; a server without that (before ntfy
2.16) is logged as unsupported.

Every request runs in the worker process (``phone_worker.py``); nothing here waits. A failure is a
``delivery`` record and a count (``failures``); the other channels never depend on this one.
Replies are logged by result and reason (``phone_answer``), never their text or token.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cuewrap import ntfy
from cuewrap.deliver.channel import Capabilities, Message, Record, WithdrawalRecord
from cuewrap.loop import Loop, Timer
from cuewrap.workers import JsonWorker, Reaper, python_worker

if TYPE_CHECKING:
    from cuewrap.config import PhoneSettings

MODULE = "cuewrap.deliver.phone_worker"
LATE_FOR = 120.0  # seconds the reply topic is still read after the last button went stale
MAX_SEEN = 64  # reply ids remembered (a message seen twice after a reconnect: once)
MAX_CUES = 16  # reminders remembered for their updates
MAX_LINE = 1 << 16
ANSWERED_HERE = "answered from the phone already"

Answer = Callable[[str, str, Callable[[bool, str], None], str], None]
"""``answer(choice, token, reply, source)``: the answerer's ``answer_token``."""
Log = Callable[..., None]


class _Sent:
    """One reminder on the phone: its sequence id, title, buttons' token and labels."""

    def __init__(self, sid: str, title: str, token: str | None, labels: dict[int, str]) -> None:
        self.sid = sid
        self.title = title
        self.token = token
        self.labels = labels
        self.stale: str | None = None  # why it went stale (withdrawn), None while it stands
        self.outcome: str | None = None  # what the phone was told after an answer


class PhoneChannel:
    name = "phone"
    capabilities = Capabilities(withdraw=True, replace=True, buttons=True, receipt=True)

    def __init__(
        self,
        loop: Loop,
        phone: PhoneSettings,
        record: Record,
        withdrawal: WithdrawalRecord,
        log: Log,
        *,
        answer: Answer | None,
        python: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        assert phone.topic and phone.reply_topic
        self.loop = loop
        self.phone = phone
        self.topic = phone.topic
        self.reply_topic = phone.reply_topic
        self.record = record
        self.withdrawal = withdrawal
        self.log = log
        self.answer = answer
        self.python = python or sys.executable
        self.env = {k: v for k, v in (env or os.environ).items()
                    if not k.startswith("CUEWRAP_")}  # fmt: skip
        self.failures = 0  # requests that failed (for /cue, doctor)
        self._ref = 0
        self._pending: dict[int, tuple[str, int]] = {}  # ref -> (what, cue)
        self._sent: dict[int, _Sent] = {}  # cue -> its reminder
        self._tokens: dict[str, int] = {}  # a button's token -> its cue
        self._seen: dict[str, None] = {}  # reply ids taken
        self._listening = False
        self._since = "all"
        self._late: Timer | None = None
        self._reaper = Reaper(loop)
        self._worker = JsonWorker(
            loop, python_worker(self.python, MODULE, lean=sys.path), self.env, self._message,
            self._end, name="the phone's worker", reaper=self._reaper, max_line=MAX_LINE,
        )  # fmt: skip

    # -- the channel protocol --------------------------------------------------------------
    def send(self, m: Message) -> None:
        cue = m.cue_id
        if not m.still_eligible():
            self.record(cue, self.name, "dropped-ineligible", "stale before it was sent")
            return
        n = m.notify
        from cuewrap.deliver.command import event_name

        labels: dict[int, str] = {}
        for action in n.actions:
            if action.key.startswith("answer-") and action.key[7:].isdecimal():
                labels[int(action.key[7:])] = action.label
        token = m.answer.get("token") if m.answer is not None else None
        token = token if isinstance(token, str) and labels else None
        held = self._sent.get(cue)
        if m.escalated and held is not None and token is None and held.outcome is None:
            token, labels = held.token, held.labels  # the buttons stay on the louder one
        sid = m.ident
        msg = ntfy.reminder(
            self.topic, sid, event=event_name(n), title=n.title, body=n.body,
            buttons=sorted(labels.items()), token=token,
            reply_url=f"{ntfy.base(self.phone.ntfy_server)}/{self.reply_topic}",
            reply_auth=self.phone.reply_token,
        )  # fmt: skip
        if m.escalated:
            msg["priority"] = 5
        if not self._request({"op": "publish", "msg": msg}, "publish", cue):
            return
        self._sent[cue] = _Sent(sid, msg["title"], token, labels)
        while len(self._sent) > MAX_CUES:
            old = next(iter(self._sent))
            gone = self._sent.pop(old)
            if gone.token is not None:
                self._tokens.pop(gone.token, None)
        if token is not None:
            self._tokens[token] = cue
            self._listen()
        self.record(cue, self.name, "requested", "ntfy")

    def holds(self, cue_id: int) -> bool:
        sent = self._sent.get(cue_id)
        return sent is not None and sent.stale is None

    def withdraw(self, cue_id: int, ident: str, reason: str) -> None:
        sent = self._sent.get(cue_id)
        if sent is None or sent.stale is not None:
            return
        sent.stale = reason
        if sent.outcome is not None or self._answering(cue_id):
            # the outcome of the phone's own answer says it: it replaces the reminder
            self.withdrawal(cue_id, self.name, "replaced", "the answer's outcome")
        else:
            self._request({"op": "clear", "topic": self.topic, "sid": sent.sid}, "clear", cue_id)
        self._maybe_stop()

    def forget(self, cue_id: int) -> None:
        pass

    def escalate(self, m: Message) -> None:
        if self.holds(m.cue_id):
            self.send(m)  # the same sequence id: replaced, louder

    def pending(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        self._stop()
        self._reaper.close(0.5)

    # -- answers from the reply topic ------------------------------------------------------
    def _answering(self, cue_id: int) -> bool:
        return any(what == "answer" and cue == cue_id for what, cue in self._pending.values())

    def _reply(self, reply: Mapping[str, Any]) -> None:
        mid, text = reply.get("id"), reply.get("message")
        if not isinstance(mid, str) or not isinstance(text, str) or mid in self._seen:
            return
        self._seen[mid] = None
        self._since = mid
        while len(self._seen) > MAX_SEEN:
            del self._seen[next(iter(self._seen))]
        parsed = ntfy.parse_reply(text)
        if parsed is None:
            self.log("phone_answer", result="refused", why="not an answer (TOKEN N)")
            return
        token, choice = parsed
        cue = self._tokens.get(token)
        if cue is None:
            # another session's (sessions may share the reply topic), or long gone
            self.log("phone_answer", result="ignored", why="not a token of this session")
            return
        sent = self._sent.get(cue)
        if sent is None:
            return
        if self.answer is None:
            self._told(cue, sent, "Refused: this session cannot be answered")
            return
        self._ref += 1
        ref = self._ref
        self._pending[ref] = ("answer", cue)
        started = time.monotonic()

        def done(ok: bool, why: str) -> None:
            self._pending.pop(ref, None)
            ms = round((time.monotonic() - started) * 1000, 1)
            self.log("phone_answer", result="answered" if ok else "refused", cue=cue,
                     option=int(choice), why=why if not ok else "", ms=ms)  # fmt: skip
            self._told(cue, sent, self._outcome(sent, int(choice), ok, why))

        try:
            self.answer(choice, token, done, "phone")
        except Exception as exc:
            self._pending.pop(ref, None)
            self.log(
                "phone_answer", result="refused", cue=cue, why=f"error: {exc.__class__.__name__}"
            )

    def _outcome(self, sent: _Sent, option: int, ok: bool, why: str) -> str:
        if ok:
            return f"Answered: {sent.labels.get(option, str(option))}"
        if sent.outcome is not None and sent.outcome.startswith("Answered"):
            return f"Too late: {ANSWERED_HERE}"
        if why in ("stale token", "nothing to answer"):
            return (
                "Too late: answered at the terminal"
                if sent.stale
                else "Too late: the dialog is gone"
            )
        return f"Refused: {why}"

    def _told(self, cue: int, sent: _Sent, text: str) -> None:
        sent.outcome = text
        msg = ntfy.outcome(self.topic, sent.sid, sent.title, text)
        self._request({"op": "publish", "msg": msg}, "outcome", cue)
        self._maybe_stop()

    # -- listening -----------------------------------------------------------------------
    def _listen(self) -> None:
        if self._late is not None:
            self._late.cancel()
            self._late = None
        if self._listening:
            return
        if self._since == "all":
            self._since = str(int(time.time()) - 1)  # only what is sent from now on
        if self._write({"op": "listen", "topic": self.reply_topic, "since": self._since}):
            self._listening = True
            self.log("phone_listen", state="on")

    def _maybe_stop(self) -> None:
        """No reminder with buttons stands: stop reading the reply topic after LATE_FOR."""
        live = any(s.stale is None and s.token is not None and s.outcome is None
                   for s in self._sent.values())  # fmt: skip
        if live or not self._listening or self._late is not None:
            return
        self._late = self.loop.call_later(LATE_FOR, self._unlisten)

    def _unlisten(self) -> None:
        self._late = None
        if self._listening:
            self._write({"op": "unlisten"})
            self._listening = False
            self.log("phone_listen", state="off")

    # -- the worker ----------------------------------------------------------------------
    def _request(self, job: dict[str, Any], what: str, cue: int) -> bool:
        self._ref += 1
        job["ref"] = self._ref
        if not self._write(job):
            self._failed(what, cue, "the phone's worker cannot be started")
            return False
        self._pending[self._ref] = (what, cue)
        return True

    def _failed(self, what: str, cue: int, why: str) -> None:
        self.failures += 1
        if what == "publish":
            self.record(cue, self.name, "failed", why)
        elif what == "clear":
            self.withdrawal(cue, self.name, "failed", why)
        else:
            self.log("phone_update", cue=cue, state="failed", why=why)

    def _write(self, msg: dict[str, Any]) -> bool:
        if not self._worker.running:
            why = self._worker.start()
            if why:
                self.log("phone", state="failed", why=f"its worker: {why}"[:200])
                return False
            phone = self.phone
            argv = list(phone.token_command or [])
            config = {"op": "config", "server": ntfy.base(phone.ntfy_server),
                      "token": phone.token, "token_command": argv}  # fmt: skip
            if not self._worker.write(config):
                return False
        return self._worker.write(msg)

    def _message(self, msg: dict[str, Any]) -> None:
        if isinstance(msg.get("reply"), dict):
            self._reply(msg["reply"])
            return
        if "stream" in msg:
            state, why = str(msg["stream"]), str(msg.get("why") or "")[:200]
            if state != "open":
                self.failures += 1
            self.log("phone_listen", state=state, why=why)
            return
        ref = msg.get("ref")
        entry = self._pending.pop(ref, None) if isinstance(ref, int) else None
        if entry is None:
            return
        what, cue = entry
        ok, status = bool(msg.get("ok")), msg.get("status")
        why = str(msg.get("why") or "")[:200]
        tries = msg.get("tries")
        if ok:
            if what == "publish":
                self.record(cue, self.name, "delivered", f"HTTP {status}")
            elif what == "clear":
                self.withdrawal(cue, self.name, "withdrawn", self._sent[cue].stale or ""
                                if cue in self._sent else "")  # fmt: skip
            else:
                self.log("phone_update", cue=cue, state="delivered")
            return
        if what == "clear" and status in (400, 404, 405):
            why = f"HTTP {status}: the server cannot clear (ntfy before 2.16?)"
            self.withdrawal(cue, self.name, "unsupported", why)
            return
        self._failed(what, cue, f"{why or 'failed'} (after {tries} tries)")

    def _end(self, why: str) -> None:
        """The worker ended or became unusable (it is stopped): what was pending failed."""
        self.log("phone", state="failed", why=why)
        pending, self._pending = self._pending, {}
        for what, cue in pending.values():
            if what != "answer":
                self._failed(what, cue, why)
        self._listening = False

    def _stop(self) -> None:
        if self._late is not None:
            self._late.cancel()
            self._late = None
        self._worker.stop()


def phone_channel(
    loop: Loop,
    phone: PhoneSettings,
    record: Record,
    withdrawal: WithdrawalRecord,
    log: Log,
    answer: Answer | None,
    env: Mapping[str, str],
) -> PhoneChannel | str:
    """The phone channel, or why it is off (its topics are not set)."""
    if not phone.topic or not phone.reply_topic:
        return "phone.topic and phone.reply_topic are not set: run `cuewrap phone`"
    if phone.topic == phone.reply_topic:
        return "phone.topic and phone.reply_topic must differ"
    if phone.reply_token and phone.reply_token == phone.token:
        log("phone", state="warning", why="phone.reply_token is phone.token: whoever sees a"
            " reminder can read the next ones and answer them (docs/phone.md)")  # fmt: skip
    return PhoneChannel(loop, phone, record, withdrawal, log, answer=answer, env=env)
