"""Exercise 6's cases on the order of eviction: least recently used first, and what counts as a use.

Each case builds a small tree (page size 2) through the public methods and looks at what `evict`
frees: the least recently used leaf, where a match and an insert are uses (of every node they pass,
a split's upper part included, its lower part not); a parent left childless, which competes in the
same call by its own last use (before a leaf used after it, after one used before it); a prefix that
running requests lock while memory is tight (skipped, and only the pages actually freed count).
Where two mistakes free the same pages, the case asks the class a second question on a fresh tree
(a control) before it names one.
"""

from __future__ import annotations

from minisgl_edu.grading.prefix_cache.clock import check_no_clock
from minisgl_edu.grading.prefix_cache.lru_mistakes import INSERT_CUTS, edge_left_whole
from minisgl_edu.grading.prefix_cache.not_a_use import NOT_A_USE, check_not_a_use, evict_marks_used
from minisgl_edu.grading.prefix_cache.tree import (
    LRU_BY_USE,
    LRU_HINT,
    LRU_INSERT,
    LRU_MATCH,
    LRU_MATCH_PATH,
    _evict,
    _expect_pages,
    _insert,
    _match,
    _new,
)
from minisgl_edu.grading.prefix_cache.unused_leaf import check_new_leaf_used
from minisgl_edu.kvcache.radix_cache import RadixCache as reference


def case_lru(cls):
    check_no_clock(cls)
    x, y = [1, 1, 2, 2], [3, 3, 4, 4]
    nodes = {tuple(x): [[20, 21]], tuple(y): [[30, 31]]}
    xy = "[1, 1, 2, 2] (pages 20, 21) was inserted, then [3, 3, 4, 4] (pages 30, 31)"

    def two():
        cache = _new(cls)
        _insert(cache, x, [20, 21], 0, "the cache was empty")
        _insert(cache, y, [30, 31], 0, f"{y} shares nothing with {x}")
        return cache

    def expect(cache, want: list[int], story: str, hint: str = LRU_HINT) -> None:
        freed = _evict(cache, 1, nodes)
        assert sorted(freed) == want, (
            f"{story}; evict(1) freed {sorted(freed)}, expected {want}: the least recently used leaf goes "
            f"first. Hint: {hint}"
        )

    check_new_leaf_used(cls)  # else the two leaves below tie and the answer's tie-breaker decides
    expect(two(), [20, 21], f"{xy}, and neither was used since: [1, 1, 2, 2] is the older", LRU_BY_USE)
    cache = two()
    _expect_pages(cache, x, [20, 21], f"{x} is cached")
    expect(
        cache, [30, 31], f"{xy}, then match_prefix({x}) used the older one: [3, 3, 4, 4] is now the older", LRU_MATCH
    )
    cache = two()
    _expect_pages(cache, y, [30, 31], f"{y} is cached")
    expect(cache, [20, 21], f"{xy}, then match_prefix({y}) used the newer one: [1, 1, 2, 2] is still the older")
    cache = two()
    _insert(cache, x, [50, 51], 2, f"{x} was cached")
    expect(
        cache,
        [30, 31],
        f"{xy}, then insert({x}, [50, 51]) (a finished request handing the same tokens back) used it: "
        "[3, 3, 4, 4] is now the older, since insert marks the nodes it passes as used",
        LRU_INSERT,
    )
    cache = _new(cls)
    _insert(cache, [1, 1, 2, 2, 3, 3], [20, 21, 22], 0, "the cache was empty")
    _insert(cache, y, [30, 31], 0, "it shares nothing with [1, 1, 2, 2, 3, 3]")
    _insert(cache, x, [50, 51], 2, "[1, 1, 2, 2, 3, 3] was cached (pages 20, 21, 22)")
    freed = _evict(cache, 1, {(1, 1, 2, 2, 3, 3): [[20, 21], [22]], tuple(y): [[30, 31]]})
    assert 22 not in freed or len(freed) == 1, (
        f"evict(1) freed {sorted(freed)}: page 22 alone was enough. Hint: stop as soon as at least num_pages are freed"
    )
    story = (
        "[1, 1, 2, 2, 3, 3] (pages 20, 21, 22) was inserted, then [3, 3, 4, 4] (pages 30, 31), then "
        "insert([1, 1, 2, 2], [50, 51]) used pages 20, 21 but not page 22 (tokens 3, 3, which it does not "
        f"reach); evict(1) freed {sorted(freed)}, expected [22], the page used longest ago"
    )
    if sorted(freed) != [22] and _edge_left_whole(cls):
        raise AssertionError(
            f"{story}. On a fresh tree, after the first and the last of these inserts alone, evict(1) freed "
            f"{_EDGE_FREED}, one node: your insert of [1, 1, 2, 2], cached in full, did not cut the edge of pages "
            f"20, 21, 22 after page 21, and used all of it. Hint: {INSERT_CUTS}"
        )
    assert sorted(freed) == [22], f"{story}. Hint: {LRU_HINT}"
    check_not_a_use(cls)


