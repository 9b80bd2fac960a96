"""The LFU stretch's match_prefix, named when its count stops below the top node of the path
(lfu_checks._expect_freed asks `top_node_not_counted` before the hints of its cases' known wrong pages).

An answer that walks up the path with `while up.parent is not self.root` stops one node early: the node
right below the root never gets a hit. Its evict then looks like plain LRU on one-edge prefixes, so the
probe confirms it on two small trees of its own: two leaves right under the root, X matched 3 times and
then Y once, evict(1) frees X (neither was counted); the same two leaves one edge deeper, under a shared
page, evict(1) frees Y (the leaves are counted there, so it is not plain LRU).
"""

from __future__ import annotations

TOP_NODE_NOT_COUNTED = (
    " (your match_prefix gives no hit to the node right below the root: two leaves under the root, "
    "X matched 3 times then Y once, evict(1) frees X as if neither was counted; the same leaves under a "
    "shared first page, it frees Y. Walk up the path until the root itself, counting the top node too: "
    "a loop that tests up.parent against the root stops one node early)"
)


def _frees(cls, shared: list[int]) -> list[int]:
    """Leaves X (page 20) and Y (page 30) below `shared` (page 10 if any): X matched 3 times, then Y
    once; the pages evict(1) frees."""
    cache = cls(2)
    head = [10] if shared else []
    cache.insert(shared + [1, 1], head + [20])
    cache.insert(shared + [3, 3], head + [30])
    for _ in range(3):
        cache.match_prefix(shared + [1, 1])
    cache.match_prefix(shared + [3, 3])
    return sorted(cache.evict(1))


def top_node_not_counted(cls) -> bool:
    """Under the root evict(1) frees the most matched leaf; one edge deeper, the least matched."""
    try:
        return _frees(cls, []) == [20] and _frees(cls, [7, 7]) == [30]
    except Exception:
        return False
