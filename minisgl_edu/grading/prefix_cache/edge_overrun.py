"""Exercise 6: a walk that counts one page past the end of an edge.

A walk that compares a child's edge with the sequence page by page must stop at the edge's end. A
loop written `while n <= len(child.key) and child.key[n:n + ps] == key[at + n:at + n + ps]` goes one
page further: past the edge's end its slice is (), and where the sequence ends there too its slice is
() as well, and () == () counts a page that is not there. match_prefix still returns the right pages
(they come from the nodes), but insert of a sequence that ends exactly where a cached edge ends
returns len(pages) + 1, a count no right answer can give. The failed check reads like a wrong idea of
what insert returns (another mistake's hint), so `walks_past_the_edge` inserts one sequence twice on
a fresh tree (base.py wraps the hand cases with it, probe_named.py); the generated phase asks
`walked_past_by`, the reference with that one mistake, through `overrun_hint`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from minisgl_edu.grading.explore import named_when_made

EDGE_OVERRUN = (
    "insert returned one page more than it was given (len(pages) + 1) for a sequence that ends exactly where "
    "a cached edge ends: your walk counts one page past the edge's end. There child.key[n:n + page_size] and "
    "the sequence's slice are both (), and () == () counts a page that is not there. Stop the page-by-page "
    "loop at the edge's end (while n < len(child.key)), not one page after it (<=)"
)


def walks_past_the_edge(cls) -> str:
    """What insert returned when, on a fresh tree, a sequence inserted a second time
    (it ends where its edge ends) came back as one page more than was given; else ''."""
    try:
        cache = cls(2)
        cache.insert([1, 2, 3, 4], [10, 11])
        k = cache.insert([1, 2, 3, 4], [20, 21])
    except Exception:
        return ""
    if k != 3 or isinstance(k, bool):
        return ""
    return (
        "On a fresh tree, page size 2, insert([1, 2, 3, 4], [10, 11]) and then insert([1, 2, 3, 4], [20, 21]) "
        "returned 3, one more than the 2 pages given: the walk counted a page past the end of the edge "
        "[1, 2, 3, 4], where the sequence ends too"
    )


@functools.cache
def walked_past_by(reference: Any) -> Any:
    """`reference` whose insert counts one page more when its sequence ends where a cached edge ends."""

    class PastTheEdge(reference):
        def _ends_at_an_edge(self, key: tuple[int, ...]) -> bool:
            node, at = self.root, 0  # down the cached path without a walk (a walk would touch it)
            while at < len(key):
                child = node.children.get(self._first(key, at))
                if child is None or key[at : at + len(child.key)] != child.key:
                    return False
                node, at = child, at + len(child.key)
            return at > 0

        def insert(self, ids: list[int], pages: list[int]) -> int:
            past = self._ends_at_an_edge(tuple(ids[: len(pages) * self.page_size]))
            return super().insert(ids, pages) + past

    return PastTheEdge


def overrun_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: EDGE_OVERRUN where the answer gives what the
    reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    return named_when_made(EDGE_OVERRUN, play, walked_past_by(reference), reference, hint)
