"""The LFU stretch's checks on small trees (page size 2), built through the public methods: a tree
of sequences that share nothing (`_fresh`), hits (`_hit`), the counts the cache manager relies on
(`_counts`), and what one evict(n) frees (`_expect_freed`), where a known wrong answer's pages name
its mistake.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

from minisgl_edu.grading.core import Mistake
from minisgl_edu.grading.prefix_cache.exact_n import STOPS_AT_EXACTLY_N, stops_only_at_exactly_n
from minisgl_edu.grading.prefix_cache.lfu_counted_only import COUNTED_ONLY, counted_leaves_only
from minisgl_edu.grading.prefix_cache.lfu_evict_ancestors import DOCKED_SEEN, docks_the_ancestors
from minisgl_edu.grading.prefix_cache.lfu_other_calls import count_changed_by
from minisgl_edu.grading.prefix_cache.lfu_path_count import DEEPEST_COUNT_COPIED, path_count_probe
from minisgl_edu.grading.prefix_cache.lfu_path_rank import PATH_RANKED, ranks_by_path
from minisgl_edu.grading.prefix_cache.lfu_shared_count import split_parts_share
from minisgl_edu.grading.prefix_cache.lfu_stale_map import hits_through_stale_map
from minisgl_edu.grading.prefix_cache.lfu_tiers import TWO_TIERS, ranks_in_two_tiers
from minisgl_edu.grading.prefix_cache.lfu_top_node import TOP_NODE_NOT_COUNTED, top_node_not_counted
from minisgl_edu.grading.prefix_cache.lfu_tree_order import TIES_BY_TREE_ORDER, ties_by_tree_order
from minisgl_edu.grading.prefix_cache.takes_over import TAKES_OVER, takes_over
from minisgl_edu.grading.prefix_cache.tree import _evict, _insert, _match, _new


def _fresh(cls, *seqs):
    """A cache with `seqs` inserted in order: (tokens, pages) pairs that share nothing."""
    cache = _new(cls)
    for ids, pages in seqs:
        _insert(cache, ids, pages, 0, "nothing of it was cached")
    return cache


def _hit(cache, ids: list[int], times: int = 1) -> None:
    for _ in range(times):
        _match(cache, ids)


def _counts(cache, cached: int, evictable: int, after: str) -> None:
    """What CacheManager.check() relies on: the counts add up to what the tree holds."""
    held = len(set(cache.cached_pages()))
    assert cache.num_cached == held == cached, (
        f"after {after}, num_cached is {cache.num_cached} and cached_pages() holds {held} pages; expected {cached}"
    )
    assert cache.num_evictable == evictable, (
        f"after {after}, num_evictable is {cache.num_evictable}, expected {evictable} (pages of unlocked nodes)"
    )


def _expect_freed(cache, n: int, nodes: dict, want: list[int], why: str, wrong: dict | None = None) -> None:
    held = set(cache.cached_pages())
    nodes = {seq: [pages for pages in path if set(pages) <= held] for seq, path in nodes.items()}
    freed = _evict(cache, n, nodes)
    if sorted(freed) == sorted(want):
        return
    # Two mistakes of the base part that change which pages go, whatever the order: name them first.
    exact, taken = stops_only_at_exactly_n(type(cache)), takes_over(type(cache))
    if exact or taken:
        raise Mistake(
            f"evict({n}) freed pages {sorted(freed)}, expected {sorted(want)}: {why}{exact or taken}",
            STOPS_AT_EXACTLY_N if exact else TAKES_OVER,
        )
    said = COUNTED_ONLY if counted_leaves_only(type(cache)) else ""  # its wrong pages look like others'
    said = said or (HITS_IN_LOCK if _hits_only_when_locked(type(cache)) else "")
    said = said or (AGED_BY_EVICT if _evict_ages_counts(type(cache)) else "")
    said = said or (DOCKED_SEEN if docks_the_ancestors(type(cache)) else "")  # a parent lost its evicted child's hits
    said = said or count_changed_by(type(cache))
    said = said or (REPEAT_COUNTED_ONCE if _repeated_match_counted_once(type(cache)) else "")
    said = said or (DEEPEST_NOT_COUNTED if _deepest_not_counted(type(cache)) else "")
    said = said or (TOP_NODE_NOT_COUNTED if top_node_not_counted(type(cache)) else "")
    said = said or (DEEPEST_COUNT_COPIED if path_count_probe(type(cache)) == "deepest count" else "")
    said = said or (TWO_TIERS if ranks_in_two_tiers(type(cache)) else "")  # its wrong pages look like others'
    said = said or (PATH_RANKED if ranks_by_path(type(cache)) else "")  # so do a leaf ranked by its path's hits
    said = said or (TIES_BY_TREE_ORDER if ties_by_tree_order(type(cache)) else "")  # ties in the walk's order
    said = said or (wrong or {}).get(tuple(sorted(freed)), "")  # a known wrong answer: its mistake is the hint
    if not said and _hits_outlive_eviction(type(cache)):
        said = HITS_OUTLIVE_THE_NODE
    if not said and _hits_weighted_by_pages(type(cache)):
        said = WEIGHTED_BY_PAGES
    raise Mistake(f"evict({n}) freed pages {sorted(freed)}, expected {sorted(want)}: {why}{said}", said.strip(" ()"))


HITS_OUTLIVE_THE_NODE = (
    " (your hit counts outlive their nodes: with [1, 1, 2, 2] matched 3 times and evicted, then inserted "
    "again (in new pages 60, 61) and [3, 3, 4, 4] matched once, your evict(2) frees [3, 3, 4, 4]'s pages: "
    "the node inserted again kept the evicted node's 3 hits. A node inserted again after eviction starts at "
    "zero hits: keep the count on the node, not in a table by key (its tokens, its path, a page, an id) "
    "that outlives it)"
)


def _hits_outlive_eviction(cls) -> bool:
    """The answer's count outlives its node: a run evicted with 3 hits and inserted again (other pages)
    beats a run matched once, while without that history (a control) the new run goes first."""

    def evicted(history: bool) -> list[int]:
        cache = cls(2)
        if history:
            cache.insert([1, 1, 2, 2], [20, 21])
            for _ in range(3):
                cache.match_prefix([1, 1, 2, 2])
            cache.evict(2)
        cache.insert([1, 1, 2, 2], [60, 61])
        cache.insert([3, 3, 4, 4], [30, 31])
        cache.match_prefix([3, 3, 4, 4])
        return sorted(cache.evict(2))

    try:
        return evicted(False) == [60, 61] and evicted(True) == [30, 31]
    except Exception:
        return False


DEEPEST_NOT_COUNTED = (
    " (your match_prefix counts hits on some nodes of the matched path but not all: the deepest node, the "
    "one it returns, gets none. With [1, 1] (page 10) and [1, 1, 2, 2] (page 11 below it) and [5, 5] (page "
    "50) cached, [1, 1, 2, 2] matched twice and [5, 5] once, your evict(1) frees page 11 first (its node "
    "has no hits) while page 10 above it kept its 2. A match counts one hit on every node whose pages it "
    "returns, the deepest included)"
)


def _deepest_not_counted(cls) -> bool:
    """Whether a match counts hits on the nodes above the deepest one but not on the deepest itself:
    with P (page 10) and its child C (page 11) matched twice and Q (page 50) once, C goes first (no
    hits, used before Q), then Q (no hits) before P (2 hits). Plain LRU frees P second, and an answer
    that counts the whole path frees Q first."""
    try:
        cache = _fresh(cls, ([1, 1], [10]), ([5, 5], [50]))
        cache.insert([1, 1, 2, 2], [10, 11])
        _hit(cache, [1, 1, 2, 2], 2)
        _hit(cache, [5, 5])
        return sorted(cache.evict(1)) == [11] and sorted(cache.evict(1)) == [50]
    except Exception:
        return False


HITS_IN_LOCK = (
    " (your hits come from lock() or unlock(), not from match_prefix: of [1, 1] (page 10) matched twice and "
    "[2, 2] (page 20) matched once, your evict(1) frees page 10 when nothing is locked, and page 20 when "
    "each match is locked and unlocked. Count the hits in match_prefix, one on each node whose pages it "
    "returns, whether or not the caller then locks what it returned)"
)


def _hits_only_when_locked(cls) -> bool:
    """Whether hits are counted by lock() or unlock() and not by match_prefix: of two one-page nodes,
    the one matched twice goes first when the matches are not locked (no hits: last use decides), and
    the one matched once goes first when each match is locked and unlocked."""

    def evicted(locking: bool) -> list[int]:
        cache = _fresh(cls, ([1, 1], [10]), ([2, 2], [20]))
        for ids in ([1, 1], [1, 1], [2, 2]):
            node = _match(cache, ids)[0]
            if locking:
                cache.lock(node)
                cache.unlock(node)
        return sorted(cache.evict(1))

    try:
        return evicted(False) == [10] and evicted(True) == [20]
    except Exception:
        return False


AGED_BY_EVICT = (
    " (your evict() changes the hit counts of the nodes it keeps: [1, 1] (page 10) matched 4 times, then [2, 2] "
    "(page 20) 3 times, and your evict(1) frees page 20, as it should; but when an evict(1) that frees another "
    "leaf ([7, 7], no hits) comes between those hits, your next evict(1) frees page 10. A hit counts in full for "
    "as long as its node is cached: evict() does not halve, decay or reset the counts (no ageing); it only drops "
    "the count of a node it frees)"
)


def _evict_ages_counts(cls) -> bool:
    """Whether evict() ages the counts of the nodes it keeps (halves them, takes one off, resets
    them...): X = [1, 1] (page 10) matched 4 times, then Y = [2, 2] (page 20) 3 times, and evict(1)
    frees Y (the control: fewer hits); the same with an evict(1) between X's hits and Y's that frees
    W = [7, 7] (page 70, no hits, made first) must free Y again, and an answer whose evict aged X's
    4 hits frees X."""

    def evicted(between: bool) -> list[int]:
        cache = _fresh(cls, *([([7, 7], [70])] if between else []), ([1, 1], [10]), ([2, 2], [20]))
        _hit(cache, [1, 1], 4)
        if between and sorted(cache.evict(1)) != [70]:
            return []
        _hit(cache, [2, 2], 3)
        return sorted(cache.evict(1))

    try:
        return evicted(False) == [20] and evicted(True) == [10]
    except Exception:
        return False


REPEAT_COUNTED_ONCE = (
    " (your hits count a match only the first time its ids are matched: of [1, 1] (page 10) matched 3 times "
    "with the same ids and [2, 2] (page 20) matched twice, your evict(1) frees page 10; when the 3 matches of "
    "[1, 1] pass different ids ([1, 1], [1, 1, 8], [1, 1, 9]: the same page), it frees page 20. Every match "
    "counts, the same ids again included: each match_prefix adds one hit on every node whose pages it "
    "returns, without remembering which ids it saw)"
)


def _repeated_match_counted_once(cls) -> bool:
    """Whether a match of ids already matched adds no hit: X = [1, 1] (page 10) matched 3 times with the
    same ids, then Y = [2, 2] (page 20) twice with different ids, and evict(1) frees X; the control,
    where X's three matches also pass different ids (the same whole page), frees Y, as it should (so an
    answer that evicts by last use only, or the most hits first, is not taken for this one)."""

    def evicted(same: bool) -> list[int]:
        cache = _fresh(cls, ([1, 1], [10]), ([2, 2], [20]))
        for ids in ([1, 1], [1, 1], [1, 1]) if same else ([1, 1], [1, 1, 8], [1, 1, 9]):
            _match(cache, ids)
        _hit(cache, [2, 2])
        _hit(cache, [2, 2, 9])
        return sorted(cache.evict(1))

    try:
        return evicted(True) == [10] and evicted(False) == [20]
    except Exception:
        return False


WEIGHTED_BY_PAGES = (
    " (your hits grow with the size of a node: of [3, 3] (page 30) matched twice and [4, 4, 5, 5, 6, 6] (pages "
    "40, 41, 42) matched once, your evict(1) frees page 30. A match counts one hit on each node of its path, "
    "+1 whatever the node holds, not its number of pages or tokens)"
)


def _hits_weighted_by_pages(cls) -> bool:
    """Whether a match counts a node's pages, not one hit: a one-page node matched twice goes before a
    three-page node matched once, while of two one-page nodes the one with fewer hits goes first (so
    an answer that evicts the most hits first, or by last use only, is not taken for this one)."""
    try:
        plain = _fresh(cls, ([1, 1], [10]), ([2, 2], [20]))
        _hit(plain, [1, 1], 2)
        _hit(plain, [2, 2])
        sizes = _fresh(cls, ([3, 3], [30]), ([4, 4, 5, 5, 6, 6], [40, 41, 42]))
        _hit(sizes, [3, 3], 2)
        _hit(sizes, [4, 4, 5, 5, 6, 6])
        return sorted(plain.evict(1)) == [20] and sorted(sizes.evict(1)) == [30]
    except Exception:
        return False


def _frees_lower_pages_first(cls, first: tuple, second: tuple) -> bool:
    """Whether ties in hits go by page id: `second` (lower page ids) made after `first` and used after
    it, so the last use and the order the nodes were made in both pick `first`; only the page ids pick
    `second`."""
    try:
        cache = _fresh(cls, first, second)
        _hit(cache, first[0])
        _hit(cache, second[0])
        return sorted(cache.evict(1)) == sorted(second[1])
    except Exception:
        return False


NEW_LEAF_AT_ZERO = "a new leaf starts at 0 hits, not its parent's; insert counts no hit, on the nodes it adds either"


def _leaf_takes_parent_hits(cls) -> bool:
    """Whether a leaf that insert adds below a node with hits starts with that node's count: P (2
    hits) gets a new leaf, page 22, and Q (1 hit) goes before it; while of two plain leaves the one
    with fewer hits goes first (an answer that evicts the most hits first frees Q for that reason).
    An answer that ranks a leaf by its path's hits frees Q too: it is not taken for this one."""
    try:
        cache = _fresh(cls, ([1, 1, 2, 2], [20, 21]))
        _hit(cache, [1, 1, 2, 2], 2)
        cache.insert([1, 1, 2, 2, 7, 7], [60, 61, 22])
        cache.insert([3, 3, 4, 4], [30, 31])
        _hit(cache, [3, 3, 4, 4])
        plain = _fresh(cls, ([5, 5], [50]), ([6, 6], [60]))
        _hit(plain, [6, 6])
        return sorted(cache.evict(1)) == [30, 31] and sorted(plain.evict(1)) == [50] and not ranks_by_path(cls)
    except Exception:
        return False


