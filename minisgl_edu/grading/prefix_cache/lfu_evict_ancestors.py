"""The LFU stretch's evict, named when it takes a freed leaf's hits off the leaf's ancestors.

The idea behind the mistake: "the matches that reached this leaf were counted on its ancestors too, so
they leave with it". But a node's count is how often a match returned its pages, and only a match
changes it: a prefix matched 4 times keeps its 4 hits when the child that 3 of those matches went on
to is evicted. With the hits taken off, the prefix is evicted before a leaf matched twice. Its wrong
pages look like those of a match that counts the deepest node only, or of a split whose upper part
starts at 0, so `docks_the_ancestors` confirms it on scenes of its own (lfu_checks._expect_freed asks
it); the generated phase asks `EvictDocksAncestors`, the reference with that one mistake, through
`docked_hint`.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Optional

from minisgl_edu.grading.explore import named_when_made
from minisgl_edu.grading.prefix_cache.lfu_reference import ReferenceLFURadixCache

DOCKED = (
    "evict changed the hit count of a node it did not free: a parent lost the hits of the child that evict "
    "freed below it. Only a match changes a count: drop the evicted node's own count, and leave its "
    "ancestors' counts as they are (they were matched that often, whatever happens to the nodes below)"
)
DOCKED_SEEN = (
    " (your evict takes a freed leaf's hits off its ancestors: P = [1, 1] (page 10) matched 4 times, 3 of them "
    "through its child C = [1, 1, 2, 2] (page 11), and Q = [5, 5] (page 50) matched twice and locked; evict(1) "
    "frees C, and once Q is unlocked your next evict(1) frees P (4 hits) before Q (2 hits), while it frees Q when "
    f"all 4 matches end at P. So P lost hits when evict freed its child: {DOCKED})"
)


def _after_the_child(cls, through: int, split: bool) -> Optional[list[int]]:
    """P (page 10) with 4 hits, `through` of them from matches that went on to its child C (page 11), and
    Q (page 50, 2 hits, locked while evict(1) frees C); then, Q unlocked, what evict(1) frees: Q when P
    kept its 4 hits. With `split`, C and P are one edge matched 3 times, cut by a match of P (P: 3 + 1
    hits, C: 3). None when the answer raises or the first evict frees another page than C's."""
    try:
        cache = cls(2)
        if split:
            cache.insert([1, 1, 2, 2], [10, 11])
        else:
            cache.insert([1, 1], [10])
            cache.insert([1, 1, 2, 2], [10, 11])
        cache.insert([5, 5], [50])
        matches = [([1, 1, 2, 2], 3), ([1, 1], 1)] if split else [([1, 1], 4 - through), ([1, 1, 2, 2], through)]
        for ids, times in matches:
            for _ in range(times):
                cache.match_prefix(list(ids))
        cache.match_prefix([5, 5])
        node, _ = cache.match_prefix([5, 5])
        cache.lock(node)
        if sorted(cache.evict(1)) != [11]:
            return None
        cache.unlock(node)
        return sorted(cache.evict(1))
    except Exception:
        return None


def docks_the_ancestors(cls) -> bool:
    """Whether P goes before Q once C is evicted, both when 3 of P's hits came through C and when a
    split gave C a copy of P's count, while with all of P's matches ending at P (the control) Q goes.
    A match that counts the deepest node only keeps the split's copy on P; a split whose upper part
    starts at 0 loses nothing without a split: neither is taken for this one."""
    control = _after_the_child(cls, 0, False)
    return control == [50] and _after_the_child(cls, 3, False) == _after_the_child(cls, 0, True) == [10]


class EvictDocksAncestors(ReferenceLFURadixCache):
    """The reference with one mistake: evict takes the hits of each node it frees off every ancestor."""

    def evict(self, num_pages: int) -> list[int]:
        heap = [self._order(n) for n in self._leaves() if n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            node = heapq.heappop(heap)[-1]
            freed.extend(node.pages)
            self._evictable_pages -= len(node.pages)
            gone = self.hits.pop(node, 0)
            up = node.parent
            while up is not self.root:  # the mistake: the freed node's hits leave its ancestors too
                self.hits[up] = self.hits.get(up, 0) - gone
                up = up.parent
            parent = node.parent
            del parent.children[self._first(node.key, 0)]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, self._order(parent))
        return freed


def docked_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The LFU generated phase's hint for what evict freed: DOCKED where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""
    if not issubclass(reference, ReferenceLFURadixCache):  # the base part: no counts to name
        return hint

    return named_when_made(DOCKED, play, EvictDocksAncestors, reference, hint)
