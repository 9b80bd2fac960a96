"""How a match counts the nodes above the one it ends at, in the LFU stretch: each gains one on its
own count. Two wrong answers leave a shared parent P with too few hits, and so look alike in
'stretch: a match counts its whole path': one counts the deepest node only (P keeps 0), the other
gives every node of the path the deepest node's count plus one (`hits[up] = hits.get(node, 0) + 1`:
P's count follows whichever child the last match went through). `path_count_probe` tells them apart
by playing the same matches in two orders (lfu_checks._expect_freed and lfu.case_path ask it); the
generated phase asks `DeepestCountCopied`, the reference with the second mistake, through
`path_count_hint`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from minisgl_edu.grading.explore import named_when_made
from minisgl_edu.grading.prefix_cache.lfu_reference import ReferenceLFURadixCache

DEEPEST_COUNT_COPIED = (
    " (your match_prefix gives every node of the path the count of the node it ends at: with P (pages 10, "
    "11) over C1 (page 12) and C2 (page 22), C1 matched 3 times and C2 once, then Q (pages 30, 31) 3 times, "
    "and C1, C2 evicted, P goes after Q when C1's matches came last but before Q when C2's match came last: "
    "P's 4 hits fell to C2's 1 plus one. A match sets each node of its path to that node's own count plus one "
    "(hits[up] = hits.get(up, 0) + 1), not to the deepest node's count plus one)"
)

DEEPEST_COUNT_HINT = (
    "a match sets each node of its path to that node's own count plus one (hits[up] = hits.get(up, 0) + 1), not "
    "to the deepest node's count plus one: a parent's hits never fall to those of the child a match went through"
)

P_C1, P_C2, Q = [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 7, 7], [8, 8, 9, 9]  # P = [1, 2, 3, 4], pages 10, 11


def _last_freed(cls, c2_last: bool) -> Optional[list[int]]:
    """C1 matched 3 times and C2 once (C2 last when `c2_last`), then Q 3 times; after evict(2) frees
    C1 and C2, what evict(1) frees: Q (pages 30, 31) when P has its 4 hits. None when the answer
    raises or the first evict frees other pages."""
    try:
        cache = cls(2)
        cache.insert(list(P_C1), [10, 11, 12])
        cache.insert(list(P_C2), [60, 61, 22])
        cache.insert(list(Q), [30, 31])
        for ids, times in [(P_C1, 3), (P_C2, 1)] if c2_last else [(P_C2, 1), (P_C1, 3)]:
            for _ in range(times):
                cache.match_prefix(list(ids))
        for _ in range(3):
            cache.match_prefix(list(Q))
        if sorted(cache.evict(2)) != [12, 22]:
            return None
        return sorted(cache.evict(1))
    except Exception:
        return None


def path_count_probe(cls) -> str:
    """'deepest count' when P's count follows the child the last match went through (P goes after Q
    when C1's matches came last, before Q when C2's came last), 'ancestors uncounted' when P goes
    before Q both ways (it has fewer hits than Q whatever the order), else ''."""
    c1_last, c2_last = _last_freed(cls, False), _last_freed(cls, True)
    if c1_last == [30, 31] and c2_last == [10, 11]:
        return "deepest count"
    if c1_last == c2_last == [10, 11]:
        return "ancestors uncounted"
    return ""


class DeepestCountCopied(ReferenceLFURadixCache):
    """The reference with one mistake: a match gives every node of its path the deepest node's count
    plus one, not that node's own count plus one."""

    def match_prefix(self, ids: list[int]) -> Any:
        node, pages = super(ReferenceLFURadixCache, self).match_prefix(ids)  # the tree's match, no counts
        up = node
        while up is not self.root:
            self.hits[up] = self.hits.get(node, 0) + 1
            up = up.parent
        return node, pages


def path_count_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The LFU generated phase's hint for what evict freed: DEEPEST_COUNT_HINT where the answer gives
    what the reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""
    if not issubclass(reference, ReferenceLFURadixCache):  # the base part: no counts to name
        return hint

    return named_when_made(DEEPEST_COUNT_HINT, play, DeepestCountCopied, reference, hint)
