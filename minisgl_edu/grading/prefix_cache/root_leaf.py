"""What evict unhooks: every leaf it frees, the root's children too. An answer that puts the unhooking
(`del parent.children[...]`) under `if parent is not self.root:`, the test meant only for pushing the
parent as a new candidate (the root itself is never evicted), frees a leaf that hangs right under the
root but leaves it in the tree: its pages go back to the allocator while match_prefix still returns
them, so a new request reads pages another one now writes. The base part's hand cases ask
`root_leaf_kept` for any failed check (tree.own_hints); the generated phase asks `root_leaf_kept_by`,
the reference with that one mistake, through `root_leaf_hint`.
"""

from __future__ import annotations

import functools
import heapq
from typing import Any, Callable

from minisgl_edu.grading.explore import named_when_made

ROOT_LEAF_KEPT = (
    "unhook every leaf you free from its parent's children, the root's children too: only the root itself is "
    "never evicted, so only pushing the parent as a new candidate waits for `parent is not self.root`. A freed "
    "leaf left in the tree is matched again while the allocator hands its pages to a new request"
)


def root_leaf_kept(cls) -> str:
    """' (...)' saying what evict did when, on fresh trees, a freed leaf under the root stayed in the tree
    while a freed leaf under another node left it; else ''."""
    try:
        deep = cls(2)  # page size 2
        deep.insert([1, 2, 3, 4], [10, 11])
        deep.insert([1, 2, 3, 4, 5, 6], [10, 11, 12])  # a leaf on page 12 below the node of pages 10, 11
        deep_freed, deep_after = deep.evict(1), set(deep.cached_pages())
        top = cls(2)
        top.insert([1, 2, 3, 4], [10, 11])  # one leaf, right under the root
        top_freed, top_after = top.evict(2), set(top.cached_pages())
        matched = list(top.match_prefix([1, 2, 3, 4, 5])[1])
    except Exception:
        return ""
    # the deeper leaf must leave the tree as it should: then it is the root's child alone that stays
    if sorted(deep_freed) != [12] or deep_after != {10, 11}:
        return ""
    if sorted(top_freed) != [10, 11] or top_after != {10, 11}:
        return ""
    return (
        " (on a fresh tree, insert([1, 2, 3, 4], [10, 11]), then evict(2) returned [10, 11] but the tree still "
        f"holds them: match_prefix([1, 2, 3, 4, 5]) then returned {matched}, pages now free. A leaf under "
        "another node (page 12 below 10, 11) did leave the tree: only the root's children stay hooked)"
    )


@functools.cache
def root_leaf_kept_by(reference: Any) -> Any:
    """`reference` whose evict frees a leaf right under the root without taking it out of the tree."""

    def evict(self, num_pages: int) -> list[int]:
        heap = [(n.last_access, id(n), n) for n in self._leaves() if n.lock_ref == 0]
        heapq.heapify(heap)
        freed: list[int] = []
        while heap and len(freed) < num_pages:
            _, _, node = heapq.heappop(heap)
            freed.extend(node.pages)
            parent = node.parent
            if parent is not self.root:  # the mistake: the unhooking waits for the parent test too
                self._evictable_pages -= len(node.pages)
                del parent.children[self._first(node.key, 0)]
                if not parent.children and parent.lock_ref == 0:
                    heapq.heappush(heap, (parent.last_access, id(parent), parent))
        return freed

    return type("KeepsRootLeaves", (reference,), {"evict": evict})


def root_leaf_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for the cached pages: ROOT_LEAF_KEPT where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    return named_when_made(ROOT_LEAF_KEPT, play, root_leaf_kept_by(reference), reference, hint)
