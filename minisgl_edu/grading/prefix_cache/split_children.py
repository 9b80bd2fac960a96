"""Exercise 6: where a split leaves the children of the edge it cuts.

A split cuts a node's edge in two: the new upper part takes the node's place under its parent, and
the node keeps the rest of the edge as the lower part, below the upper part, with all its children.
An answer that hands the children to the upper part (`upper.children, node.children = node.children,
{}`) hangs them beside the lower part: a walk goes down through the lower part and finds no child
there, so every match past the cut stops short, and an insert adds a second copy of what is cached.
The failed check shows only that symptom (often an insert whose count is a page short, which reads
like a mistake in insert's count), so `children_moved_up` plays one split on a fresh tree of the
answer's class and reads where the child went, through the given `Node` (`root`, `children`, `key`).

The base part's hand cases ask it for any failed check (tree.own_hints), after the split's page cut
(split_pages.py). It speaks only when the child hangs under the upper part and not under the lower
part, and the answer's own match of the whole sequence then stops at the lower part. A class that
keeps its tree some other way is not looked at.
"""

from __future__ import annotations

from typing import Any, Optional

SPLIT_CHILDREN = (
    "a split leaves the node's children where they are, under the lower part (the node that keeps the rest "
    "of the edge): the upper part's only child is the lower part. Children handed to the upper part hang "
    "beside the lower part, so a walk that goes down through the lower part no longer finds them"
)

_SHORT, _SHORT_PAGES = [1, 2, 3, 4, 5, 6], [10, 11, 12]
_LONG, _LONG_PAGES = [1, 2, 3, 4, 5, 6, 7, 8], [10, 11, 12, 13]
_CUT = [1, 2, 9, 9]  # matches the first page only: cuts the edge [1..6] after (1, 2)


def child_by_key(node: Any, key: list[int]) -> Optional[Any]:
    """The child of `node` whose key is `key`, found by value (not by how it is filed); None if none."""
    children = getattr(node, "children", None)
    if not isinstance(children, dict):
        return None
    return next((c for c in children.values() if tuple(getattr(c, "key", ())) == tuple(key)), None)


def children_moved_up(cls) -> str:
    """' (...)' when a split of the answer's class moves the cut node's child up to the upper part and
    the answer's match of the whole sequence then stops at the lower part; else ''."""
    try:
        cache = cls(2)
        cache.insert(list(_SHORT), list(_SHORT_PAGES))
        cache.insert(list(_LONG), list(_LONG_PAGES))  # the leaf [7, 8] below the edge [1..6]
        edge = child_by_key(cache.root, _SHORT)
        if edge is None or child_by_key(edge, [7, 8]) is None:
            return ""  # not the tree this probe reads
        cache.match_prefix(list(_CUT))
        upper = child_by_key(cache.root, [1, 2])
        lower = child_by_key(upper, [3, 4, 5, 6]) if upper is not None else None
        if lower is None or child_by_key(upper, [7, 8]) is None or child_by_key(lower, [7, 8]) is not None:
            return ""
        _, pages = cache.match_prefix(list(_LONG))
    except Exception:
        return ""
    if list(pages) == _LONG_PAGES:
        return ""
    return (
        f" (on a fresh tree, insert({_SHORT}, {_SHORT_PAGES}) and insert({_LONG}, {_LONG_PAGES}) hang the leaf "
        f"[7, 8] below the edge {_SHORT}; match_prefix({_CUT}) cuts that edge after [1, 2], and your split hung "
        f"the leaf [7, 8] under the upper part [1, 2], beside the lower part [3, 4, 5, 6] instead of below it: "
        f"match_prefix({_LONG}) then returned pages {list(pages)}, expected {_LONG_PAGES})"
    )