PARENT_OWN_HITS = (
    "a parent left childless joins the candidates with its own hit count, not the count of the "
    "child just evicted: a prefix many requests matched outlives its newest branch"
)


def check_parent_own_count(cls) -> None:
    """U = [1, 1] (page 10, 3 hits) gets a branch (page 11, 0 hits); R = [7, 7] (page 20) has 1 hit.
    evict(2): the branch goes, then U (3 hits) competes with R (1 hit), and R goes."""
    cache = _fresh(cls, ([1, 1], [10]))
    _hit(cache, [1, 1], 3)
    _insert(cache, [1, 1, 2, 2], [10, 11], 1, "[1, 1] was cached on page 10")
    _insert(cache, [7, 7], [20], 0, "nothing of it was cached")
    _hit(cache, [7, 7])
    nodes = {(1, 1, 2, 2): [[10], [11]], (7, 7): [[20]]}
    why = (
        "[1, 1] (page 10, 3 hits) with a branch [2, 2] (page 11, 0 hits) below it, and [7, 7] (page 20, 1 hit): "
        "the branch goes first; its parent, left childless, then competes with its own 3 hits against 1, and "
        "page 20 goes"
    )
    _expect_freed(cache, 2, nodes, [11, 20], why, {(10, 11): " (" + PARENT_OWN_HITS + ")"})


