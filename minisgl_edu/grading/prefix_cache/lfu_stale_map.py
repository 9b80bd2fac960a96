"""The LFU stretch: hits counted through a map from page id to node that goes stale.

An answer that finds the nodes to count a match's hit on by looking its pages up in a map filled by
insert (page id -> the leaf made with that page) counts right until the tree changes under the map. A
split gives the upper part the first pages of the node it cuts, but the map still sends them to the
node, now the lower part; after that lower part is evicted, to a node no longer in the tree. The hit
of a match that returns the upper part's pages then goes to the wrong node, and the upper part gains
none. The failed checks read as a wrong count along a path or across a split, so
`hits_through_stale_map` plays a split, an eviction of the lower part and a match of the upper part on
a fresh tree (lfu.py wraps the hand cases with it, probe_named.py; lfu_checks.lower_part_counted leaves
it to this one); the generated phase asks `StaleMapReference` through `stale_map_hint`.
"""

from __future__ import annotations

from typing import Any, Callable

from minisgl_edu.grading.explore import made_by
from minisgl_edu.grading.prefix_cache.lfu_reference import HITS_PER_NODE, HitsByEdge, ReferenceLFURadixCache

STALE_MAP = (
    "count a match's hit on the nodes the match walked through (from the node it returns up to the root), not "
    "through a map from page id to node that insert filled: after a split the map points the upper part's pages "
    "at the lower part, and after an eviction at a node no longer in the tree, so the node whose pages the match "
    "returned gains no hit"
)

A, A_HEAD, V = [1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 2, 2, 9, 9], [5, 5, 6, 6]


def hits_through_stale_map(cls) -> str:
    """' (...)' saying what evict did when the hits of matches of the upper part U of a split edge, after
    the lower part L was evicted, did not count on U; else ''. A (pages 10..13) is cut by a match after
    two pages into U (10, 11, 1 hit) and L (12, 13, none); V (50, 51) is matched twice; evict(2) frees L
    (fewest hits); three matches of U's tokens give U 4 hits against V's 2, so evict(2) frees V. An
    answer that counts those hits elsewhere frees U. No step compares equal counts: ties are no matter."""
    try:
        cache = cls(2)
        cache.insert(list(A), [10, 11, 12, 13])
        cache.insert(list(V), [50, 51])
        cut = list(cache.match_prefix(list(A_HEAD))[1])
        for _ in range(2):
            cache.match_prefix(list(V))
        lower = sorted(cache.evict(2))
        upper = [list(cache.match_prefix(list(A[:4]))[1]) for _ in range(3)]
        freed = sorted(cache.evict(2))
    except Exception:
        return ""
    if cut != [10, 11] or lower != [12, 13] or upper != [[10, 11]] * 3 or freed != [10, 11]:
        return ""
    return (
        " (on a fresh tree, page size 2: A [1, 1, .., 4, 4] on pages 10..13, cut by a match of [1, 1, 2, 2, 9, 9] "
        "into U (10, 11) and L (12, 13); V (50, 51) matched twice; evict(2) freed L. Then match_prefix([1, 1, 2, "
        "2]) returned U's pages [10, 11] three times, so U had 4 hits against V's 2, but evict(2) freed U, not "
        "V: those matches counted their hits on another node, not on U)"
    )


class StaleMapReference(ReferenceLFURadixCache):
    """The reference with one mistake: a match counts its hit on the nodes that a map from page id to
    node names for its pages; insert fills the map for a new leaf's pages, split and evict never touch it."""

    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        self.node_of_page: dict[int, Any] = {}

    def insert(self, ids: list[int], pages: list[int]) -> int:
        before = set(self._nodes())
        k = super().insert(ids, pages)
        for node in self._nodes():
            if node not in before and not node.children:  # the new leaf (a split's upper part has a child)
                self.node_of_page.update(dict.fromkeys(node.pages, node))
        return k

    def match_prefix(self, ids: list[int]) -> Any:
        node, pages = super(ReferenceLFURadixCache, self).match_prefix(ids)  # the tree's match, no counts
        for hit in {self.node_of_page[p] for p in pages}:
            self.hits[hit] = self.hits.get(hit, 0) + 1
        return node, pages


def stale_map_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The LFU generated phase's hint for what evict freed: STALE_MAP where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), with HITS_PER_NODE first
    where the reference that keys its counts by edge gives it too (a small scene can't tell the two
    apart: both count a hit on another node than the match walked through), else `hint`'s."""
    if not issubclass(reference, ReferenceLFURadixCache):  # the base part: no counts to name
        return hint

    def either(scene: Any, diff: Any) -> str:
        if not made_by(play, StaleMapReference, reference, scene, diff):
            return hint(scene, diff)
        if made_by(play, HitsByEdge, reference, scene, diff):  # a scene that plays both mistakes alike
            return f"{HITS_PER_NODE}. If you look the nodes to count up in a map from page id to node: {STALE_MAP}"
        return STALE_MAP

    return either
