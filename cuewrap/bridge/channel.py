"""The bridge's listening socket, opened before the child is spawned.

Kept free of heavy imports (no dataclasses, no tempfile, not even the socket module: its set-up
costs milliseconds; ``_socket`` is its C core) because it runs on the start-up path: the child's
environment must name the socket, and the child should start as early as possible.
"""

from __future__ import annotations

import _socket
import os

from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

ENV_SOCKET = "CUEWRAP_BRIDGE_SOCKET"
ENV_TOKEN = "CUEWRAP_BRIDGE_TOKEN"
# privacy.body: "1" lets the extension send summaries (docs/bridge-protocol.md), "0" forbids it
ENV_SUMMARY = "CUEWRAP_BRIDGE_SUMMARY"
_MAX_PATH = 100  # sun_path is 104-108 bytes


class Channel:
    """A private directory (0700), a listening Unix socket (0600) in it, and a random token."""

    def __init__(
        self, directory: str, path: str, sock: socket.socket | _socket.socket, token: str
    ) -> None:
        self.dir = directory
        self.path = path
        self._sock = sock
        self.token = token

    @property
    def sock(self) -> socket.socket:
        """The listening socket, as a ``socket.socket`` (made on first use: after the spawn)."""
        import socket

        if not isinstance(self._sock, socket.socket):
            raw = self._sock
            self._sock = socket.socket(raw.family, raw.type, fileno=raw.detach())
            self._sock.setblocking(False)
        return self._sock

    def env(self, summary: bool = False) -> dict[str, str]:
        """The child's variables; ``summary``: privacy.body is "summary"."""
        return {ENV_SOCKET: self.path, ENV_TOKEN: self.token, ENV_SUMMARY: "1" if summary else "0"}

    def close(self) -> None:
        """Close the socket and remove it and its directory. Safe to call twice."""
        self._sock.close()
        _remove(self.dir, self.path)


def _remove(directory: str, path: str) -> None:
    """Remove the socket file and its directory, whatever is left of them."""
    for remove, name in ((os.unlink, path), (os.rmdir, directory)):
        try:
            remove(name)
        except OSError:
            pass


_PREFIX = "cuewrap-"


def remove_stale() -> int:
    """Remove the socket directories that killed cuewraps left behind (issue 7 item 8): ours
    (same uid), named with an owner pid that no longer exists. Returns how many went."""
    removed = 0
    uid = os.getuid()
    for base in dict.fromkeys(b for b in (_runtime_base(), _temp_base(), "/tmp") if b):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(_PREFIX):
                continue
            pid_text = entry.name[len(_PREFIX) :].partition("-")[0]
            if not pid_text.isdigit() or _alive(int(pid_text)):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_uid != uid or not entry.is_dir(follow_symlinks=False):
                continue
            _remove(entry.path, os.path.join(entry.path, "bridge.sock"))
            removed += not os.path.lexists(entry.path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists (someone else's)
        return True
    return True


def _runtime_base() -> str | None:
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
        return base
    return None


def _temp_base() -> str:
    for var in ("TMPDIR", "TEMP", "TMP"):
        base = os.environ.get(var)
        if base and os.path.isdir(base):
            return base
    return "/tmp"


def _private_dir(base: str) -> str:
    for _ in range(100):
        # the owner's pid in the name: a later cuewrap removes it once that process is gone
        # short (sun_path is ~100 bytes): the pid already keeps processes apart, mkdir refuses
        # an existing name, and the random part only keeps one process's names apart
        d = os.path.join(base, f"{_PREFIX}{os.getpid()}-{os.urandom(3).hex()}")
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue
        os.chmod(d, 0o700)  # whatever the umask
        return d
    raise FileExistsError("cannot create a private directory for the bridge socket")


def open_channel() -> Channel:
    """Create the directory and the listening socket. Raises OSError, leaving nothing behind."""
    bases = [b for b in (_runtime_base(), _temp_base(), "/tmp") if b]
    last: OSError | None = None
    for base in bases:
        directory = None
        try:
            directory = _private_dir(base)
            path = os.path.join(directory, "bridge.sock")
            if len(os.fsencode(path)) > _MAX_PATH:
                os.rmdir(directory)
                continue
            sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            try:
                sock.bind(path)
                os.chmod(path, 0o600)
                sock.listen(8)
                sock.setblocking(False)
            except OSError:
                sock.close()
                raise
            # os.urandom is what secrets.token_hex uses (secrets costs ~10 ms of imports here)
            return Channel(directory, path, sock, os.urandom(32).hex())
        except OSError as exc:
            last = exc
            if directory is not None:
                _remove(directory, os.path.join(directory, "bridge.sock"))
    raise last or OSError("no directory for the bridge socket")
