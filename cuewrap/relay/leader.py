"""The child under a session leader of cuewrap's own, so job control works
(docs/design.md#real-environments).

A shell keeps job control working by being the parent of its jobs inside their session. cuewrap
does the same with a small process, the *leader* (a fork of cuewrap; once the command has had
``BOOT`` seconds to start, it execs a bare interpreter that only waits, ``WAITER``): it starts
a new session on the PTY, makes it its controlling terminal, and forks the command into a
process group of its own, made the PTY's foreground group. Because the command's parent (the leader)
is in the same session but another group, the command's group is not orphaned, so the kernel
delivers its stop signals: Pi's Ctrl-Z (``ui.stop()`` then ``kill(0, SIGTSTP)``) really stops
Pi. The leader waits for the command with ``WUNTRACED | WCONTINUED`` and reports every stop,
continue and the exit on a pipe, one line each::

    P <pid>             the command exec'd (first line; cuewrap blocks until it arrives)
    E <errno>           exec failed (first and last line)
    S <signal>          the command stopped
    C                   the command continued
    X <code> <signal>   the command exited (code, or -1 and the signal); the leader then exits

``pid`` is the command's own pid (Pi's): the bridge accepts exactly that peer, signals are
sent to it, and its exit status is the session's. The leader ignores the terminal's job-control
and keyboard signals; it sets SIGHUP's default (also where cuewrap was started with it ignored,
as under ``nohup``), so when the PTY goes away (cuewrap killed) the leader dies and the kernel
hangs up the command's group, as a terminal closing would (a command started with hangups
ignored keeps them ignored, as under ``nohup`` without cuewrap).

``LedChild`` is cuewrap's handle: the PTY master, the command's pid and the leader's reports.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import struct
import sys
import termios
import time

from cuewrap.records import NamedTuple

# The leader's last part, exec'd as ``python -I -S -c WAITER PID FD`` once the command has
# started: it waits for the command and reports on fd FD, and imports nothing (``os`` is there
# at start). ``wait(pid, fd, os.WNOHANG)`` reports what is pending (the leader before the exec)
WAITER = """
import os
def told(report, status):
    if os.WIFSTOPPED(status):
        os.write(report, b"S %d\\n" % os.WSTOPSIG(status))
        return False
    if os.WIFCONTINUED(status):
        os.write(report, b"C\\n")
        return False
    if os.WIFSIGNALED(status):
        os.write(report, b"X -1 %d\\n" % os.WTERMSIG(status))
    else:
        os.write(report, b"X %d 0\\n" % os.WEXITSTATUS(status))
    return True
def wait(pid, report, flags=0):
    while True:
        got, status = os.waitpid(pid, os.WUNTRACED | os.WCONTINUED | flags)
        if got == 0:
            return False
        if told(report, status):
            return True
if __name__ == "__main__":
    import sys
    try:
        wait(int(sys.argv[1]), int(sys.argv[2]))
    finally:
        os._exit(0)