NEVER = (
    " (P never became a candidate: a parent left childless joins the leaves in the same call, ordered by its own hits)"
)
TOO_LATE = (
    " (P became a candidate only after every leaf that was one at the start: a parent left childless competes "
    "with its own hits, in order with the other leaves (pushed into the same heap), not queued after them)"
)

E, E_PAGES, E_HEAD = [1, 1, 2, 2, 3, 3, 4, 4], [10, 11, 12, 13], [1, 1, 2, 2, 9, 9]
F, F_PAGES = [5, 5, 6, 6], [50, 51]


def lower_part_counted(cls) -> str:
    """' (...)' naming the mistake of a match that counts its hit on the whole edge before cutting
    it (the lower part, whose pages it does not return, gains the hit), if the class makes it; else
    ''. E (4 pages, 1 hit) and F (2 hits, used before E): evict(2) frees E. After E_HEAD's match cuts
    E after two pages, its lower part L keeps 1 hit and goes; with the hit counted before the cut, L
    has 2, as many as F, and F, used longer ago, goes instead. An answer that ranks L by its path's
    hits (U's too) frees F as well, and so does one that counts through a stale page map: neither is taken
    for this one."""
    try:
        caches = [_fresh(cls, (E, E_PAGES), (F, F_PAGES)) for _ in range(2)]
        for cache in caches:
            _hit(cache, F, 2)
            _hit(cache, E)
        cut = list(caches[1].match_prefix(list(E_HEAD))[1])  # the upper part's pages, else another mistake
        freed = [sorted(cache.evict(2)) for cache in caches]
    except Exception:
        return ""
    if cut != E_PAGES[:2] or freed != [E_PAGES, F_PAGES] or ranks_by_path(cls) or hits_through_stale_map(cls):
        return ""  # a hit counted through a stale page map also lands on L: lfu_stale_map.py names it
    if split_parts_share(cls):
        return ""  # L gains every later hit on U too: lfu_shared_count.py names it
    return (
        " (in your tree L gained the hit of the match that cut A's edge: it was counted on the whole edge before "
        "the cut, so the lower part kept it. The match that cuts an edge counts its hit on the upper part only: "
        "count after the split, on the nodes whose pages it returns, not on the whole edge before the cut)"
    )


