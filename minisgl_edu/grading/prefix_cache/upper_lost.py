"""Exercise 6: a split whose upper part never takes the cut node's place under its parent.

A split makes the upper part, files it in the ORIGINAL parent's children under its first page (in the
node's place), and only then hangs the node, cut to the lower part, below it. An answer that re-points
`node.parent = upper` first and then writes `node.parent.children[...] = upper` files the upper part
in its own children: the old parent still lists the lower part, under a first page its key no longer
starts with, and the upper part, with the matched pages, cannot be reached from the root. The failed
checks show symptoms everywhere (matches that come back short, pages gone from the tree, evict
raising KeyError), whose hints name other mistakes, so `upper_part_lost` plays one split on a fresh
tree and reads the root's children (base.py wraps the hand cases with it, probe_named.py); the
generated phase asks `hung_under_itself`, the reference with that one mistake, through `upper_lost_hint`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import named_when_made

UPPER_NOT_HUNG = (
    "after a split the upper part must be reachable from the root: it takes the cut node's place in the "
    "ORIGINAL parent's children (under its first page), and the lower part hangs below it. In split, hang the "
    "upper part in the original parent's children before you re-point node.parent (or keep the old parent in "
    "a variable): once node.parent is the upper part, node.parent.children is the upper part's own children, "
    "so it is filed under itself while the old parent still lists the lower part"
)

_SEQ, _PAGES = [1, 2, 3, 4, 5, 6], [10, 11, 12]
_CUT = [1, 2, 9, 9]  # matches the first page only: cuts the edge [1..6] after (1, 2)


def upper_part_lost(cls) -> str:
    """What one split on a fresh tree did when the root still lists the lower part under
    the upper part's first page, not the upper part the match returned; else ''."""
    try:
        cache = cls(2)
        cache.insert(list(_SEQ), list(_PAGES))
        upper, pages = cache.match_prefix(list(_CUT))
        filed = cache.root.children.get((1, 2))
        key = tuple(filed.key)
        own = any(child is upper for child in upper.children.values())
    except Exception:
        return ""
    if list(pages) != [10] or filed is upper or key != (3, 4, 5, 6):  # the lower part still in its old place
        return ""
    where = "in its own children" if own else "in no node's children"
    return (
        f"On a fresh tree, page size 2, insert({_SEQ}, {_PAGES}) and then match_prefix({_CUT}) cut the edge "
        f"after [1, 2]: the match returned the upper part [1, 2] (page 10), but the root's children still list "
        f"the lower part [3, 4, 5, 6] under (1, 2), and the upper part is {where}: page 10 is no longer in "
        "the tree"
    )


@functools.cache
def hung_under_itself(reference: Any) -> Any:
    """`reference` whose split files the upper part in its own children, the old parent keeping the node."""

    class UnderItself(reference):
        def _split(self, node: Any, n: int) -> Any:
            parent = node.parent
            upper = super()._split(node, n)
            first = self._first(upper.key, 0)
            parent.children[first] = node  # the entry the upper part should have taken over
            children = {first: upper}  # upper.children[...] = upper, then the lower part
            children.update(upper.children)
            upper.children = children
            return upper

    return UnderItself


def upper_lost_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for the cached pages: UPPER_NOT_HUNG where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    return named_when_made(UPPER_NOT_HUNG, play, hung_under_itself(reference), reference, hint)