"""
BOOT = 2.0  # seconds the command has to start before the leader's exec takes its CPU

_KEYBOARD = (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)


class ChildStopped(NamedTuple):
    signal: int


class ChildContinued(NamedTuple):
    pass


ChildEvent = ChildStopped | ChildContinued


class LedChild:
    """The command in its PTY, as cuewrap sees it (the ``ChildProcess`` of the relay)."""

    def __init__(self, fd: int, pid: int, leader: int, reports: int) -> None:
        self.fd = fd  # the PTY master
        self.pid = pid  # the command (Pi) itself
        self.leader = leader
        self.reports = reports  # the leader's pipe (readable in the loop)
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None
        self.stopped = False
        self._exited = False
        self._leader_reaped = False
        self._buf = b""
        self._events: list[ChildEvent] = []

    # -- reports ---------------------------------------------------------------------------
    def events(self) -> list[ChildEvent]:
        """Stops and continues the leader reported and not yet taken; never blocks. (The exit
        is not an event: it is ``isalive()``, ``exitstatus`` and ``signalstatus``.)"""
        self._pump()
        events, self._events = self._events, []
        return events

    def _pump(self) -> None:
        while not self._exited:
            try:
                data = os.read(self.reports, 512)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # the leader is gone without saying how the command ended
                self._leader_gone()
                return
            self._buf += data
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                event = self._parse(line)
                if event is not None:
                    self._events.append(event)

    def _parse(self, line: bytes) -> ChildEvent | None:
        kind, _, rest = line.partition(b" ")
        if kind == b"S":
            self.stopped = True
            return ChildStopped(int(rest))
        if kind == b"C":
            self.stopped = False
            return ChildContinued()
        if kind == b"X":
            code, sig = (int(v) for v in rest.split())
            self.exitstatus, self.signalstatus = (code, None) if sig == 0 else (None, sig)
            self._exited = True
            self._reap_leader(block=True)  # it exits right after this line
        return None

    def _leader_gone(self) -> None:
        self._exited = True
        status = self._reap_leader(block=True)
        if status is not None and os.WIFSIGNALED(status):
            self.signalstatus = os.WTERMSIG(status)
        else:
            self.exitstatus = 1

    def _reap_leader(self, *, block: bool) -> int | None:
        if self._leader_reaped:
            return None
        try:
            pid, status = os.waitpid(self.leader, 0 if block else os.WNOHANG)
        except ChildProcessError:
            self._leader_reaped = True
            return None
        if pid == 0:
            return None
        self._leader_reaped = True
        return status

    # -- the ChildProcess protocol --------------------------------------------------------
    def isalive(self) -> bool:
        self._pump()
        return not self._exited

    def setwinsize(self, rows: int, cols: int) -> None:
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def signal_group(self, sig: int) -> None:
        """``sig`` to the command's process group (what a shell's ``fg``/``bg`` do)."""
        if self._exited:
            return
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def terminate(self, force: bool = False) -> bool:
        if self._exited:
            return True
        try:
            os.kill(self.pid, signal.SIGKILL if force else signal.SIGTERM)
            if self.stopped:
                os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        return True

    def close(self) -> None:
        for fd in (self.fd, self.reports):
            try:
                os.close(fd)
            except OSError:
                pass
        self._reap_leader(block=self._exited)  # a leader still waiting is reaped at our exit


def spawn(path: str, argv: list[str], env: dict[str, str], size: tuple[int, int]) -> LedChild:
    """Start ``argv`` (``path`` resolved) in a new PTY under a leader; raises OSError (with
    the exec's errno) when it cannot start. Returns once the command exec'd."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    r, w = os.pipe()
    leader = os.fork()
    if leader == 0:  # pragma: no cover - runs in the forked leader
        try:
            os.close(master)
            os.close(r)
            _lead(slave, w, path, argv, env)
        finally:
            os._exit(127)
    os.close(slave)
    os.close(w)
    first = _read_line(r)
    kind, _, rest = first.partition(b" ")
    if kind != b"P":
        os.close(master)
        os.close(r)
        try:
            os.waitpid(leader, 0)
        except ChildProcessError:
            pass
        code = int(rest) if kind == b"E" and rest.isdigit() else errno.EIO
        raise OSError(code, os.strerror(code))
    os.set_blocking(r, False)
    return LedChild(master, int(rest), leader, r)


def _read_line(fd: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data.strip()


def _lead(slave: int, report: int, path: str, argv: list[str], env: dict[str, str]) -> None:
    """The leader (in the forked process). Never returns normally."""
    inherited: dict[int, object] = {int(sig): signal.getsignal(sig) for sig in _KEYBOARD}
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for sig in _KEYBOARD:
        signal.signal(sig, signal.SIG_IGN)
    exec_r, exec_w = os.pipe()
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # the command unblocks it
    pid = os.fork()
    if pid == 0:
        _command(slave, exec_w, path, argv, env, inherited)
    os.close(exec_w)
    # the leader lives as long as the PTY: a hangup ends it even where cuewrap was started with
    # hangups ignored (nohup); the command, forked before this, keeps the disposition it got
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    _own_terminal(slave, pid)
    failed = b""
    while True:
        chunk = os.read(exec_r, 64)
        if not chunk:
            break
        failed += chunk
    os.close(exec_r)
    os.close(slave)
    if failed:
        os.write(report, b"E " + failed.strip() + b"\n")
        os.waitpid(pid, 0)
        os._exit(0)
    os.write(report, b"P %d\n" % pid)
    # from here on the leader only waits: as a bare interpreter it holds ~1.5 MB less than this
    # fork of cuewrap, whose pages cuewrap's own writes would turn into copies (docs/
    # benchmarks.md, the footprint). The interpreter's start (~10 ms of CPU) waits BOOT seconds,
    # not to take it from the command's own start; the stops and the exit are reported from
    # here meanwhile (SIGCHLD is blocked since before the fork: none is missed)
    scope: dict[str, object] = {"__name__": "leader"}
    exec(WAITER, scope)
    wait = scope["wait"]
    assert callable(wait)
    deadline = time.monotonic() + BOOT
    while not wait(pid, report, os.WNOHANG):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        signal.sigtimedwait([signal.SIGCHLD], left)
    else:
        os._exit(0)  # the command ended while it started
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
    try:
        os.set_inheritable(report, True)
        python = sys.executable
        null = os.open(os.devnull, os.O_RDWR)  # nothing it could say reaches the user's screen
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv(python, [python, "-I", "-S", "-c", WAITER, str(pid), str(report)])
    except (OSError, ValueError, TypeError):
        pass
    wait(pid, report)  # no interpreter to exec: wait here
    os._exit(0)


def _own_terminal(slave: int, pid: int) -> None:
    """The command's group leads and owns the terminal (done by both sides: no race)."""
    try:
        os.setpgid(pid, pid)
    except OSError:  # it did it itself and exec'd already
        pass
    try:
        os.tcsetpgrp(slave, pid)
    except OSError:
        pass


def _command(
    slave: int,
    exec_w: int,
    path: str,
    argv: list[str],
    env: dict[str, str],
    inherited: dict[int, object],
) -> None:  # pragma: no cover - runs in the forked command before exec
    try:
        os.setpgid(0, 0)
        os.tcsetpgrp(slave, os.getpid())  # SIGTTOU is ignored here (the leader's setting)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        # dispositions as cuewrap had them (an ignored signal survives exec); Python ignores
        # SIGPIPE and SIGXFSZ itself: the command gets the defaults
        for sig, old in inherited.items():
            signal.signal(sig, signal.SIG_IGN if old == signal.SIG_IGN else signal.SIG_DFL)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.closerange(3, exec_w)
        os.closerange(exec_w + 1, _max_fd())
        os.execve(path, argv, env)
    except OSError as exc:
        try:
            os.write(exec_w, b"%d" % (exc.errno or errno.EIO))
        except OSError:
            pass
    os._exit(127)


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 1 << 16)
    except (OSError, ValueError):
        return 1024