# A count kept in a dict by id(node) and never dropped outlives its node: CPython gives a freed object's
# memory, and so its id(), to a later object. Which later object is memory-layout luck, so the check
# below steers it: it takes the freed nodes' memory blocks back with empty objects of the node's class,
# holds every other block it took meanwhile, and hands those back just before the next insert, which
# then makes its node in one of them. Whether it did is checked (id of the node match_prefix returns).
STALE_BY_ID = (
    "a count kept by id(node) outlives its node: Python hands a freed object's id() to a later object, so "
    "a new node can inherit the hits of an evicted one. Keep the count on the node (node.hits), or drop its "
    "entry when evict removes the node"
)
OLD = [[k, k, k + 100, k + 100] for k in range(10, 18)]  # 8 sequences of 2 pages, evicted with 3 hits each
Z, Z_PAGES, Y, Y_PAGES = [7, 7, 8, 8], [40, 41], [3, 3, 4, 4], [30, 31]


@contextmanager
def _freed_memory_first(kind: type, ids: set[int], limit: int = 50_000) -> Iterator[None]:
    """While the block runs, the memory blocks of the freed objects `ids` are the first that CPython
    hands out for objects of `kind`'s size (best effort: nothing changes where that cannot be done)."""
    held, found, was_on = [], [], gc.isenabled()
    gc.collect()
    gc.disable()  # no collection frees other blocks on top of them meanwhile
    try:
        for _ in range(limit):
            obj = object.__new__(kind)
            (found if id(obj) in ids else held).append(obj)
            if len(found) == len(ids):
                break
    except Exception:
        pass
    obj = None
    found.clear()  # on top of the free lists now, while `held` keeps the other blocks taken
    try:
        yield
    finally:
        held.clear()
        if was_on:
            gc.enable()


