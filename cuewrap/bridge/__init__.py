"""The Pi bridge: a Pi extension (package data) and the socket server that receives its facts.

- ``extension_path()``: the file to pass to Pi as ``pi -e <path>``.
- ``channel.py``: the listening socket, opened before the child is spawned (light imports);
  ``Channel.env()`` gives Pi's variables (``CUEWRAP_BRIDGE_SOCKET``, ``CUEWRAP_BRIDGE_TOKEN``,
  and whether summaries are wanted).
- ``BridgeServer`` (``server.py``): serves that socket on the session's loop and keeps only
  the child's own connection (peer credentials, token).
- ``connection.py``: one connection's bytes to events (framing, line budget, auth, hello); no
  sockets.
- ``protocol.py``: pure validation of one line into a fact, request or rejection.

See ``docs/bridge-protocol.md``. Names are loaded on first use: this package is imported on
the start-up path (for ``channel``), before the child is spawned.
"""

from __future__ import annotations

import os

from cuewrap.bridge.channel import ENV_SOCKET, ENV_TOKEN
from cuewrap.records import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

EXTENSION_FILE = "cuewrap-bridge.ts"


def extension_path() -> str:
    """Absolute path of the bridge extension shipped with the package (a ``str``: it is on the
    start-up path, and pathlib is not)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "extension", EXTENSION_FILE)


_LAZY = {
    "PROTOCOL_VERSION": "protocol",
    "Auth": "protocol",
    "Rejection": "protocol",
    "Request": "protocol",
    "parse_line": "protocol",
    "BridgeServer": "server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"cuewrap.bridge.{module}"), name)


__all__ = [
    "ENV_SOCKET",
    "ENV_TOKEN",
    "EXTENSION_FILE",
    "PROTOCOL_VERSION",
    "Auth",
    "BridgeServer",
    "Rejection",
    "Request",
    "extension_path",
    "parse_line",
]
