"""The LFU stretch's two-tier order, named when a probe confirms it (lfu_checks._expect_freed asks
`ranks_in_two_tiers` before the hints of its cases' known wrong pages).

An evict that orders its leaves by `(hits > 0, last use)` frees the leaves no match has reached
first, as the contract does, but then treats every leaf with a hit alike: among those, the least
recently used goes, whatever its count. It fails the cases whose two leaves both have hits, where
the wrong pages alone look like other mistakes (a parent that lost its count, a split that dropped
it, plain LRU). The probe confirms the order on small trees of its own: of two leaves with hits, the
one used longer ago goes, in both orders of 3 hits and 1 (so neither the count nor the page ids
decide), and a leaf with no hits, used after one with a hit, still goes first (so plain LRU, which
ignores hits, is not taken for it).
"""

from __future__ import annotations

TWO_TIERS = (
    " (your evict treats every leaf with a hit alike: leaves with no hits first, then the others by last use "
    "only, however many hits they have. Of [1, 1, 2, 2] (pages 20, 21) matched 3 times and then [3, 3, 4, 4] "
    "(pages 30, 31) matched once, your evict(1) frees pages 20, 21. Order by the hit count itself, (hits, last "
    "use): not by whether a leaf has any hit)"
)

X, Y = [1, 1, 2, 2], [3, 3, 4, 4]


def _freed(cls, first: list[int], times: int, then: list[int], then_times: int) -> list[int]:
    """X (pages 20, 21) and Y (pages 30, 31) inserted; `first` matched `times` times, then `then`
    matched `then_times` times (inserted again, a use but no hit, when 0); what evict(1) frees."""
    cache = cls(2)
    cache.insert(list(X), [20, 21])
    cache.insert(list(Y), [30, 31])
    for k in range(times):
        # other ids each time (a token past the last whole page: the same pages), so that an answer
        # that counts a repeat of the same ids once is not taken for this one
        cache.match_prefix(list(first) + [7 + k] * (k > 0))
    if then_times == 0:
        cache.insert(list(then), [50, 51])  # marks it used, adds no hit
    for _ in range(then_times):
        cache.match_prefix(list(then))
    return sorted(cache.evict(1))


def ranks_in_two_tiers(cls) -> bool:
    """Of two leaves with hits the one used longer ago goes, whichever has 3 hits and which 1; and a
    leaf with no hits goes before one with a hit that was used before it."""
    try:
        return (
            _freed(cls, X, 3, Y, 1) == [20, 21]
            and _freed(cls, Y, 3, X, 1) == [30, 31]
            and _freed(cls, X, 1, Y, 0) == [30, 31]
        )
    except Exception:
        return False
