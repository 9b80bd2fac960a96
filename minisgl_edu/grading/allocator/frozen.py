"""Exercise 4 — a num_free that never changes, for the base part's cases (base.py).

When num_free is wrong after allocate() or free(), a fresh allocator of 4 pages shows whether it is a
count set once (in __init__, as an attribute) that neither method updates: the count then reads the
same at the start, after two allocates and after a free.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Mistake

FROZEN_COUNT = (
    "num_free says how many pages are free now, so it must change with every allocate() and free(): make it "
    "a property that reads the free list (@property def num_free(self): return len(self.free_list)), or "
    "update it in both methods; a value set once in __init__ stays num_pages forever"
)


def frozen_count(cls, seen: str) -> Mistake | None:
    """When num_free on a fresh allocator of 4 pages reads the same before and after allocate(1), after
    allocate(2) and after a free(), the Mistake that says it is never updated (`seen`: what the case saw)."""
    try:
        a = cls(4)
        reads = [a.num_free]
        first = a.allocate(1)
        reads.append(a.num_free)
        a.allocate(2)
        reads.append(a.num_free)
        a.free(first)
        reads.append(a.num_free)
    except Exception:
        return None
    if len(set(reads)) != 1:
        return None
    kept = (
        " It is an attribute, self.num_free, that allocate() and free() never change." if "num_free" in vars(a) else ""
    )
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, num_free reads {reads[0]} at the start, after allocate(1), "
        f"after allocate(2) and after free() of the first page: it never changes.{kept}",
        FROZEN_COUNT,
    )
