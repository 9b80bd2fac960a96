"""Exercise 6's LFU stretch: an evict that takes the hit count off its heap entry where it needs the
node, read when the answer's code raised AttributeError in a hand case (lfu.py wraps its hand cases
with `named_by_probe`, probe_named.py).

An LFU heap entry sorts by its first fields, (hits, last use, ...), and carries the node last. Taking
`heapq.heappop(heap)[0]` gives the hit count, an int, and the next `node.pages` raises AttributeError
on every eviction. The error alone says only that an int has no `pages`, so the cause is confirmed
on fresh trees of its own: one leaf matched 3 times, then 5 times, and the int evict stumbles on
(AttributeError.obj) is that leaf's hit count each time.
"""

from __future__ import annotations

HITS_TAKEN_FOR_THE_NODE = (
    "evict took the first field of the heap entry, the hit count, where it needed the node: an entry "
    "(hits, last use, ..., node) sorts by its first fields and carries the node last, so take "
    "heapq.heappop(heap)[-1] (or unpack the whole entry) and read the pages from that node"
)


def _stumbles_on(cls, hits: int):
    """One leaf inserted and matched `hits` times, then evict(1): the object AttributeError was
    raised on, or None when evict raised no AttributeError."""
    cache = cls(2)
    cache.insert([1, 1, 2, 2], [20, 21])
    for _ in range(hits):
        cache.match_prefix([1, 1, 2, 2])
    try:
        cache.evict(1)
    except AttributeError as e:
        return e.obj
    return None


def hits_taken_for_the_node(cls) -> str:
    """What evict read a node's attribute on when it took the leaf's hit count for the
    node (confirmed with two counts); else ''."""
    try:
        got = [_stumbles_on(cls, hits) for hits in (3, 5)]
    except Exception:
        return ""
    if not all(type(x) is int for x in got) or got != [3, 5]:
        return ""
    return (
        "On a fresh tree, page size 2, with [1, 1, 2, 2] on pages 20, 21 matched 3 times, evict(1) read an "
        "attribute of the int 3, and of the int 5 after 5 matches: the leaf's hit count, taken for the leaf"
    )
