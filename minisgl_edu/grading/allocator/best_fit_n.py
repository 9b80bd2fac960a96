"""Exercise 4, stretch — a best-fit step that takes n pages where it must take the pages still needed,
for ContiguousPageAllocator's allocate (contiguous.py).

Where this sits: `_Pair.allocate` (contiguous.py) sees allocate(n) give other pages than the reference,
here more than n. When no run holds n, the fallback takes the largest run whole and the loop goes on for
what is still needed; a best-fit branch that takes `count = n` (the whole request) instead of `need`
cuts n more pages after the run taken whole. The probe names that only when a fresh allocator shows it.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

TAKES_N = (
    "the best-fit step takes the pages still needed (need = n minus the pages taken so far), not n: after "
    "the fallback has taken a run whole, fewer than n pages are left to find"
)


def best_fit_takes_n(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for allocate(n) that gave other pages (`seen`: what the case saw), when on a fresh allocator
    of 10 pages, all handed out, free([0, 1, 2]) and free([5, 6]) leave the runs [(0, 3), (5, 2)] and
    allocate(4) then gives [0, 1, 2, 5, 6, 7, 8] (expected [0, 1, 2, 5]): the run (0, 3) whole, then 4
    pages, n, from page 5 where 1 was still needed. None otherwise."""
    try:
        a = cls(10)
        if sorted(a.allocate(10)) != list(range(10)):
            return None
        a.free([0, 1, 2])
        a.free([5, 6])
        if [tuple(r) for r in a.runs] != [(0, 3), (5, 2)]:
            return None
        got = sorted(a.allocate(4))
    except Exception:
        return None
    if got != [0, 1, 2, 5, 6, 7, 8]:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 10 pages, all handed out, free([0, 1, 2]) and free([5, 6]) leave the runs "
        "[(0, 3), (5, 2)]; allocate(4) then gives [0, 1, 2, 5, 6, 7, 8], expected [0, 1, 2, 5]: no run holds 4, "
        "so the run (0, 3) is taken whole and 1 page is still needed, but your best-fit step took 4 pages, n, "
        "from page 5 (pages 7 and 8 were not even free)",
        TAKES_N,
    )
