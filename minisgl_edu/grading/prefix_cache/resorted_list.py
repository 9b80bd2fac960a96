"""Exercise 6: an evict that walks a sorted list of leaves with a for loop, and appends the parent a
leaf left childless to that same list and sorts it again inside the loop. Read when the answer's code
raised KeyError in a hand case (base.py wraps its hand cases with `named_by_probe`, probe_named.py).

The for loop keeps its index while the list under it is reordered: a parent used before the leaf just
freed sorts into a slot already passed (it is never freed), and the freed leaf moves into the next
slot, comes up again and raises KeyError when it is unhooked a second time. A parent used after that
leaf sorts behind it and is freed as it should be. That last part tells this mistake from pushing the
leaf instead of the parent (leaf_again.py), which fails whichever was used last: the probe plays one
tree twice, with the parent used first (KeyError on the second leaf's key) and used last (no error,
every page freed).
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.leaf_again import evict_key_error

LIST_RESORTED = (
    "your evict frees the same leaf twice when the parent it left childless was used before that leaf: it adds "
    "the parent to the list the for loop is walking and sorts that list again inside the loop, but the loop "
    "keeps its position, so the older parent lands in a slot already passed (never freed) and the leaf just "
    "freed moves into the next slot. Never reorder a list that a for loop walks: take the next leaf from a "
    "heap (heappop, then heappush the parent), or pop(0) from a list you sort again"
)


def _tree(cls):
    cache = cls(2)
    cache.insert([1, 2, 3, 4], [10, 11])
    cache.insert([1, 2, 5, 5], [10, 20])  # [1, 2] -> [10], leaves [3, 4] -> [11] and [5, 5] -> [20]
    return cache


def list_resorted(cls) -> str:
    """What evict did on two fresh trees when it reorders the list its loop walks; else ''."""
    try:
        older = _tree(cls)  # the parent was used before the leaf [5, 5] was inserted
        if sorted(older.evict(1)) != [11] or evict_key_error(older, 2) != (5, 5):
            return ""
        newer = _tree(cls)
        newer.match_prefix([1, 2])  # the parent is now the node used last
        freed = sorted(newer.evict(1)) + sorted(newer.evict(2))
        if freed != [11, 10, 20] or newer.cached_pages():
            return ""
    except Exception:
        return ""
    return (
        "On a fresh tree, page size 2, [1, 2] -> [10] with leaves [3, 4] -> [11] and [5, 5] -> [20] (inserted in "
        "that order), evict(1) freed [11]; then evict(2) raised KeyError: (5, 5), the key of the leaf it had just "
        "freed, and page 10 stayed cached. On the same tree with [1, 2] matched last, the same calls freed "
        "every page: the parent is lost only when it was used before the leaf"
    )
