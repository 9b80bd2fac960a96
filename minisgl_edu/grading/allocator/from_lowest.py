"""Exercise 4 — an allocate() that takes n consecutive ids from the lowest free page, for the base part.

Where this sits: case "free and reuse" (base.py) sees allocate hand out a page still in use after a
free. The probe here runs the answer once more on a fresh allocator, to name one cause only when it
shows: with pages 0, 2 and 4 free and 1, 3 in use, allocate(3) gives [0, 1, 2], the 3 consecutive ids
from the lowest free page (range(lo, lo + n)). On a new allocator the free pages are consecutive, so
that works; once frees leave holes, the ids above the lowest free page include pages in use.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

FROM_LOWEST = (
    "the free pages are not consecutive after frees: the ids just above the lowest free page may be in use. "
    "Take the n ids from the free pages themselves (pop them from a free list, say), not range(lowest, lowest + n)"
)


def _from_lowest(cls) -> Optional[list[int]]:
    """On a fresh allocator of 5 pages: allocate(5), free([4, 0, 2]) (holes at 1 and 3, given back in an order
    that neither a stack nor a queue of freed pages turns into [0, 1, 2]), then allocate(3). What it gave when
    that is [0, 1, 2], the 3 ids from the lowest free page, page 1 in use among them; None otherwise."""
    try:
        a = cls(5)
        if sorted(a.allocate(5)) != list(range(5)):
            return None
        a.free([4, 0, 2])
        got = list(a.allocate(3))
    except Exception:
        return None
    return got if got == [0, 1, 2] else None


def from_lowest(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for allocate handing out a page in use after frees (`seen`: what the case saw), when a
    fresh allocator shows allocate(n) giving range(lowest free, lowest free + n); None otherwise."""
    got = _from_lowest(cls)
    if got is None:
        return None
    return Mistake(
        f"{seen}. On a new allocator of 5 pages, allocate(5) took every page and free([4, 0, 2]) gave back pages "
        f"0, 2 and 4, while 1 and 3 stay in use; then allocate(3) gave {got}: the 3 consecutive ids from the "
        "lowest free page, 0, with page 1, still in use, among them (handed out twice)",
        FROM_LOWEST,
    )