_EDGE_FREED = [20, 21, 22]


def _edge_left_whole(cls) -> bool:
    """On a fresh tree, [1, 1, 2, 2, 3, 3] (pages 20, 21, 22), then insert([1, 1, 2, 2], [50, 51]),
    cached in full: evict(1) frees what the reference whose insert leaves that edge whole frees (the
    whole edge, _EDGE_FREED), where the reference frees page 22 only (the cut's lower part)."""

    def freed(c) -> list[int]:
        cache = _new(c)
        cache.insert([1, 1, 2, 2, 3, 3], [20, 21, 22])
        cache.insert([1, 1, 2, 2], [50, 51])
        return sorted(cache.evict(1))

    try:
        got = freed(cls)
    except Exception:
        return False  # some other mistake: the hint of the failed check names it
    return got == freed(edge_left_whole(reference)) == _EDGE_FREED != freed(reference)


def case_parent_own_use(cls):
    cache = _new(cls)
    _insert(cache, [5, 5, 6, 6, 7, 7], [60, 61, 62], 0, "the cache was empty")
    _insert(cache, [3, 3, 4, 4], [30, 31], 0, "it shares nothing with [5, 5, 6, 6, 7, 7]")
    _expect_pages(cache, [5, 5, 8, 8], [60], "the first page of [5, 5, 6, 6, 7, 7] (tokens 5, 5) is cached")
    nodes = {(5, 5, 6, 6, 7, 7): [[60], [61, 62]], (3, 3, 4, 4): [[30, 31]]}
    freed = _evict(cache, 3, nodes)
    hint = SPLIT_UPPER_USED if sorted(freed) == [60, 61, 62] and _whole_edge_parent_kept(cls) else PARENT_OWN_USE
    assert sorted(freed) == [30, 31, 61, 62], (
        "[5, 5, 6, 6, 7, 7] (pages 60, 61, 62) was inserted, then [3, 3, 4, 4] (pages 30, 31), then "
        "match_prefix([5, 5, 8, 8]) cut that edge after page 60 and used page 60 only. evict(3) freed "
        f"{sorted(freed)}, expected pages 61, 62 (used longest ago) and then 30, 31: once 61, 62 are gone, "
        f"page 60's node is a leaf, but it was used after [3, 3, 4, 4] was inserted, so it stays. Hint: {hint}"
    )
    # The shared node's last use shows only when a leaf older than it was locked meanwhile.
    cache = _new(cls)
    _insert(cache, [1, 1, 2, 2], [10, 11], 0, "the cache was empty")
    _insert(cache, [1, 1, 3, 3], [10, 12], 1, "its first page (tokens 1, 1) was cached by [1, 1, 2, 2]")
    _insert(cache, [7, 7], [20], 0, "it shares nothing with the others")
    held, _ = _match(cache, [7, 7])
    cache.lock(held)
    _expect_pages(cache, [1, 1, 2, 2], [10, 11], "[1, 1, 2, 2] is cached on pages 10, 11")
    nodes = {(1, 1, 2, 2): [[10], [11]], (1, 1, 3, 3): [[10], [12]], (7, 7): [[20]]}
    story = (
        "[1, 1, 2, 2] (pages 10, 11) and [1, 1, 3, 3] (sharing page 10, adding 12) were inserted, then [7, 7] "
        "(page 20); a running request locked the match of [7, 7], then match_prefix([1, 1, 2, 2]) used pages "
        "10, 11"
    )
    freed = _evict(cache, 2, nodes)
    assert sorted(freed) == [11, 12], f"{story}; evict(2) freed {sorted(freed)}, expected 12, then 11. Hint: {LRU_HINT}"
    cache.unlock(held)
    freed = _evict(cache, 1, {(1, 1): [[10]], (7, 7): [[20]]})
    if freed != [20]:
        check_not_a_use(cls)  # the unlock of [7, 7] may be what made it look used
    assert freed == [20], (
        f"{story}; evict(2) freed 12 and 11, leaving page 10's node childless; then the request unlocked [7, 7] "
        f"and evict(1) freed {sorted(freed)}, expected [20]: page 10 was used by match_prefix([1, 1, 2, 2]), "
        f"after [7, 7] was matched. Hint: {LRU_MATCH_PATH}"
    )
    _parent_before_a_newer_leaf(cls)


