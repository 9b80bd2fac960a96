"""What evict returns: the list of the page ids it freed, which the cache manager hands straight to
`allocator.free(...)`. An answer that returns how many pages it freed (`len(freed)`, "the caller asked for
a number of pages, it gets the number back") takes the pages out of the tree, but their ids never reach
the free list. The base part's hand cases ask `returns_a_count` for any failed check (tree.own_hints),
before the probes that read evict's pages, which cannot use a number.
"""

from __future__ import annotations

EVICT_RETURNS_IDS = (
    "evict returns the list of the page ids it freed, not how many: the cache manager passes that list to "
    "allocator.free(), so a number frees nothing there (return freed, not len(freed))"
)


def returns_a_count(cls) -> str:
    """' (...)' saying what evict returned when, on a fresh tree, it returned the number of pages that left
    the tree instead of their ids; else ''."""
    try:
        cache = cls(2)  # page size 2
        cache.insert([1, 2, 3, 4], [10, 11])  # one leaf of two pages
        got = cache.evict(1)
        left = set(cache.cached_pages())
    except Exception:
        return ""
    # confirmed by the tree: the pages did leave it, and the number is how many left
    if isinstance(got, list) or not isinstance(got, int) or left or got != 2:
        return ""
    return (
        f" (on a fresh tree with [1, 2, 3, 4] cached on pages 10, 11, page size 2, evict(1) took both pages out "
        f"of the tree and returned {got!r}, their count, not the list [10, 11])"
    )
