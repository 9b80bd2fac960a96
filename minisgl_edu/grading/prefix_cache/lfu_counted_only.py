"""The LFU stretch's evict, named when it takes its candidates only from the nodes it keeps counts for
(lfu_checks._expect_freed asks `counted_leaves_only` before the hints of its cases' known wrong pages).

An answer that keeps its hits in a dict and builds evict's candidates from that dict (`for n in
self.hits`) never sees a leaf that insert added and no match has reached: such a leaf has 0 hits and
should go first, but it is never freed, and evict frees fewer pages than it could. Its wrong pages look
like other mistakes' (an insert that counted hits keeps the same leaf), so the probe confirms it on two
small trees of its own: one page inserted and never matched, evict(1) frees nothing; the same page
matched once first, evict(1) frees it.
"""

from __future__ import annotations

COUNTED_ONLY = (
    " (your evict never frees a leaf that no match has reached: one page inserted and never matched, "
    "evict(1) frees nothing; matched once first, it is freed. Take the candidates from every unlocked leaf "
    "of the tree, not from the nodes your hit counts hold: a leaf with no entry there has 0 hits and goes first)"
)


def _frees(cls, page_size: int, matched: bool) -> list[int]:
    """One page (10) inserted, matched once if `matched`, then evict(1): the pages it frees."""
    cache = cls(page_size)
    ids = [1] * page_size
    cache.insert(list(ids), [10])
    if matched:
        cache.match_prefix(list(ids))
    return sorted(cache.evict(1))


def counted_leaves_only(cls, page_size: int = 2) -> bool:
    """evict frees nothing of a leaf only inserted, and frees it once a match has counted it."""
    try:
        return _frees(cls, page_size, matched=False) == [] and _frees(cls, page_size, matched=True) == [10]
    except Exception:
        return False
