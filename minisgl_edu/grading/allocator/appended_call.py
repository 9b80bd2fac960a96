"""Exercise 4 — a free() that puts the call's list on the free list as one element, for the base part (base.py).

Where this sits: case "free and reuse" (base.py) sees num_free short after an accepted free of two
pages. The probe here runs the answer once more on a fresh allocator, to name one cause only when it
shows: after free() of two pages num_free rose by 1, and the allocator's free list holds the very list
that free() was given as one element. That is `self.free_list.append(pages)` where
`extend(pages)` was meant: append() adds its argument as one element, whatever its length.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

APPENDED_CALL = (
    "put each page of the call on the free list, not the call's list as one element: "
    "free_list.append(pages) adds ONE element (the list itself), so num_free grows by 1 and a later "
    "allocate hands that list out as a page id; use free_list.extend(pages), or append(p) for each page"
)


def _list_kept_whole(cls) -> Optional[tuple[list[int], str, list]]:
    """On a fresh allocator of 4 pages: allocate(3), then free() of its first two pages. When num_free rose
    by 1 only and one of the allocator's list attributes now holds those two pages as one element, a list:
    (the freed pages, that attribute's name, its items). None otherwise."""
    try:
        a = cls(4)
        pages = list(a.allocate(3))
        before = a.num_free
        freed = pages[:2]
        a.free(list(freed))
        if len(pages) != 3 or a.num_free != before + 1:
            return None
        attrs = list(vars(a).items())
    except Exception:
        return None
    for name, value in attrs:
        if isinstance(value, list) and any(isinstance(p, list) and sorted(p) == sorted(freed) for p in value):
            return freed, name, list(value)
    return None


def appended_call(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for num_free short after an accepted free (`seen`: what the case saw), when a fresh
    allocator shows free() putting its whole list on the free list as one element; None otherwise."""
    found = _list_kept_whole(cls)
    if found is None:
        return None
    freed, name, items = found
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, after allocate(3) and free({freed!r}), num_free rose by 1, "
        f"not 2, and self.{name} reads {items!r}: the list {freed!r} that free() was given is one item of it. "
        "Your free() put the call's list on the free list as one element (a later allocate hands that list "
        "out as if it were a page id)",
        APPENDED_CALL,
    )
