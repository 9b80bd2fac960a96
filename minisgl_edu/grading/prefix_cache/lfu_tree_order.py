"""How evict breaks a tie in hits, in the LFU stretch: by last use, the least recently used first. An
answer that sorts the leaves by hits alone, with a stable sort over its own tree walk (`self.nodes()`),
leaves equal counts in the order the walk lists them, whichever was used longer ago. Its wrong pages
look like a tie broken by the most recent use, by age or by page id, so `ties_by_tree_order` confirms it
on scenes of its own; lfu_checks._expect_freed names it before the known wrong answers of each case.
"""

from __future__ import annotations

TIES_BY_TREE_ORDER = (
    " (your evict breaks a tie in hits by the order your tree walk lists the leaves: of leaves with one hit "
    "each, it frees the one self.nodes() lists first, whichever was used longer ago. Order the leaves by "
    "(hits, last use): sorted() with a key of hits alone is stable, so equal counts stay in the walk's order)"
)

# Three trees of page size 2, each with two leaves: the inserts in order (tokens, pages), then each
# leaf as (the tokens a match uses it by, its own pages). The first leaf is the one the order the nodes
# were made in, and the page ids, pick: a walk that lists the leaves in another order shows on at least
# one tree, whether it goes depth first (by a stack or by recursion) or breadth first.
_P = [1, 1, 2, 2]
_X, _Y, _C = ([1, 1, 2, 2], [20, 21]), ([3, 3, 4, 4], [30, 31]), (_P + [5, 5], [12])
_TREES = [
    ([_X, _Y], _X, _Y),
    ([(_P, [10, 11]), ([3, 3, 4, 4], [20, 21]), (_P + [5, 5], [60, 61, 40])], ([3, 3, 4, 4], [20, 21]), (_C[0], [40])),
    ([(_P, [10, 11]), (_P + [5, 5], [60, 61, 12]), _Y], _C, _Y),
]


def _first_leaf(cache) -> list[int]:
    """The pages of the first leaf the cache's own nodes() lists."""
    return sorted(next(n.pages for n in cache.nodes() if not n.children and n.pages))


def ties_by_tree_order(cls) -> bool:
    """Whether, of two leaves with one hit each, evict(1) frees the leaf the answer's own nodes() lists
    first, on every tree and in both orders of use; while at least once that is not the least recently
    used leaf (so a right answer is not taken for this one), and at least once not the leaf made first
    with the lower page ids (so a tie broken by age or page id is not taken for this one either)."""
    not_lru = not_first_made = False
    try:
        for inserts, first_made, other in _TREES:
            for used in ([first_made, other], [other, first_made]):
                cache = cls(2)
                for ids, pages in inserts:
                    cache.insert(ids, pages)
                for ids, _ in used:
                    cache.match_prefix(ids)
                walk_first = _first_leaf(cache)
                if sorted(cache.evict(1)) != walk_first:
                    return False
                not_lru |= walk_first != used[0][1]
                not_first_made |= walk_first != first_made[1]
    except Exception:
        return False
    return not_lru and not_first_made
