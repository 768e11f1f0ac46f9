"""``notify.command``: the user's own notifier, run once per notification
(docs/design.md#follow-ups).

The cue goes to the command as ONE JSON object on stdin and as ``CUEWRAP_CUE_*`` variables
(``cue_fields``): event, session, cwd, source, certainty, id, time, escalated, urgent (quiet
hours: a wait unanswered past quiet.urgent_after, docs/attention.md), and which
session it came from: pid (cuewrap's), tmux_pane (null outside tmux: the variable is empty),
tty (cuewrap's own terminal); with ``privacy.body = "summary"`` also summary (what says why,
cleaned, "" when nothing does). Never a prompt, tool output or assistant text, and without
that setting no question, answer or error either: the engine's notification carries none, and
only these fields are passed.

Off the relay loop: the command is started with a plain fork/exec and never waited for. It
runs under a small ``/bin/sh`` watcher in its own process group:

- fd 0 of the watcher is a pipe from cuewrap (the lifeline): when cuewrap goes away, however
  it goes (SIGKILL included), the pipe reaches EOF and the watcher takes the whole group down
  (TERM, then KILL a second later), so grandchildren (``curl`` under ``sh -c``) go too;
- the cue JSON reaches the watcher in its environment and the command's stdin through a pipe
  from ``printf`` (the command's environment does not keep it);
- the watcher writes the command's exit status to its stdout, which cuewrap reads on the loop:
  the status line and EOF arrive when it is done (no polling, no thread, any platform).

A command still running after ``notify.command_timeout`` seconds has its group killed. Each
run's result goes to ``on_state(cue_id, state, reason)``: requested, then delivered (exit
status 0), failed (other status, killed at the timeout, cannot start) or dropped (cuewrap
exited first). stdout and stderr of the command go to /dev/null: nothing reaches the screen.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cuewrap.deliver import DeliveryState
from cuewrap.engine.effects import Notify
from cuewrap.loop import Loop, Timer
from cuewrap.workers import Reaper, kill_group, spawn

OnState = Callable[[int, DeliveryState, str], None]
"""``on_state(cue_id, state, reason)``."""

MAX_RUNNING = 8  # more at once: failed, not queued (a hung notifier must not pile up)
ENV_PREFIX = "CUEWRAP_CUE_"
# never handed to the user's command: the bridge channel's secret
_PRIVATE_ENV = ("CUEWRAP_BRIDGE_SOCKET", "CUEWRAP_BRIDGE_TOKEN")

# $@ = the command; $CUEWRAP_CUE_JSON = its stdin. fd 0 is the lifeline from cuewrap.
WATCHER = r"""
payload=$CUEWRAP_CUE_JSON
unset CUEWRAP_CUE_JSON
exec 3<&0 </dev/null
printf '%s\n' "$payload" | "$@" 3<&- >/dev/null 2>&1 &
child=$!
{ trap '' TERM; read -r _ <&3; kill -TERM 0; sleep 1; kill -KILL 0; } >/dev/null 2>&1 &
watcher=$!
exec 3<&-
wait "$child"
status=$?
kill -KILL "$watcher" 2>/dev/null
echo "$status"
exit "$status"
"""


def event_name(n: Notify) -> str:
    """needs-input | finished | failed | cancelled | exited | background."""
    if n.kind == "finished":
        return {"failed": "failed", "cancelled": "cancelled"}.get(n.outcome or "", "finished")
    return n.kind


def cue_fields(
    n: Notify,
    *,
    ident: str,
    session: str,
    cwd: str,
    time: str,
    escalated: bool = False,
    pid: int | None = None,
    tmux_pane: str | None = None,
    tty: str | None = None,
) -> dict[str, object]:
    """What the command is told: these keys and nothing else (``summary`` only when on)."""
    fields: dict[str, object] = {
        "event": event_name(n),
        "session": session,
        "cwd": cwd,
        "source": n.source,
        "certainty": n.certainty,
        "id": ident,
        "time": time,
        "escalated": escalated,
        "urgent": n.urgent,
        "pid": pid,
        "tmux_pane": tmux_pane,
        "tty": tty,
    }
    if n.summary is not None:
        fields["summary"] = n.summary
    return fields


def answer_env(fields: Mapping[str, object]) -> dict[str, str]:
    """An answerable wait's token as ``CUEWRAP_CUE_ANSWER_TOKEN`` (docs/answering.md)."""
    answer = fields.get("answer")
    token = answer.get("token") if isinstance(answer, dict) else None
    return {ENV_PREFIX + "ANSWER_TOKEN": token} if isinstance(token, str) else {}


