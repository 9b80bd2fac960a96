"""The LFU stretch: the two parts of a split share one counter. An answer that keeps each node's hits
in a mutable cell (a one-element list, a small object) bumped in place, and on a split gives the upper
part the cut node's cell itself instead of a copy of its number, has both parts start with the edge's
count, as the contract says, but then every hit on one part also counts on the other.

The split case's checks then read as the hit of the splitting match counted on the whole edge before
the cut (lfu_checks.lower_part_counted leaves this mistake to this module). What tells the two apart
is a hit after the split: `split_parts_share` matches the upper part again, with no cut, and looks
whether the lower part gained it. lfu.py wraps the hand cases with it (probe_named.py).
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.lfu_path_rank import ranks_by_path
from minisgl_edu.grading.prefix_cache.lfu_stale_map import hits_through_stale_map
from minisgl_edu.grading.prefix_cache.tree import _insert, _match, _new

SHARED_COUNT = (
    "after a split, a hit on the upper part also counted on the lower part: the two parts share one counter. "
    "Both parts start with the count the edge had, but from then on each keeps its own: copy the number "
    "(an int count, or a new cell holding the same value), not the counter object"
)

E, E_PAGES, E_HEAD = [1, 1, 2, 2, 3, 3, 4, 4], [10, 11, 12, 13], [1, 1, 2, 2, 9, 9]
F, F_PAGES = [5, 5, 6, 6], [50, 51]


def _split_then_evict(cls, head_matches: int) -> list[int]:
    """What evict(2) frees after F's two hits and `head_matches` matches of E_HEAD (the first one cuts E)."""
    cache = _new(cls)
    _insert(cache, E, E_PAGES, 0, "the cache was empty")
    _insert(cache, F, F_PAGES, 0, "it shares nothing with the sequence cached")
    for ids in [F, F] + [E_HEAD] * head_matches:
        _match(cache, ids)
    return sorted(cache.evict(2))


def split_parts_share(cls) -> str:
    """What evict did on a fresh tree when later hits on a split's upper part counted on its lower
    part too; else ''. E (4 pages, no hit) and F (2 hits); E_HEAD's match cuts E after two pages (U, L),
    then matches U twice more. L has no hit, F 2: evict(2) frees L. With one shared counter L has 3 and
    F goes. A control matches E_HEAD once only (L 0 hits, or 1 shared, against F's 2): there L must go,
    so an answer that frees the most hits first is not taken for this one; nor is one that ranks L by its
    path's hits, or counts through a stale page map (both free F as well)."""
    try:
        freed = [_split_then_evict(cls, n) for n in (1, 3)]
    except Exception:
        return ""
    if freed != [E_PAGES[2:], F_PAGES] or ranks_by_path(cls) or hits_through_stale_map(cls):
        return ""
    return (
        f"On a fresh tree, page size 2, {E} (pages 10..13) and {F} (pages 50, 51, matched twice), then {E_HEAD} "
        "matched three times (the first match cut the edge after pages 10, 11), evict(2) freed [50, 51], not the "
        "lower part [12, 13], which no match returned: the upper part's hits landed on it too"
    )