def _recycled_run(cls, hits: int) -> tuple[list[int], bool]:
    """OLD inserted, each matched `hits` times, all evicted; Z inserted (its node made in their freed
    memory), Y inserted, Z matched once, Y twice; then evict(2). Returns what it freed and whether Z's
    node has the id of an evicted node."""
    cache = _fresh(cls, *[(seq, [2 * k, 2 * k + 1]) for k, seq in enumerate(OLD)])
    ids, kind = set(), None
    for seq in OLD:
        for _ in range(hits):
            node = _match(cache, seq)[0]
            ids.add(id(node))
            kind = type(node)
    node = None
    _evict(cache, 2 * len(OLD), {tuple(seq): [[2 * k, 2 * k + 1]] for k, seq in enumerate(OLD)})
    if kind is not None:
        with _freed_memory_first(kind, ids):
            _insert(cache, Z, Z_PAGES, 0, "every earlier sequence was evicted")
    else:
        _insert(cache, Z, Z_PAGES, 0, "every earlier sequence was evicted")
    _insert(cache, Y, Y_PAGES, 0, "Y shares nothing")
    reused = id(_match(cache, Z)[0]) in ids
    _hit(cache, Y, 2)
    return sorted(cache.evict(2)), reused


def check_recycled_ids(cls) -> None:
    """Whether a new node inherits the hits of an evicted node whose id() it got. Raises only when
    it did (the id is the same, the eviction wrong) and the same calls with no hits on the evicted
    nodes evict right: a mistake that is not about stale counts is left to the checks that name it."""
    for _ in range(3):  # until the new node got an evicted node's id
        freed, reused = _recycled_run(cls, 3)
        if not reused:
            continue
        if freed != Z_PAGES and _recycled_run(cls, 0)[0] == Z_PAGES:
            raise Mistake(
                f"evict(2) freed pages {freed}, expected {Z_PAGES}: 8 sequences were matched 3 times each and "
                f"evicted; then Z (pages 40, 41) was inserted, a new node, and matched once, and Y (pages 30, 31) "
                "matched twice, so Z (1 hit) goes before Y (2). Your node for Z was made in the memory of an "
                "evicted node, so id() gave it that node's id, and it counted that node's hits too (with no "
                "hits on the evicted nodes, the same calls evict Z)",
                STALE_BY_ID,
            )
        return
