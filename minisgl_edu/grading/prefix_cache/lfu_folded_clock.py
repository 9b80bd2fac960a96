"""The LFU stretch's evict that ranks by (hits, last use) by writing the hits into each node's last use
and never puts the old value back, named when a probe confirms it (lfu.py wraps its hand cases with
`folded_into_last_use` through probe_named.py).

Folding the count into the clock (`node.last_access = hits * 10**9 + node.last_access`) lets the base
part's LRU evict rank the leaves by hits, then by last use: the first evict is right. But the values stay
written: the next evict folds the hits in again on top, so a leaf that survived an evict ranks as if it
had twice its hits, while a leaf matched since got a small clock value back. Among leaves with equal hits
the least recently used is then no longer the first to go. The case's wrong pages look like a count lost
in a split, so the probe confirms the mistake on trees of its own (page size 2, leaves A, B, C): with no
evict before it, A (1 hit, used before C's 1 hit) goes first, as it should; after an evict(1) that freed
the unmatched B, C goes instead (so the order changed only because an evict ran); and when C has 2 hits,
A goes again (A's one hit now counts twice: it was folded in twice, not lost or reset).
"""

from __future__ import annotations

FOLDED_INTO_LAST_USE = (
    "evict must not change what it ranks by: yours writes hits * K + last use into each node's last use "
    "and never puts the old value back, so the next evict adds the hits again on top and a leaf that "
    "survived an evict outranks one with as many hits used after it. Sort by the pair (hits, last use) in "
    "the heap entry instead of writing it into the node"
)

A, B, C = [1, 1, 2, 2], [3, 3, 4, 4], [5, 5, 6, 6]  # on pages 20, 21 / 30, 31 / 40, 41


def _freed(cls, evict_between: bool, c_hits: int) -> list[int]:
    """A, B, C inserted; A matched once; [evict(1), which frees B]; C matched `c_hits` times; then
    what evict(1) frees (or evict(3) when B is still there)."""
    cache = cls(2)
    for k, ids in enumerate((A, B, C)):
        cache.insert(list(ids), [20 + 10 * k, 21 + 10 * k])
    cache.match_prefix(list(A))
    if evict_between and sorted(cache.evict(1)) != [30, 31]:
        return []  # B, unmatched, did not go first: another mistake
    for _ in range(c_hits):
        cache.match_prefix(list(C))
    return sorted(p for p in cache.evict(1 if evict_between else 3) if p not in (30, 31))


def folded_into_last_use(cls) -> str:
    """'(...)' saying what evict freed on the probe's trees when it folds the hits into the last use for
    good: A before C with no evict between, C after one, A again when C has 2 hits; else ''."""
    try:
        before = _freed(cls, False, 1)
        after = _freed(cls, True, 1)
        doubled = _freed(cls, True, 2)
    except Exception:
        return ""
    if before != [20, 21] or after != [40, 41] or doubled != [20, 21]:
        return ""
    return (
        "(on a fresh tree, page size 2, with A = [1, 1, 2, 2] on pages 20, 21, B on 30, 31 and C on 40, 41, "
        "A matched once, then C once: your evict frees A first, the least recently used. But after an "
        "evict(1) that freed the unmatched B, the same order frees C: A's hit was folded into its last use "
        "by the first evict and folded in again by the second, so it ranks as 2 hits; with C matched twice, "
        "A goes again)"
    )
