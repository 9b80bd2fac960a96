"""Subclasses the package's RadixCache and changes only evict. The tree, the matches, the splits
and the locks are then the package's, not the student's own code."""

from __future__ import annotations

import heapq

from minisgl_edu.kvcache.radix_cache import RadixCache

MUST_FAIL = {"stretch: fewest hits go first", "stretch: locked nodes stay, whatever their count"}
MUST_SAY = "not your own code"
CAUGHT_BY = {"hand", "generated"}


class LFURadixCache(RadixCache):
    def __init__(self, page_size: int) -> None:
        super().__init__(page_size)
        self.hits = {}

    def match_prefix(self, ids):
        node, pages = super().match_prefix(ids)
        up = node
        while up is not self.root:
            self.hits[id(up)] = self.hits.get(id(up), 0) + 1
            up = up.parent
        return node, pages

    def evict(self, num_pages):
        heap = [(self.hits.get(id(n), 0), n.last_access, n.pages[0], n) for n in self._leaves() if n.lock_ref == 0]
        heapq.heapify(heap)
        freed = []
        while heap and len(freed) < num_pages:
            node = heapq.heappop(heap)[-1]
            freed.extend(node.pages)
            self._evictable_pages -= len(node.pages)
            parent = node.parent
            del parent.children[node.key[: self.page_size]]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (self.hits.get(id(parent), 0), parent.last_access, parent.pages[0], parent))
        return freed


HINT_SAYS = "write the answer without calling, subclassing or keeping"
