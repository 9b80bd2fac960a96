"""State kept on the cache between calls: each call reads the tree as it is now.

Two answers save work by keeping something from an earlier call, which the calls in between make
stale. An evict that builds its heap of candidates on the first call and keeps it for the next
ones never sees a leaf inserted (or unlocked) after that first call: a later evict frees nothing
although an unlocked leaf is there. A match_prefix that remembers its last ids and answer, and gives
that answer again for the same ids, returns pages an evict has freed since (and which the allocator
hands to another request), or misses pages an insert has added.

Other mistakes show the same symptoms (evict freeing too little, a match longer than the tree), so
each probe here plays a small scene twice on fresh trees, once with the earlier call and once
without (a control), and names the mistake only when the earlier call alone makes the difference.
The base part's hand cases ask `kept_state` for any failed check (tree.own_hints); the generated
phase asks `remembered_by` and `heap_kept_by`, the reference with each mistake, through `kept_hint`.
"""

from __future__ import annotations

import functools
import heapq
from typing import Any, Callable

from minisgl_edu.grading.explore import made_by

HEAP_KEPT = (
    "evict looks at the tree as it is now, on every call: build the heap of unlocked leaves afresh each "
    "time. A heap kept on the cache from an earlier call never holds the leaves inserted, unlocked or left "
    "childless since, so evict misses them"
)
MATCH_REMEMBERED = (
    "match_prefix walks the tree as it is now, on every call: do not remember an earlier call's answer for "
    "the same ids. Between two calls an evict may have freed those pages (the allocator hands them to another "
    "request) or an insert may have cached more of the prefix"
)


def _evict_after(cls, earlier: bool) -> list[int]:
    """Page size 2: [1, 1] (page 10) inserted and, if `earlier`, evicted by evict(1) (which must free
    [10]); then [2, 2] (page 20) inserted: what evict(1) frees."""
    cache = cls(2)
    if earlier:
        cache.insert([1, 1], [10])
        if sorted(cache.evict(1)) != [10]:
            raise ValueError("the first evict did not free page 10")  # some other mistake
    cache.insert([2, 2], [20])
    return sorted(cache.evict(1))


def heap_kept(cls) -> str:
    """' (...)' telling the probe when evict(1) frees nothing after an earlier evict, and frees the same
    leaf on a fresh tree that had no earlier evict; else ''."""
    try:
        if _evict_after(cls, True) != [] or _evict_after(cls, False) != [20]:
            return ""
    except Exception:
        return ""
    return (
        " (on a fresh tree, page size 2: insert([1, 1], [10]), evict(1) freed [10], then insert([2, 2], [20]) "
        "and evict(1) freed [], though page 20's leaf is unlocked; on a fresh tree with no evict before it, the "
        "same insert and evict(1) freed [20]: your evict kept something from its earlier call)"
    )


def _match_after_evict(cls, first: list[list[int]]) -> list[int]:
    """Page size 2: [1, 1] (page 10) inserted, match_prefix of each of `first`, evict(1) (which must free
    [10]), then what match_prefix([1, 1]) returns."""
    cache = cls(2)
    cache.insert([1, 1], [10])
    for ids in first:
        cache.match_prefix(list(ids))
    if sorted(cache.evict(1)) != [10]:
        raise ValueError("evict did not free page 10")  # some other mistake
    return list(cache.match_prefix([1, 1])[1])


def match_remembered(cls) -> str:
    """' (...)' telling the probe when match_prefix([1, 1]) returns freed pages when the last match before
    the evict was of the same ids, and nothing when a match of other ids came after that one; else ''.
    (An answer whose matches pile pages up on a list of the tree returns the freed page both times.)"""
    try:
        if _match_after_evict(cls, [[1, 1]]) != [10] or _match_after_evict(cls, [[1, 1], [3, 3]]) != []:
            return ""
    except Exception:
        return ""
    return (
        " (on a fresh tree, page size 2: insert([1, 1], [10]), match_prefix([1, 1]), evict(1) freed [10], then "
        "match_prefix([1, 1]) returned [10] again, a page no longer cached; with match_prefix([3, 3]) after the "
        "first match, it returned []: your match gave back its last answer when the same ids came again)"
    )


def kept_state(cls) -> tuple[str, str]:
    """(what the probe saw, the hint) for an answer that keeps an evict heap or a match between calls;
    ('', '') for any other answer."""
    for probe, hint in ((heap_kept, HEAP_KEPT), (match_remembered, MATCH_REMEMBERED)):
        seen = probe(cls)
        if seen:
            return seen, hint
    return "", ""


@functools.cache
def remembered_by(reference: Any) -> Any:
    """`reference` whose match_prefix gives its last answer again when the same ids come back."""

    def match_prefix(self, ids: list[int]) -> Any:
        key = tuple(ids[: len(ids) // self.page_size * self.page_size])  # the whole pages, as the match reads
        last = getattr(self, "_last_match", None)
        if last is not None and last[0] == key:
            return last[1]
        got = reference.match_prefix(self, list(ids))
        self._last_match = (key, got)
        return got

    return type("RemembersMatch", (reference,), {"match_prefix": match_prefix})


@functools.cache
def heap_kept_by(reference: Any) -> Any:
    """`reference` whose evict builds its heap on the first call and keeps it for the later ones,
    skipping the entries that are no longer unlocked leaves of the tree."""

    def evict(self, num_pages: int) -> list[int]:
        if not hasattr(self, "_kept_heap"):
            self._kept_heap = [(n.last_access, id(n), n) for n in self._leaves() if n.lock_ref == 0]
            heapq.heapify(self._kept_heap)
        heap, freed = self._kept_heap, []
        while heap and len(freed) < num_pages:
            _, _, node = heapq.heappop(heap)
            parent = node.parent
            if node.children or node.lock_ref or parent.children.get(self._first(node.key, 0)) is not node:
                continue  # no longer an unlocked leaf of the tree
            freed.extend(node.pages)
            self._evictable_pages -= len(node.pages)
            del parent.children[self._first(node.key, 0)]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(heap, (parent.last_access, id(parent), parent))
        return freed

    return type("KeepsItsHeap", (reference,), {"evict": evict})


def kept_hint(play: Callable, reference: Any, hint: Callable) -> Callable:
    """The generated phase's hint for what a call returned: MATCH_REMEMBERED or HEAP_KEPT where the answer
    gives what the reference with that mistake gives (`play` drives a class through a scene), else `hint`'s."""

    def either(scene: Any, diff: Any) -> str:
        if made_by(play, remembered_by(reference), reference, scene, diff):
            return MATCH_REMEMBERED
        if made_by(play, heap_kept_by(reference), reference, scene, diff):
            return HEAP_KEPT
        return hint(scene, diff)

    return either
