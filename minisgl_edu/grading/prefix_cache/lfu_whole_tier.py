"""The LFU stretch's evict(n) that frees a whole tier of equal hits at once, named when a probe confirms it
(lfu.py wraps the hand cases with `frees_whole_tier` through probe_named.py).

An evict that, once it starts on the leaves with the fewest hits, frees every one of them before it
looks at `len(freed) < n` again goes on past n pages: with several unused leaves, evict(1) throws
away prefixes nobody asked it to free. Its wrong pages read like a wrong tie-break (both tied leaves
went), so the case's own hint would send the student after the order. The probe confirms the loop on
trees of its own, three leaves of two pages: with no hits, evict(2) frees all three (so it is not a
loop that stops only at exactly n, which stops after one leaf there); with one leaf matched once,
evict(1) frees the two unmatched leaves and keeps the matched one (so it is not an evict that frees
everything: it stops between tiers).
"""

from __future__ import annotations

WHOLE_TIER = (
    "stop as soon as at least num_pages are freed, one leaf at a time: test len(freed) < num_pages before "
    "each leaf you pop, not only once every leaf with the same hit count is gone"
)

LEAVES = ([1, 1, 2, 2], [3, 3, 4, 4], [5, 5, 6, 6])  # on pages 20, 21 / 30, 31 / 40, 41


def _tree(cls):
    cache = cls(2)  # page size 2
    for k, ids in enumerate(LEAVES):
        cache.insert(list(ids), [20 + 10 * k, 21 + 10 * k])
    return cache


def frees_whole_tier(cls) -> str:
    """'(...)' saying what evict freed on the probe's trees when it frees every leaf of the least-used
    count before it checks n: evict(2) frees all 3 unmatched leaves, and evict(1) with one leaf matched frees
    the 2 others only; else ''."""
    try:
        unmatched = sorted(_tree(cls).evict(2))
        cache = _tree(cls)
        cache.match_prefix(list(LEAVES[0]))
        tier = sorted(cache.evict(1))
    except Exception:
        return ""
    if unmatched != [20, 21, 30, 31, 40, 41] or tier != [30, 31, 40, 41]:
        return ""
    return (
        "(on 3 cached leaves of 2 pages with no hits, your evict(2) freed all 6 pages, and with one leaf "
        "matched once, evict(1) freed both unmatched leaves, 4 pages: it frees every leaf with the fewest hits "
        "before it checks how many pages it has)"
    )
