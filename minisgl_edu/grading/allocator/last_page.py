"""Exercise 4 — a free() that gives back only the last page of its call, for the base part's cases.

Where this sits: case "free and reuse" (base.py) sees num_free short after an accepted free of two
pages. The probe here runs the answer once more on a fresh allocator, to name one cause only when
it shows: after free() of three pages, only the last page of the call is free again and the others
are still in use, as when the lines that give a page back sit after the `for p in pages` loop (one
indentation level too far out) and run once, for the page the loop saw last.
"""

from __future__ import annotations

from typing import Optional

from minisgl_edu.grading.core import Mistake

LAST_PAGE_ONLY = (
    "give back every page of the call, not only the last: the lines that take a page out of use and put it on "
    "the free list belong inside the `for p in pages` loop (indented under it); after the loop they run once, "
    "for the last page the loop saw"
)


def _only_last_back(cls) -> Optional[list[int]]:
    """On a fresh allocator of 4 pages: allocate(3), then free() of those 3 pages in one call. When that is
    accepted yet num_free rises by 1 only, free() of the last page again is refused (it is free), and free()
    of each other page alone is accepted (they were still in use), each raising num_free by 1: the 3 pages.
    None when the answer does not show that."""
    try:
        a = cls(4)
        pages = list(a.allocate(3))
        before = a.num_free
        a.free(list(pages))
        if len(pages) != 3 or a.num_free != before + 1:
            return None
        try:
            a.free([pages[-1]])
        except ValueError:
            pass
        else:
            return None
        for p in pages[:-1]:
            count = a.num_free
            a.free([p])
            if a.num_free != count + 1:
                return None
    except Exception:
        return None
    return pages


def last_page_only(cls, seen: str) -> Optional[Mistake]:
    """The Mistake for num_free short after an accepted free (`seen`: what the case saw), when a fresh
    allocator shows that free() gives back only the last page of its call; None otherwise."""
    pages = _only_last_back(cls)
    if pages is None:
        return None
    return Mistake(
        f"{seen}. On a fresh allocator of 4 pages, allocate(3) gave {pages!r} and free({pages!r}) was accepted, "
        f"yet num_free rose by 1, not 3: only page {pages[-1]}, the last of the call, went back (freeing it again "
        f"is refused), while freeing {pages[0]} and {pages[1]} again, alone, is accepted, so they were still in "
        "use. Your free() gives back only the last page of its call",
        LAST_PAGE_ONLY,
    )
