"""Exercise 4, stretch — runs that still list pages allocate() just handed out, for contiguous.py's
step that calls allocate().

Two slips show this. The rest of a run computed wrong (off by one, or kept at the old start) lists a
page on both sides. And `runs` kept as a list on the object that only free() rebuilds ("the runs only
change when pages come back and merge"): allocate() shortens or removes the run it takes from, so after
it `runs` still shows the runs as they were before the call.

`stale_runs_probe` confirms the second on a fresh allocator of 10 pages of its own: allocate(3) gives
[0, 1, 2] and leaves num_free 7 (the pages were taken), yet runs still [(0, 10)], exactly as before the
call; then free([0]) gives the right runs [(0, 1), (3, 7)]. The list is right after free() and left as
it was by allocate(): only free() rebuilds it. Anything else keeps the hint about the rest of the run.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.allocator.contiguous_reads import read_runs
from minisgl_edu.grading.core import Mistake, expect

STALE_RUNS = (
    "allocate() changes the runs too: it shortens the run it takes from, or removes it. Bring runs up to date "
    "in allocate() as well as in free(), or better, make runs a property that builds the sorted list from "
    "the free runs you keep each time it is read, so it can never fall behind"
)


def stale_runs_probe(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for runs left as they were by allocate() and rebuilt by free() alone (`seen`: what the
    case saw), when a fresh allocator of 10 pages shows it; None otherwise."""
    try:
        a = cls(10)
        got = sorted(a.allocate(3))
        after_allocate = [tuple(r) for r in a.runs]
        num_free = a.num_free
        a.free([0])
        after_free = [tuple(r) for r in a.runs]
    except Exception:
        return None  # the set-up went otherwise: nothing to say
    if (got, num_free, after_allocate, after_free) != ([0, 1, 2], 7, [(0, 10)], [(0, 1), (3, 7)]):
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 10 pages, allocate(3) gave [0, 1, 2] and num_free is 7, but your "
        "runs are still [(0, 10)], as before the call (expected [(3, 7)]); after free([0]) they are the right "
        "[(0, 1), (3, 7)]: your runs are a list that only free() brings up to date",
        STALE_RUNS,
    )


def handed_out_still_free(a, n: int, got: list[int]) -> None:
    """After allocate(n) gave `got`: no page of it may still be listed in `a.runs`. A page listed there is
    named as runs only free() rebuilds when the probe shows it, else as the rest of a run off by one."""
    runs = read_runs(a)
    overlap = sorted(p for start, length in runs for p in range(start, start + length) if p in got)
    if not overlap:
        return
    seen = f"allocate({n}) gave {got}, but your runs {runs} still list page(s) {overlap} as free"
    mistake = stale_runs_probe(type(a), seen)
    if mistake is not None:
        raise mistake
    expect(
        False,
        f"{seen}: a page both handed out and free is handed out twice (is the rest of the run off by one?)",
        "what is left of a run of (start, length) after taking n pages is (start + n, length - n)",
    )
