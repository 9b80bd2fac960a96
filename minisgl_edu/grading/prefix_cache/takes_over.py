"""What insert keeps of the part the tree had already: its own pages. An answer that puts the caller's
pages on the cached path ("the finished request's K/V is the freshest") and still returns k leaves the
caller freeing pages[:k] as duplicates while the tree holds them, and loses the tree's old pages. The
base part's hand cases ask `takes_over` for any failed check (tree.own_hints), the LFU stretch's where
evict freed other pages (lfu_checks.py), since there the symptom reads as a wrong count of hits; the
generated phase asks `taken_over_by`, the reference with that one mistake, through `takes_over_hint`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import named_when_made

TAKES_OVER = (
    "insert adds only the part not cached yet: the tree keeps its own pages for the first k pages, the ones it "
    "had, and takes pages[k:] only; pages[:k] stay the caller's, who frees them as duplicates (a page both "
    "cached and freed is overwritten by its next owner)"
)


def takes_over(cls) -> str:
    """' (...)' saying what the answer did when, on a fresh tree, an insert over a cached prefix put the
    caller's pages on that prefix and returned k all the same; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        k = cache.insert([1, 2, 3, 4, 5, 6], [20, 21, 22])
        cached = set(cache.cached_pages())
    except Exception:
        return ""
    if k != 2 or cached != {20, 21, 22}:
        return ""
    return (
        " (on a fresh tree, insert([1, 2, 3, 4], [10, 11]), then insert([1, 2, 3, 4, 5, 6], [20, 21, 22]) "
        "returned 2 and left pages [20, 21, 22] cached, expected [10, 11, 22]: the caller's pages 20, 21 "
        "replaced the tree's 10, 11 on the cached prefix)"
    )


@functools.cache
def taken_over_by(reference: Any) -> Any:
    """`reference` whose insert puts the caller's pages on the path it had cached, and returns k."""

    class TakesOver(reference):
        def insert(self, ids: list[int], pages: list[int]) -> int:
            k = super().insert(ids, pages)
            key, node, at = tuple(ids[: k * self.page_size]), self.root, 0
            while at < len(key):  # down the cached path without a walk (a walk would touch it)
                node = node.children[self._first(key, at)]
                at += len(node.key)
            end = k
            while node is not self.root:  # bottom up: pages[:k] take the path over
                node.pages = list(pages[end - len(node.pages) : end])
                end -= len(node.pages)
                node = node.parent
            return k

    return TakesOver


def takes_over_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for the cached pages: TAKES_OVER where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    return named_when_made(TAKES_OVER, play, taken_over_by(reference), reference, hint)
