"""The Pi bridge: a Pi extension (package data) and the socket server that receives its facts.

- ``extension_path()``: the file to pass to Pi as ``pi -e <path>``.
- ``BridgeServer`` (``server.py``): the private socket on the relay's loop; ``env()`` gives the
  ``CUEWRAP_BRIDGE_SOCKET`` / ``CUEWRAP_BRIDGE_TOKEN`` variables for Pi's environment.
- ``protocol.py``: pure validation of one line into a fact, request or rejection.

See ``docs/bridge-protocol.md``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from cuewrap.bridge.protocol import PROTOCOL_VERSION, Auth, Rejection, Request, parse_line
from cuewrap.bridge.server import ENV_SOCKET, ENV_TOKEN, BridgeServer

EXTENSION_FILE = "cuewrap-bridge.ts"


def extension_path() -> Path:
    """Absolute path of the bridge extension shipped with the package."""
    return Path(str(resources.files("cuewrap.bridge") / "extension" / EXTENSION_FILE)).resolve()


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
