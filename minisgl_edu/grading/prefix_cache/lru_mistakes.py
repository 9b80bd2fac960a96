"""Exercise 6's reference with one mistake made on purpose, for the hints that name that mistake.

A hint that names a mistake is shown only where the answer behaves as the reference with that one
mistake does: the generated phase asks `explore.made_by` with these classes, and the hand-written
case on what an insert uses (eviction.py) plays the same few calls on the answer, on the reference
and on the mistaken reference.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def all_or_nothing(reference: Any) -> Any:
    """The reference with one mistake: evict(n) frees nothing when fewer than n pages are evictable."""

    def evict(self, num_pages: int) -> list[int]:
        return [] if num_pages > self.num_evictable else reference.evict(self, num_pages)

    return type("AllOrNothing", (reference,), {"evict": evict})


INSERT_CUTS = (
    "insert cuts a cached edge where the sequence ends, also when the whole sequence is cached already: the "
    "part of the edge past it is not used by that call and keeps its last use"
)


@functools.cache
def edge_left_whole(reference: Any) -> Any:
    """`reference` whose insert of a sequence cached in full cuts no edge and uses every node it reaches."""

    class EdgeLeftWhole(reference):
        def insert(self, ids: list[int], pages: list[int]) -> int:
            key, node, at, reached = tuple(ids[: len(pages) * self.page_size]), self.root, 0, []
            while at < len(key) and (child := node.children.get(self._first(key, at))) is not None:
                n = min(self._common_len(child.key, key[at:]), len(key) - at)
                reached.append(child)
                at, node = at + n, child
                if n < len(child.key):
                    break
            if at < len(key):
                return super().insert(ids, pages)
            for n in reached:
                n.touch()
            return len(pages)

    return EdgeLeftWhole