PARENT_OWN_USE = "a parent left childless joins the candidates with its own last use, not its child's"
SPLIT_UPPER_USED = (
    "a match that cuts an edge uses the upper part of the cut (page 60's node here), whose pages it returns: "
    "your match did not mark it as used, so it kept the old last use of the edge. Where a match passes a "
    "parent's whole edge (no cut), your evict keeps that parent by its own last use, as it should; mark the "
    "upper part of a cut as used too, like every node whose whole edge the match passes"
)


def _whole_edge_parent_kept(cls) -> bool:
    """Whether a parent left childless is kept by its own last use when the match that used it passed its
    whole edge (no cut): [5, 5, 6, 6, 7, 7] (pages 60, 61, 62) and [5, 5, 6, 6, 9, 9] (page 63 below 60, 61),
    then [3, 3, 4, 4] (pages 30, 31), then match_prefix([5, 5, 6, 6, 8, 8]) ends at the end of the edge of
    60, 61; evict(4) frees 62, 63 and then 30, 31. An answer that does this but lets the parent go in the
    scene where the match cut its edge leaves the upper part of the cut unused."""
    try:
        cache = _new(cls)
        cache.insert([5, 5, 6, 6, 7, 7], [60, 61, 62])
        cache.insert([5, 5, 6, 6, 9, 9], [60, 61, 63])
        cache.insert([3, 3, 4, 4], [30, 31])
        cache.match_prefix([5, 5, 6, 6, 8, 8])
        return sorted(cache.evict(4)) == [30, 31, 62, 63]
    except Exception:
        return False  # some other mistake: the case's own hint stays


OLDER_PARENT = (
    "[1, 1, 2, 2] (pages 10, 11) was inserted, then [1, 1, 2, 2, 3, 3] (which used pages 10, 11 and added page "
    "12 below them), then [5, 5] (page 50)"
)
PARENT_BY_OWN_USE = (
    "a parent left childless competes by its own last use, in the same order as every other leaf: it goes "
    "before the leaves used after it, not after all the leaves that were candidates when evict began (push it "
    "on the heap of candidates; appended to the end of a list sorted once, it comes last)"
)
PARENT_SAME_CALL = "once its last child is gone, a parent is a leaf and is evicted in the same call"


def _older_parent(cls):
    cache = _new(cls)
    _insert(cache, [1, 1, 2, 2], [10, 11], 0, "the cache was empty")
    _insert(cache, [1, 1, 2, 2, 3, 3], [10, 11, 12], 2, "its first two pages were cached by [1, 1, 2, 2]")
    _insert(cache, [5, 5], [50], 0, "it shares nothing with the others")
    return cache, {(1, 1, 2, 2, 3, 3): [[10, 11], [12]], (5, 5): [[50]]}


def _stamped_by_evict(cls) -> bool:
    """not_a_use.evict_marks_used, False when its scene goes wrong some other way."""
    try:
        return evict_marks_used(cls)
    except Exception:
        return False


