"""Exercise 4 stretch — the free run after a freed page, read but left in the start index, for
ContiguousPageAllocator's cases (contiguous.py).

Where this sits: `_Pair.same_state` (contiguous.py) sees runs that differ from the reference's, two
of them overlapping. Many mistakes overlap runs; the probe here names one cause only when it shows on
a fresh allocator of 6 pages, all handed out: free([3, 4]) then free([2]) must leave the one run
(2, 3). An allocator that lists [(2, 3), (3, 2)] merged page 2 with the run after it (the run (2, 3)
is right) but kept that run's own entry (3, 2): it read the run with `by_start.get(p + 1)` or
`by_start[p + 1]` where it must take it out with `by_start.pop(p + 1)`.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

RIGHT_ENTRY_KEPT = (
    "when a freed page joins the free run that starts just after it, take that run out of the start index "
    "(by_start.pop(p + 1)), not only read it (by_start.get(p + 1) or by_start[p + 1]): the merged run is "
    "recorded at its new start, and the old entry left behind is a second run over the same pages"
)


def right_entry_kept(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for overlapping runs (`seen`: what the case saw), when on a fresh allocator of 6 pages,
    all handed out, free([3, 4]) then free([2]) leave the runs [(2, 3), (3, 2)]: the merged run and the
    right neighbour's old entry. None otherwise."""
    try:
        a = cls(6)
        a.allocate(6)
        a.free([3, 4])
        a.free([2])
        got = [tuple(r) for r in a.runs]
    except Exception:
        return None
    if got != [(2, 3), (3, 2)]:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 6 pages, all handed out, free([3, 4]) then free([2]) leave your runs "
        "[(2, 3), (3, 2)], expected [(2, 3)]: page 2 joined the run (3, 2) after it, but that run's old entry "
        "stayed in your start index, so pages 3 and 4 are listed twice",
        RIGHT_ENTRY_KEPT,
    )
