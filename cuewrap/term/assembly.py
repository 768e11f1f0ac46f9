"""What the output tracker writes for a chunk (``term/tracker.py``): the chunk without the cuts
its guards made, with what takes each one's place (pure)."""

from __future__ import annotations


def assemble(
    work: bytes,
    data: bytes,
    base: int,
    out_end: int,
    tail_rep: bytes,
    cuts: list[tuple[int, int]],
    reps: dict[int, bytes],
) -> bytes:
    """``work[base:out_end]`` without the ``cuts`` (each replaced by ``reps`` at its start, taken
    from it, if there), then ``tail_rep``; ``data`` itself (``work[base:]``, not copied) when
    nothing changed."""
    if cuts:
        if len(cuts) > 1:
            cuts.sort()
        parts = []
        pos = base
        for s, e in cuts:
            parts.append(work[pos:s])
            if reps and s in reps:
                parts.append(reps.pop(s))
            pos = e
        parts.append(work[pos:out_end])
        parts.append(tail_rep)
        return b"".join(parts)
    if tail_rep:
        return work[base:out_end] + tail_rep
    if out_end == len(work):
        return data  # work[base:], not copied
    return work[base:out_end]