def _parent_before_a_newer_leaf(cls) -> None:
    """A parent left childless whose own last use is older than another leaf's goes before that leaf.
    With the parent put last (or never in the same call), [5, 5] goes instead; which of the two shows
    when nothing else is left: evict(4) frees the parent too only if it joins in the same call."""
    cache, nodes = _older_parent(cls)
    freed = sorted(_evict(cache, 2, nodes))
    if freed == [10, 11, 12]:
        return
    hint = LRU_HINT
    if freed == [12, 50] and _stamped_by_evict(cls):  # stamped as used when it lost its child, it comes last
        hint = NOT_A_USE
    elif freed == [12, 50]:
        probe, probe_nodes = _older_parent(cls)
        hint = PARENT_BY_OWN_USE if {10, 11} <= set(_evict(probe, 4, probe_nodes)) else PARENT_SAME_CALL
    raise AssertionError(
        f"{OLDER_PARENT}; evict(2) freed {freed}, expected page 12 and then 10, 11: once page 12's node is gone, "
        "the node of pages 10, 11 is a leaf, last used by the second insert, before [5, 5] was inserted, so it "
        f"goes before [5, 5]. Hint: {hint}"
    )


def case_locked_pressure(cls):
    cache = _new(cls)
    sx, sy, z = [1, 1, 2, 2, 3, 3, 4, 4], [1, 1, 2, 2, 5, 5, 6, 6], [7, 7, 8, 8]
    _insert(cache, sx, [10, 11, 12, 13], 0, "the cache was empty")
    _insert(cache, sy, [40, 41, 22, 23], 2, f"its first two pages were cached by {sx}")
    first, _ = _match(cache, sx)  # a running request, admitted long ago
    cache.lock(first)
    _insert(cache, z, [30, 31], 0, "it shares nothing with the others")
    _expect_pages(cache, sy, [10, 11, 22, 23], f"{sy} is cached on pages 10, 11, 22, 23")
    second, pages = _match(cache, [1, 1, 2, 2, 9, 9])  # a second running request shares the prefix
    assert pages == [10, 11], f"match_prefix([1, 1, 2, 2, 9, 9]) returned {pages}, expected [10, 11]"
    cache.lock(second)
    story = (
        f"{sx} (pages 10, 11, 12, 13) was inserted and a running request locked its match; then {sy} "
        f"(sharing pages 10, 11, adding 22, 23) and {z} (pages 30, 31) were inserted, {sy} was matched, "
        "and a second running request locked the match of [1, 1, 2, 2, 9, 9] (pages 10, 11)"
    )
    nodes = {tuple(sx): [[10, 11], [12, 13]], tuple(sy): [[10, 11], [22, 23]], tuple(z): [[30, 31]]}
    assert cache.num_evictable == 4, (
        f"{story}: only pages 22, 23, 30, 31 are evictable, but num_evictable is {cache.num_evictable}"
    )
    freed = _evict(cache, 3, nodes)
    assert sorted(freed) == [22, 23, 30, 31], (
        f"{story}. Memory is tight: evict(3) freed {sorted(freed)}, expected 30, 31 and 22, 23 (the unlocked "
        "leaves, least recently used first), and pages 12, 13 kept although they are the least recently "
        "used. Hint: a locked leaf is skipped, not a reason to stop: newer unlocked leaves can still go, "
        "and only pages actually freed count towards num_pages"
    )
    assert cache.num_evictable == 0 and cache.num_cached == 4, (
        f"{story}; after evict(3) freed 4 pages, the 4 locked pages 10..13 stay cached and none is evictable: "
        f"num_cached is {cache.num_cached}, num_evictable {cache.num_evictable}"
    )
    freed = _evict(cache, 2, nodes)
    assert freed == [], f"{story}; with only locked pages left, evict(2) must free nothing, not {freed}"
    cache.unlock(first)
    freed = _evict(cache, 10, nodes)
    assert sorted(freed) == [12, 13], (
        f"{story}; once the first request unlocked its match, evict(10) may free pages 12, 13 only (the "
        f"second request still holds 10, 11), not {sorted(freed)}"
    )
    cache.unlock(second)
    freed = _evict(cache, 10, {(1, 1, 2, 2): [[10, 11]]})
    assert sorted(freed) == [10, 11], f"{story}; once both unlocked, evict(10) frees pages 10, 11, not {sorted(freed)}"
