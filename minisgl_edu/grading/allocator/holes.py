"""Exercise 4, stretch: the allocator the best-fit probes play on (closest_size.py, filtered_position.py).

A fresh allocator of 9 pages, every page handed out by one allocate(9), then some blocks given back one
free() each: its free runs are exactly those blocks, whatever the answer's first allocation order, so a
probe can lay out holes of the sizes it needs and read which pages allocate(n) takes from them.
"""

from __future__ import annotations

from typing import Optional

POOL = 9


def allocate_after_frees(cls, frees: list[list[int]], n: int) -> Optional[list[int]]:
    """The pages allocate(n) takes (sorted) once the blocks `frees` are given back; None when anything
    went otherwise or raised."""
    try:
        a = cls(POOL)
        if sorted(a.allocate(POOL)) != list(range(POOL)):
            return None
        for pages in frees:
            a.free(pages)
        return sorted(a.allocate(n))
    except Exception:
        return None


def runs_text(frees: list[list[int]]) -> str:
    """The free runs the blocks `frees` make, as '(start, length), ...'."""
    return ", ".join(str((pages[0], len(pages))) for pages in frees)
