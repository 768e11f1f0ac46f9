"""Screen test rig: a recording of real Pi 1.4.0, and the screen watcher around its worker.

Fixture (registered by tests/conftest.py):

    harness   factory ``harness(**kw) -> Harness``: a ``ScreenWatcher`` on its own ``Loop``
              (``kw`` go to the watcher, e.g. ``argv=`` for another worker); every one
              stopped at teardown

Helpers: ``pi_frames()`` (the recording cut into Pi's synchronized frames), ``recording()``.
The recording (100x30): start-up, the prompt "run it", a bash tool call ``sleep 2`` (spinner
frames), "done", idle; zlib + base64. Also used by scripts/bench_screen.
"""

from __future__ import annotations

import base64
import re
import time
import zlib
from collections.abc import Callable, Iterator

import pytest
from waiting import turning, wait_until

from cuewrap.facts import Fact
from cuewrap.loop import Loop
from cuewrap.screen import ScreenWatcher

RECORDING = (
    "eNrtW8Fu2kAQPeYjfNlDKyVSY3bWBuNaKqdKVXPopVIOlAONTUDYXguwcs0pPfRQVe0lt57aH+ihlfoP/Qe+pGuz"
    "BpoMkChgXHWQpWEHez1v3njGO9hGuwXcdvtGu+WERjbgvD+TQktLS1vLhpLipdF+oYainh0kZj8+c1I1SI2OU+fg"
    "tYw3RvtsaR8L+kYHuNc6UAJyYXtcy2IstLS0tLWsa9nQ0tGyqaVbzDOfsJgRiimhmBOKSSGfdWYkFwUu8EBBEydG"
    "m0dGp+l5aheB6CxEZyO6OqJrIDoH0TURnYvoFGxEiSEBDApgWAADAxgawOAAhgcwQIAhEhgigXKDIRIYIoEhEhgi"
    "sUBkuZH6Ek0/X9J2xy3nJPfbkkcX4eBELBtHbPefvyxoEqdb5tS96dHaJEpq47NRrS+joHYhR0PsOIvfPI6b/HEN"
    "RHPIDrvpRB4tjtI7bC8ket1hcBxJPwjXhOm8aIlGaHS49/uSHbMMzsFSrdAgVJBZTVWgrOi0O4oH8flT1vNZLCes"
    "J9PYN9mrXi8cxAHLTsqCuPs2DPwnbDwcJInam/nyIg5l1zdzsPeNamu1FaNBcj4Kkl2ZssltC0fd4UdxMkpjNpiU"
    "lB1u2O5sNm9/aWud9xa1y3bLMIzlJ8LvZDIL8riZMVmuGc7eHbHqloHdymXTL+8LHZsrT1VyUZfg7cRHpWdF9bld"
    "RcCE6laR+TXr7j1Ul1YL9iIGIXrExmGgCobIMEV3Lkfbsgr27xiBOUZEz8NuMg58pm5TxvNLtyybrH8qtV1TattF"
    "aptefQSzPmTTq0+CMzDFbhPdA9LbfYLlJwXL1lbWD2fjB7FRITZ+ERsVYuM7sVEhNr4SGxVi4xuxUSE23hEbFWLj"
    "A7FRITao71YlNqhVUCU2aC1Oa/H/iY1NvV7YQ6+XmgfUPCA2qHlAzQNig5oH1DwgNqh5QGxQ84CaB8QGNQ/oj3xi"
    "g9bitBYnNrbY5hRVa3OuMvgwlkymkySdHO3YXuQZXBu36bWUwzI8iNq0/3c/1vNYvJLBfBkHZb4wQ+9ulvE4smVC"
    "/jiyXcXHkf8AoIK6Eg=="
)


def recording() -> bytes:
    return zlib.decompress(base64.b64decode("".join(RECORDING)))


def pi_frames() -> list[bytes]:
    """The recording cut before each synchronized-output frame (`CSI ?2026h`)."""
    data = recording()
    cuts = [m.start() for m in re.finditer(re.escape(b"\x1b[?2026h"), data)]
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True) if b > a]


class Harness:
    def __init__(self, **kw: object) -> None:
        self.loop = Loop()
        self.facts: list[Fact] = []
        self.errors: list[tuple[str, BaseException]] = []
        self.w = ScreenWatcher(
            self.loop, kw.pop("cols", 100), kw.pop("rows", 30),  # type: ignore[arg-type]
            self.facts.append, lambda where, e: self.errors.append((where, e)), **kw,  # type: ignore[arg-type]
        )  # fmt: skip

    def run_until(self, cond: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
        """Run the loop until ``cond()`` holds; fail naming ``what`` after ``timeout``."""
        wait_until(cond, timeout, what, interval=0.02, sleep=turning(self.loop))

    def pump(self, seconds: float) -> None:
        """Run the loop for ``seconds``: the pace of a replay (Pi's frame gaps)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.loop.run_once(max_timeout=left)


@pytest.fixture
def harness() -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(**kw: object) -> Harness:
        h = Harness(**kw)
        made.append(h)
        return h

    yield make
    for h in made:
        h.w.stop()
        h.loop.close()
