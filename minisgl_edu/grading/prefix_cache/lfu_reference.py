"""The reference of exercise 6's stretch, least-frequently-used eviction: the package's radix tree
with a hit count per node. The package has no LFU cache of its own; the stretch's hand-written
cases (lfu.py) and its generated phase (scenes.py) both compare the student's class with this one.
"""

from __future__ import annotations

import heapq

from minisgl_edu.kvcache.radix_cache import RadixCache as PackageRadixCache
from minisgl_edu.kvcache.radix_cache import RadixNode


class ReferenceLFURadixCache(PackageRadixCache):
    """The stretch's reference: the package's tree, plus a hit count per node."""

    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        self.hits: dict[RadixNode, int] = {}  # nodes compare by identity (eq=False)

    def match_prefix(self, ids: list[int]) -> tuple[RadixNode, list[int]]:
        node, pages = super().match_prefix(ids)
        up = node
        while up is not self.root:  # one hit for every node on the matched path
            self.hits[up] = self.hits.get(up, 0) + 1
            up = up.parent
        return node, pages

    def _split(self, node: RadixNode, n: int) -> RadixNode:
        upper = super()._split(node, n)
        self.hits[upper] = self.hits.get(node, 0)  # both parts keep the edge's count
        return upper

    def _order(self, node: RadixNode) -> tuple[int, int, int, RadixNode]:
        return (self.hits.get(node, 0), node.last_access, node.pages[0], node)

    def evict(self, num_pages: int) -> list[int]:
        heap = [self._order(n) for n in self._leaves() if n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            node = heapq.heappop(heap)[-1]
            freed.extend(node.pages)
            self._evictable_pages -= len(node.pages)
            self.hits.pop(node, None)
            parent = node.parent
            del parent.children[self._first(node.key, 0)]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, self._order(parent))
        return freed


# The hints that name the mistakes of the reference's variants below, and the order they break.
SPLIT_IS_NO_USE = (
    "a split is not a use: both parts keep the count the node had, and the split adds none; the match "
    "that cut the edge then counts one hit on the upper part, as on every node whose pages it returns, "
    "and an insert that cuts one counts none"
)
LFU_ORDER = (
    "evict frees the unlocked leaf with the fewest hits first (a match counts one hit on every node of its "
    "path, insert none, a new leaf starts at 0, both parts of a split keep the count, whether a match or an "
    "insert cut it); among equal hits, the least recently used"
)
LFU_BY_PAGE_ID = (
    "among leaves with equal hits the least recently used goes first (every match, and an insert, uses the "
    "nodes of its path): not the one with the lower page ids, nor the one made first"
)
HITS_PER_NODE = (
    "hits belong to the node, not to its edge's tokens: two nodes whose edges hold the same tokens (at other "
    "depths, or the two parts of a split) each keep a count of their own, so keep the counts per node"
)


class SplitCountsAHit(ReferenceLFURadixCache):
    """The reference with one mistake: a split counts a hit on its upper part. A match that cuts an
    edge then counts the upper part twice, and an insert that cuts one counts a hit, which insert
    never does. The generated phase runs it to recognise that mistake in an answer."""

    def _split(self, node: RadixNode, n: int) -> RadixNode:
        upper = super()._split(node, n)
        self.hits[upper] += 1
        return upper


class TiesByPageId(ReferenceLFURadixCache):
    """The reference with one mistake: among equal hits the lower first page id goes first, not the
    least recently used."""

    def _order(self, node: RadixNode) -> tuple[int, int, int, RadixNode]:
        return (self.hits.get(node, 0), node.pages[0], node.last_access, node)


class _EdgeCounts(dict):
    """Hit counts kept under each node's edge tokens (node.key), not the node: nodes whose edges
    hold the same tokens share one count."""

    def get(self, node, default=None):
        return super().get(tuple(node.key), default)

    def __getitem__(self, node):
        return super().__getitem__(tuple(node.key))

    def __setitem__(self, node, count) -> None:
        super().__setitem__(tuple(node.key), count)

    def pop(self, node, default=None):
        return super().pop(tuple(node.key), default)


class HitsByEdge(ReferenceLFURadixCache):
    """The reference with one mistake: the hit counts are keyed by the edge's tokens, not the node,
    and a split gives the whole edge's count to both parts' keys. Two nodes with equal edges (at
    different depths, or the two halves of a split of a repeated run) share one count."""

    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        self.hits = _EdgeCounts()

    def _split(self, node: RadixNode, n: int) -> RadixNode:
        count = dict.pop(self.hits, tuple(node.key), 0)
        upper = PackageRadixCache._split(self, node, n)
        self.hits[upper] = self.hits[node] = count
        return upper


AGED_BY_EVICT = (
    "a hit counts in full for as long as its node is cached: evict() must not halve, decay or reset the "
    "counts of the nodes it keeps (no ageing); it only drops the count of a node it frees"
)


class HalvesOnEvict(ReferenceLFURadixCache):
    """The reference with one mistake, a textbook LFU ageing the contract does not ask for: every
    evict() call first halves every node's hit count."""

    def evict(self, num_pages: int) -> list[int]:
        for node in self.hits:
            self.hits[node] //= 2
        return super().evict(num_pages)


class UnlockCountsAHit(ReferenceLFURadixCache):
    """The reference with one mistake: unlock() also counts one hit on every node of its path, as if
    the end of a request's use were a use."""

    def unlock(self, node: RadixNode) -> None:
        super().unlock(node)
        while node is not self.root:
            self.hits[node] = self.hits.get(node, 0) + 1
            node = node.parent


UNLOCK_COUNTS = (
    "unlock changed a hit count: only a match counts hits (one on every node whose pages it returns); lock "
    "and unlock change lock_ref only, never a node's hits"
)
