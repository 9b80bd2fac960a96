"""Exercise 6's LFU stretch: a split override that returns the lower part, read when a hand case fails
(lfu.py wraps its hand cases with `named_by_probe`, probe_named.py).

walk() takes what split() returns as the node where the match ends, so split must return the upper
part, the node that now holds the matched tokens. An override that copies the hit count to the new
upper node and then returns `node`, which after the cut is the lower part, makes a match that ends
inside an edge return the pages past the match and count its hit on the wrong node. The failed check
shows only an eviction order, which reads like a count misplaced, so `split_returns_lower` plays one
such match on a fresh tree and compares its pages with the edge's lower part.
"""

from __future__ import annotations

SPLIT_RETURNS_LOWER = (
    "split must return the upper part, the node that now holds the first n tokens: walk takes what split "
    "returns as the node where the match ends. After the cut, `node` is the lower part (the rest of the "
    "edge), so an override that returns node hands walk the pages past the match; return upper"
)


def split_returns_lower(cls) -> str:
    """What a match that ends inside an edge returned when it gave the edge's lower
    part (the pages past the match) in place of its upper part; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 1, 2, 2, 3, 3], [20, 21, 22])
        node, pages = cache.match_prefix([1, 1, 2, 2, 9, 9])
        lower = list(node.pages) == [22] and tuple(node.key) == (3, 3)
    except Exception:
        return ""
    if list(pages) != [22] or not lower:
        return ""
    return (
        "On a fresh tree, page size 2, with [1, 1, 2, 2, 3, 3] on pages 20, 21, 22, match_prefix([1, 1, 2, 2, 9, 9]) "
        "returned pages [22] and the node of key (3, 3), expected [20, 21] and the node of key (1, 1, 2, 2): the "
        "lower part of the cut edge, which the match did not reach, came back as the node it ended at"
    )