def cue_env(fields: Mapping[str, object]) -> dict[str, str]:
    """The same fields as ``CUEWRAP_CUE_<NAME>`` variables (booleans as true/false, null as
    an empty variable)."""
    out: dict[str, str] = answer_env(fields)
    for key, value in fields.items():
        if isinstance(value, dict):
            continue  # answer: its token above, the rest in the JSON only
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if value is None:
            text = ""
        out[ENV_PREFIX + key.upper()] = text
    return out


@dataclass
class _Run:
    cue_id: int
    proc: subprocess.Popen[bytes]
    fd: int  # the watcher's stdout (status line, then EOF)
    timer: Timer | None = None
    buf: bytearray = field(default_factory=bytearray)


class CommandNotifier:
    def __init__(
        self,
        loop: Loop,
        argv: Sequence[str],
        timeout: float,
        on_state: OnState,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.loop = loop
        self.argv = list(argv)
        self.timeout = timeout
        self.on_state = on_state
        base = dict(os.environ if env is None else env)
        self.env = {k: v for k, v in base.items() if k not in _PRIVATE_ENV}
        self._runs: dict[int, _Run] = {}  # by stdout fd
        self._reaper = Reaper(loop)

    @property
    def pending(self) -> int:
        return len(self._runs)

    def run(self, cue_id: int, fields: Mapping[str, object]) -> None:
        """Start the command for one notification; its result comes through ``on_state``."""
        import json

        if len(self._runs) >= MAX_RUNNING:
            self.on_state(cue_id, "failed", f"{MAX_RUNNING} notify.command runs still pending")
            return
        payload = json.dumps(dict(fields), ensure_ascii=False)
        try:
            proc = spawn(
                ["/bin/sh", "-c", WATCHER, "cuewrap-notify", *self.argv],
                stdin=subprocess.PIPE,  # the lifeline: never written, closed when done
                stdout=subprocess.PIPE,
                env={**self.env, **cue_env(fields), "CUEWRAP_CUE_JSON": payload},
                die_with_parent=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.on_state(cue_id, "failed", f"cannot start {self.argv[0]}: {exc}")
            return
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        run = _Run(cue_id, proc, fd)
        self._runs[fd] = run
        run.timer = self.loop.call_later(self.timeout, lambda: self._on_timeout(fd))
        self.loop.add_reader(fd, lambda: self._on_readable(fd))
        self.on_state(cue_id, "requested", os.path.basename(self.argv[0]))

    def close(self, timeout: float = 0.5) -> None:
        """cuewrap is exiting: kill what still runs, reap everything (bounded)."""
        for run in list(self._runs.values()):
            self._finish(run, "failed", "killed: cuewrap exited before it finished", kill=True)
        self._reaper.close(timeout)

    # -- internals --------------------------------------------------------------------------
    def _on_readable(self, fd: int) -> None:
        run = self._runs.get(fd)
        if run is None:
            return
        try:
            data = os.read(fd, 256)
        except BlockingIOError:
            return
        except OSError as exc:
            self._finish(run, "failed", f"status pipe: {exc}", kill=True)
            return
        if data and len(run.buf) < 64:
            run.buf += data
            return
        text = bytes(run.buf).strip()
        if not text.isdigit():
            self._finish(run, "failed", "ended without a status", kill=True)
            return
        status = int(text)
        if status == 0:
            self._finish(run, "delivered", "exit status 0")
        elif status > 128 and status - 128 < signal.NSIG:
            self._finish(run, "failed", f"killed by signal {status - 128} (status {status})")
        else:
            self._finish(run, "failed", f"exit status {status}")

    def _on_timeout(self, fd: int) -> None:
        run = self._runs.get(fd)
        if run is None:
            return
        run.timer = None
        self._finish(run, "failed", f"killed at the timeout ({self.timeout:g} s)", kill=True)

    def _finish(self, run: _Run, state: DeliveryState, reason: str, *, kill: bool = False) -> None:
        self._runs.pop(run.fd, None)
        self.loop.remove_reader(run.fd)
        if run.timer is not None:
            run.timer.cancel()
        if kill:
            kill_group(run.proc, signal.SIGKILL)
        for pipe in (run.proc.stdin, run.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._reaper.add(run.proc, kill_after=1.0)
        self.on_state(run.cue_id, state, reason)
