"""What evict ranks a leaf by, in the LFU stretch: the leaf's own hit count. An answer that ranks it
by the hits of its whole path (its own count plus its ancestors') keeps a leaf under a popular
prefix, though the matches that used only the prefix never used the leaf. Its wrong pages look like
those of a miscounted match, a split or a new leaf that took its parent's hits, so `ranks_by_path`
confirms it on a scene of its own: a leaf with 0 hits under a parent matched 3 times, and another
leaf matched once. lfu_checks._expect_freed names it, and its probes of a split's lower part and a
new leaf's count ask it first, so they do not take this answer for theirs.
"""

from __future__ import annotations

PATH_RANKED = (
    " (your evict ranks a leaf by the hits of its whole path: with [1, 1] (page 10) matched 3 times and its "
    "child [2, 2] (page 11) never, and [5, 5] (page 50) matched once, your evict(1) frees page 50, not page 11. "
    "A leaf's rank is its own count: a match that used only the prefix above it did not use the leaf, so do "
    "not add its ancestors' hits)"
)


def ranks_by_path(cls) -> bool:
    """Whether a leaf with 0 hits under a parent with 3 outranks a leaf with 1 hit: the child C (page
    11) is inserted before any match, so no hit reaches it, and evict(1) must free it; an answer that
    adds the parent's hits frees R (page 50). The control, two plain leaves with 0 and 1 hit, frees
    the one with 0 (so an answer that evicts the most hits first is not taken for this one)."""
    try:
        cache = cls(2)
        cache.insert([1, 1], [10])
        cache.insert([1, 1, 2, 2], [10, 11])
        cache.insert([5, 5], [50])
        for _ in range(3):
            cache.match_prefix([1, 1])
        cache.match_prefix([5, 5])
        plain = cls(2)
        plain.insert([6, 6], [60])
        plain.insert([7, 7], [70])
        plain.match_prefix([7, 7])
        return sorted(cache.evict(1)) == [50] and sorted(plain.evict(1)) == [60]
    except Exception:
        return False
