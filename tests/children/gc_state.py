"""Run cuewrap's CLI in this process and note whether the garbage collector ran at each step of
the session: at the spawn, when the relay starts, before and after the cue side is built, and
after ``main`` returned. cuewrap pauses it while it starts (cli.run).

    python gc_state.py OUT [CUEWRAP_ARGS...]

Writes one ``step<TAB>True|False`` line per step, in order, to OUT.
"""

import gc
import sys
from collections.abc import Callable

from cuewrap import cli
from cuewrap.relay import relay
from cuewrap.wiring import session

seen: list[tuple[str, bool]] = []


def noting(
    step: str, method: Callable[..., object], after: str | None = None
) -> Callable[..., object]:
    def wrapper(*args: object, **kwargs: object) -> object:
        seen.append((step, gc.isenabled()))
        result = method(*args, **kwargs)
        if after is not None:
            seen.append((after, gc.isenabled()))
        return result

    return wrapper


def main() -> int:
    out = sys.argv[1]
    gc.enable()
    session.Session._spawn = noting("spawn", session.Session._spawn)  # type: ignore[method-assign]
    relay.Relay.run = noting("relay runs", relay.Relay.run)  # type: ignore[method-assign]
    session.Session._start_controller = noting(  # type: ignore[method-assign]
        "cue side to build", session.Session._start_controller, after="cue side built"
    )
    status = cli.main(sys.argv[2:])
    seen.append(("main returned", gc.isenabled()))
    with open(out, "w") as fh:
        fh.writelines(f"{step}\t{on}\n" for step, on in seen)
    return status


if __name__ == "__main__":
    sys.exit(main())
