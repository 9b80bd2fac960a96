"""Exercise 6: a split made where a match or an insert ends exactly at the end of an edge.

A walk cuts an edge only when the match ends inside it. An answer that also cuts when the match
ends at the edge's end (a test like `n <= len(child.key)`) makes an upper part with the whole edge
and a lower part with an empty key and no pages, which keeps the edge's children. A later walk looks
for a child by its first page under the upper part, finds only the empty one (filed under ()), and
stops: matches come back short, and inserts hang a second copy of what is cached. The failed check
shows only those short matches, so `empty_lower_part` plays the two walks that end at an edge's end
on fresh trees of the answer's class and reads the tree through the given `Node` (`root`,
`children`, `key`).

The base part's hand cases call it from `own_hints` (tree.py), after the split's page cut
(split_pages.py). It speaks only when a node below the root has an empty key; a class that keeps
its tree some other way is not looked at.
"""

from __future__ import annotations

from typing import Any, Optional

EMPTY_LOWER_PART = (
    "split only when the match ends inside an edge; a match that ends at the edge's end takes the node "
    "whole. Cutting there leaves a lower part with an empty key (no tokens, no pages) that holds the "
    "edge's children, and a later walk, which looks for a child by its first page, no longer finds them"
)

_IDS, _PAGES = [1, 1, 2, 2], [10, 11]
_LONGER, _LONGER_PAGES = [1, 1, 2, 2, 3, 3], [10, 11, 12]
_WALKS = {
    "match": f"match_prefix({_IDS})",
    "insert": f"insert({_LONGER}, {_LONGER_PAGES})",
}


def _empty_keys(cache: Any) -> Optional[list[tuple]]:
    """The keys of the nodes whose children include a node with an empty key; None if unreadable."""
    out: list[tuple] = []
    stack = [getattr(cache, "root", None)]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if not isinstance(children, dict):
            return None
        for child in children.values():
            if not tuple(getattr(child, "key", None) or ()):
                out.append(tuple(getattr(node, "key", None) or ()))
            stack.append(child)
    return out


def _played(cls, walk: str) -> Optional[list[tuple]]:
    """After insert(_IDS) and one walk that ends at that edge's end, the keys above an empty node."""
    try:
        cache = cls(2)
        cache.insert(list(_IDS), list(_PAGES))
        if walk == "match":
            cache.match_prefix(list(_IDS))
        else:
            cache.insert(list(_LONGER), list(_LONGER_PAGES))
        return _empty_keys(cache)
    except Exception:
        return None


def empty_lower_part(cls) -> str:
    """' (...)' naming the walk after which the answer's tree holds a node with an empty key; else ''."""
    for walk, call in _WALKS.items():
        above = _played(cls, walk)
        if above:
            return (
                f" (on a fresh tree, after insert({_IDS}, {_PAGES}) and {call}, whose walk ends exactly at the end "
                f"of the edge {_IDS}, your tree holds a node with an empty key (no tokens, no pages) below the node "
                f"{list(above[0])}: the edge was split at its end)"
            )
    return ""
