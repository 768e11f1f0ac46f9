"""The interactive settings editor (``cuewrap config`` without an argument)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuewrap.host import is_tty

if TYPE_CHECKING:
    from cuewrap.args import Args


def run_editor(args: Args, env: Mapping[str, str]) -> int:
    import sys

    if not (is_tty(0) and is_tty(1)):
        sys.stderr.write(
            "cuewrap: config: the editor needs a terminal on stdin and stdout"
            " (scripted: cuewrap config list|get|set|unset|path)\n"
        )
        return 2
    sys.stderr.write(
        "cuewrap: config: the interactive editor is not built yet"
        " (cuewrap config list|get|set|unset|path)\n"
    )
    return 2
