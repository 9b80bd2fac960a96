"""Exercise 6, stretch — least-frequently-used eviction, which this engine does not have: a class
`cls(page_size)` with the radix cache's interface (`match_prefix`, `lock`, `unlock`, `insert`,
`evict`, `num_evictable`, `num_cached`, `cached_pages`) whose `evict(n)` frees the unlocked leaves
with the fewest hits first.

The contract, as the notebook states it: every `match_prefix` adds one hit to each node whose pages
it returns (the whole matched path, not only its deepest node); `insert` adds none. When an edge is
split, both parts keep the hit count it had (the match that split it then adds one to the upper
part). `evict` orders the unlocked leaves by (hits, last use), fewest hits first and, among equal
hits, the least recently used first (a final tie, which the tree never produces, goes to the
smaller first page id); a parent left childless joins them with its own count. SGLang's
`--radix-eviction-policy lfu` orders by the same pair (`LFUStrategy`: `(hit_count,
last_access_time)`).

The grader's reference is `ReferenceLFURadixCache` in lfu_reference.py (the package has none to copy). The unit
cases build small trees (page size 2) through the public methods; then the class runs inside a
`CacheManager` with few pages, where which prefixes survive decides each admission's prefix hit;
last, inside the real engine (its run in lfu_engine.py), where the LFU order keeps a prompt that
three requests used and the package's LRU order does not.

Graded on its own score line ("prefix_cache_lfu"), so the base exercise's score is unchanged.
"""

from __future__ import annotations

from minisgl_edu.grading.core import Case, Mistake, expect
from minisgl_edu.grading.harness import remember, require_passing
from minisgl_edu.grading.prefix_cache.leaf_again import LEAF_PUSHED_AGAIN, leaf_pushed_again
from minisgl_edu.grading.prefix_cache.lfu_checks import (
    NEVER,
    NEW_LEAF_AT_ZERO,
    TOO_LATE,
    _counts,
    _expect_freed,
    _frees_lower_pages_first,
    _fresh,
    _hit,
    _leaf_takes_parent_hits,
    check_parent_own_count,
    check_recycled_ids,
    lower_part_counted,
)
from minisgl_edu.grading.prefix_cache.lfu_engine import ENGINE_PAGES, ENGINE_REQUESTS, _reference_run, _run
from minisgl_edu.grading.prefix_cache.lfu_folded_clock import FOLDED_INTO_LAST_USE, folded_into_last_use
from minisgl_edu.grading.prefix_cache.lfu_heap_entry import HITS_TAKEN_FOR_THE_NODE, hits_taken_for_the_node
from minisgl_edu.grading.prefix_cache.lfu_insert_override import insert_counted
from minisgl_edu.grading.prefix_cache.lfu_other_calls import count_changed_by
from minisgl_edu.grading.prefix_cache.lfu_path_count import path_count_probe
from minisgl_edu.grading.prefix_cache.lfu_reference import ReferenceLFURadixCache
from minisgl_edu.grading.prefix_cache.lfu_shared_count import SHARED_COUNT, split_parts_share
from minisgl_edu.grading.prefix_cache.lfu_split_return import SPLIT_RETURNS_LOWER, split_returns_lower
from minisgl_edu.grading.prefix_cache.lfu_stale_map import STALE_MAP, hits_through_stale_map
from minisgl_edu.grading.prefix_cache.lfu_unmatched import NO_COUNT_YET, no_count_for_unmatched
from minisgl_edu.grading.prefix_cache.lfu_whole_tier import WHOLE_TIER, frees_whole_tier
from minisgl_edu.grading.prefix_cache.probe_named import named_by_probe
from minisgl_edu.grading.prefix_cache.scenes import SPLIT_IS_NO_USE, tree_case
from minisgl_edu.grading.prefix_cache.split_pages import SPLIT_PAGES, split_pages_wrong
from minisgl_edu.grading.prefix_cache.tree import POOL_PAGES, _evict, _insert, _match, _play, _workload
from minisgl_edu.kvcache.radix_cache import RadixCache as PackageRadixCache

X, X_PAGES = [1, 1, 2, 2], [20, 21]
Y, Y_PAGES = [3, 3, 4, 4], [30, 31]
Z, Z_PAGES = [5, 5, 6, 6], [40, 41]
XY = {tuple(X): [X_PAGES], tuple(Y): [Y_PAGES]}
XYZ = {**XY, tuple(Z): [Z_PAGES]}


# ---------------------------------------------------------------------------- unit cases
def case_fewest_hits(cls):
    lru = (
        " (you evicted X, the least recently used leaf, as plain LRU does; it is also the most used one. "
        "Order by hits first: recency only breaks ties)"
    )
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _hit(cache, X)
    _hit(cache, Y, 3)
    _expect_freed(
        cache,
        1,
        XY,
        X_PAGES,
        "X was matched once, Y 3 times since: X has the fewest hits",
        {tuple(Y_PAGES): " (you evicted Y, the most frequently used leaf: the fewest hits go first)"},
    )
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _hit(cache, X, 2)
    _hit(cache, X + [9])  # 5 tokens: the two whole pages of X match
    _hit(cache, Y)
    _expect_freed(
        cache,
        1,
        XY,
        Y_PAGES,
        "X was matched 3 times long ago, Y once just now: the leaf with the fewest hits goes first (Y), "
        "however recently it was used",
        {tuple(X_PAGES): lru},
    )
    _counts(cache, 2, 2, "evicting Y")
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _hit(cache, Y, 3)
    _hit(cache, X)
    _expect_freed(
        cache,
        1,
        XY,
        X_PAGES,
        "the same with the roles swapped: Y was matched 3 times long ago, X once just now, so X goes first",
        {tuple(Y_PAGES): lru.replace("evicted X", "evicted Y")},
    )
    _counts(cache, 2, 2, "evicting X")


PAGE_IDS = " (X has the lower page ids but was used after Y: with equal hits the last use decides, not the page ids)"
AGE = " (X was made before Y but used after it: with equal hits the last use decides, not the order the nodes were made in)"


def case_ties(cls):
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _hit(cache, X)
    _hit(cache, Y)
    tie = " (with equal hits, the least recently used goes first, not the most recently used)"
    _expect_freed(
        cache,
        1,
        XY,
        X_PAGES,
        "X and Y have one hit each and X was used earlier: a tie in hits goes to the least recently used",
        {tuple(Y_PAGES): tie},
    )
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _hit(cache, Y)
    _hit(cache, X)
    _expect_freed(
        cache,
        1,
        XY,
        Y_PAGES,
        "one hit each, Y used earlier this time: Y goes first",
        {tuple(X_PAGES): PAGE_IDS if _frees_lower_pages_first(cls, (Y, Y_PAGES), (X, X_PAGES)) else AGE},
    )
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES))
    _insert(cache, X, [50, 51], 2, "X is cached")  # a use, not a hit
    _expect_freed(
        cache,
        1,
        XY,
        Y_PAGES,
        "no hits on either; X was inserted again after Y, which marks it used (as in the base part): "
        "Y is the least recently used",
        {tuple(X_PAGES): AGE},
    )
    _counts(cache, 2, 2, "evicting Y")


P_C1 = [1, 2, 3, 4, 5, 6]  # P = [1, 2, 3, 4] (pages 10, 11), then C1 = [5, 6] (page 12)
P_C2 = [1, 2, 3, 4, 7, 7]  # then C2 = [7, 7] (page 22)
Q, Q_PAGES = [8, 8, 9, 9], [30, 31]
PATH_NODES = {tuple(P_C1): [[10, 11], [12]], tuple(P_C2): [[10, 11], [22]], tuple(Q): [Q_PAGES]}


def case_path(cls):
    cache = _fresh(cls, (P_C1, [10, 11, 12]))
    _insert(cache, P_C2, [60, 61, 22], 2, "its first two pages are P's")
    _insert(cache, Q, Q_PAGES, 0, "Q shares nothing")
    _hit(cache, P_C1, 2)
    _hit(cache, P_C2, 2)
    _hit(cache, Q, 3)
    _expect_freed(
        cache,
        2,
        PATH_NODES,
        [12, 22],
        "the leaves C1 and C2 have 2 hits each, Q has 3: both one-page leaves go first",
    )
    _counts(cache, 4, 4, "evicting C1 and C2")
    _expect_freed(
        cache,
        1,
        PATH_NODES,
        Q_PAGES,
        "P (pages 10, 11) was passed by all 4 matches on their way to C1 and C2, so it has 4 hits, Q has 3: "
        "Q goes first",
        {  # named only when P has fewer hits than Q whichever child the last match went through
            (10, 11): " (P has fewer hits in your tree: a match counts one hit for every node whose pages it "
            "returns, the ancestors of the deepest node too, not only the node it ends at)"
            if path_count_probe(cls) == "ancestors uncounted"
            else ""
        },
    )
    _counts(cache, 2, 2, "evicting Q")


A = [1, 2, 3, 4, 5, 6, 7, 8]  # pages 10..13
A_HEAD = [1, 2, 3, 4, 9, 9]  # matches A's first two pages: splits A into U (10, 11) and L (12, 13)
V, V_PAGES = [5, 5, 6, 6], [50, 51]
W = [1, 2, 3, 4, 7, 7]
SPLIT_NODES = {tuple(A): [[10, 11], [12, 13]], tuple(V): [V_PAGES], tuple(W): [[10, 11], [72]]}


U_LOST = " (U has fewer hits in your tree: the upper part of a split keeps the count of the edge it was cut from)"
U_SPLIT_HIT = f" (U had a hit in your tree, as many as V, and V was used longer ago: {SPLIT_IS_NO_USE})"


def case_split(cls):
    cache = _fresh(cls, (A, [10, 11, 12, 13]), (V, V_PAGES))
    _hit(cache, A, 3)
    _hit(cache, V, 2)
    _hit(cache, A_HEAD)  # U: 3 + 1 hits, L: 3 hits
    _expect_freed(
        cache,
        2,
        SPLIT_NODES,
        V_PAGES,
        "A had 3 hits when a match split its edge after two pages: the lower part L (pages 12, 13) keeps "
        "those 3 hits, V has 2, so V goes first",
        {(12, 13): " (L lost its hits in the split: both parts of a split keep the count the edge had)"},
    )
    cache = _fresh(cls, (A, [10, 11, 12, 13]), (V, V_PAGES))
    _hit(cache, A, 3)
    _hit(cache, V, 3)
    _hit(cache, A_HEAD)  # U: 4 hits, used just now; L: 3 hits, used before V
    why = "L and V have 3 hits each and L was used before V: L goes first"
    _expect_freed(cache, 2, SPLIT_NODES, [12, 13], why, {tuple(V_PAGES): lower_part_counted(cls)})
    _expect_freed(
        cache,
        2,
        SPLIT_NODES,
        V_PAGES,
        "the upper part U (pages 10, 11) kept A's 3 hits and the splitting match added one: 4 hits against "
        "V's 3, so V goes first",
        {(10, 11): U_LOST},
    )
    _counts(cache, 2, 2, "evicting L and V")
    cache = _fresh(cls, (A, [10, 11, 12, 13]), (V, V_PAGES))
    _hit(cache, A, 3)
    _hit(cache, V, 4)
    _hit(cache, A_HEAD)  # U: 3 + 1 hits, as many as V, and used after it
    _expect_freed(cache, 2, SPLIT_NODES, [12, 13], "L has 3 hits, U and V 4: L goes first")
    _expect_freed(
        cache,
        2,
        SPLIT_NODES,
        V_PAGES,
        "U (pages 10, 11) kept A's 3 hits and the match that cut it added one: 4, as many as V, and U was "
        "used after V, so V goes first",
        {
            (10, 11): " (U has fewer hits in your tree: the match that cut the edge returned U's pages, so it "
            "counts a hit on U as on every node whose pages it returns)"
        },
    )
    cache = _fresh(cls, (A, [10, 11, 12, 13]))
    _hit(cache, A, 2)
    _insert(cache, Z, Z_PAGES, 0, "Z shares nothing")
    _hit(cache, Z)
    _insert(cache, W, [70, 71, 72], 2, "W shares A's first two pages")  # an insert splits A: no hits
    _expect_freed(
        cache,
        3,
        {**SPLIT_NODES, tuple(Z): [Z_PAGES]},
        [72] + Z_PAGES,
        "an insert split A (2 hits) after two pages and added W's own page 72 (0 hits); Z has 1 hit: W's "
        "leaf goes, then Z, and L (pages 12, 13) keeps its 2 hits",
        {
            (12, 13, 72): " (L lost its hits when the insert split A's edge: both parts keep the count)",
            (12, 13, 40, 41): f" (your new leaf, page 72, took U's 2 hits: {NEW_LEAF_AT_ZERO})"
            if _leaf_takes_parent_hits(cls)
            else "",
        },
    )
    _counts(cache, 4, 4, "evicting W's leaf and Z")
    _hit(cache, A[:4])  # U: the 2 hits A had when the insert cut it, and this one
    _insert(cache, V, V_PAGES, 0, "V shares nothing")
    _hit(cache, V, 2)
    _expect_freed(cache, 2, SPLIT_NODES, [12, 13], "L and V have 2 hits each and L was used before V: L goes")
    why = "U (pages 10, 11), a leaf now, kept A's 2 hits when the insert cut A, and a match added one: 3 to V's 2"
    cut = " (U has fewer hits in your tree: an insert that cuts an edge keeps its count in the upper part too)"
    cut = cut if _insert_cut_loses_upper_count(cls) else ""  # named only when the scene without Z says so
    _expect_freed(cache, 2, SPLIT_NODES, V_PAGES, why, {(10, 11): cut})
    # V is inserted twice: an insert that counted hits would give V more than U, not as many
    cache = _fresh(cls, (A, [10, 11, 12, 13]), (V, V_PAGES))
    _insert(cache, V, [52, 53], 2, "V is cached")
    _hit(cache, V)
    _insert(cache, W, [70, 71, 72], 2, "W shares A's first two pages")  # splits A, never matched: no hits
    why = "an insert split A (0 hits) after two pages and added W's own page 72 (0 hits); V has 1 hit: "
    _expect_freed(cache, 3, SPLIT_NODES, [12, 13, 72], why + "L (pages 12, 13) and W's leaf go first")
    why = "U (pages 10, 11), the upper part of the split, is a leaf now and has A's 0 hits, V has 1: U goes first"
    _expect_freed(cache, 2, SPLIT_NODES, [10, 11], why, {tuple(V_PAGES): U_SPLIT_HIT})


def case_insert_no_hit(cls):
    cache = _fresh(cls, (X, X_PAGES))
    _hit(cache, X)
    _insert(cache, Y, Y_PAGES, 0, "Y shares nothing with X")
    _insert(cache, Y, [40, 41], 2, "Y is cached")
    _expect_freed(
        cache,
        1,
        XY,
        Y_PAGES,
        "X was matched once; Y was only inserted (twice): an insert is a finished request handing its pages "
        "back, not a hit, so Y has 0 hits and goes first",
        # an evict that never sees the unmatched Y keeps it too: named only when Y alone can be evicted
        {tuple(X_PAGES): insert_counted(cls)},
    )
    _counts(cache, 2, 2, "evicting Y")


def case_locked(cls):
    cache = _fresh(cls, (X, X_PAGES), (Y, Y_PAGES), (Z, Z_PAGES))
    _hit(cache, Y, 5)
    node, _ = _match(cache, X)  # X: 1 hit, locked by a running request
    cache.lock(node)
    _counts(cache, 6, 4, "locking X")
    _expect_freed(cache, 2, XYZ, Z_PAGES, "Z has no hits: it goes first")
    locked = " (X is locked by a running request: never evict a node with lock_ref > 0, however few its hits)"
    _expect_freed(
        cache,
        2,
        XYZ,
        Y_PAGES,
        "X (1 hit) is locked, so Y goes, however many hits it has: it is the only unlocked leaf",
        {tuple(X_PAGES): locked},
    )
    freed = _evict(cache, 10, XYZ)
    assert freed == [], f"evict(10) freed {sorted(freed)}, but only the locked X is left{locked}"
    _counts(cache, 2, 0, "evicting all that is unlocked")
    cache.unlock(node)
    _counts(cache, 2, 2, "unlocking X")
    _expect_freed(cache, 2, XYZ, X_PAGES, "once unlocked, X can go")
    _counts(cache, 0, 0, "evicting everything")
    # A parent locked by a request that matched it exactly, with an unlocked child: the child goes,
    # and the parent, childless now, must not join the candidates.
    cache = _fresh(cls, (P_C1[:4], [10, 11]))
    _insert(cache, P_C1, [10, 11, 12], 2, "its first two pages are P's")
    parent, pages = _match(cache, P_C1[:4])
    assert pages == [10, 11], f"setup: match_prefix({P_C1[:4]}) returned pages {pages}, expected [10, 11]"
    cache.lock(parent)
    freed = _evict(cache, 10, {tuple(P_C1): [[10, 11], [12]]})
    expect(
        sorted(freed) == [12],
        f"evict(10) freed pages {sorted(freed)}, expected [12]: P (pages 10, 11) is locked by a running request "
        "that matched it, and its child C (page 12) is not. C goes; P, childless now, stays",
        "a parent left childless joins the candidates only if its lock_ref is 0: check the lock before you push it",
    )
    _counts(cache, 2, 0, "evicting C under the locked P")


def _insert_cut_loses_upper_count(cls) -> bool:
    """The scene above with Z's tokens other than V's (so no count of an evicted Z can reach V): the
    answer still frees U before V, as the reference would with an insert split that leaves U at 0."""
    try:
        cache = cls(2)
        cache.insert(list(A), [10, 11, 12, 13])
        for ids in (A, A, [6, 6, 5, 5]):
            if ids is A:
                cache.match_prefix(list(A))
            else:
                cache.insert(list(ids), list(Z_PAGES))
                cache.match_prefix(list(ids))
        cache.insert(list(W), [70, 71, 72])
        if sorted(cache.evict(3)) != [40, 41, 72]:
            return False
        cache.match_prefix(list(A[:4]))
        cache.insert(list(V), list(V_PAGES))
        for _ in range(2):
            cache.match_prefix(list(V))
        return sorted(cache.evict(2)) == [12, 13] and sorted(cache.evict(2)) == [10, 11]
    except Exception:
        return False


def case_new_node_starts_at_zero(cls):
    check_recycled_ids(cls)  # a new node in an evicted one's memory, with its id()
    cache = _fresh(cls, (X, X_PAGES))
    _hit(cache, X, 3)
    _expect_freed(cache, 2, XY, X_PAGES, "X is the only node")
    # The cache manager put pages 20 and 21 back on the free list; a later request computed X again in
    # them and handed them in: a new node, with the tokens and the pages of the evicted one.
    _insert(cache, X, X_PAGES, 0, "X was evicted: nothing of it is cached")
    _insert(cache, Y, Y_PAGES, 0, "Y shares nothing")
    _hit(cache, Y)
    freed = _evict(cache, 2, XY)
    expect(
        sorted(freed) == X_PAGES,
        f"evict(2) freed pages {sorted(freed)}, expected {X_PAGES}: X was evicted with 3 hits, then inserted again "
        "(the same tokens, in the same recycled pages 20, 21), and Y was matched once. The X inserted again is "
        "a new node: it starts at 0 hits, so it goes before Y. Yours still counted the evicted node's hits",
        "keep a count per node (a node object, or an attribute on it), not per page id or per token run, "
        "and forget it when the node is evicted",
    )
    _counts(cache, 2, 2, "evicting X")
    cache = _fresh(cls, (X, X_PAGES))  # a new leaf below a node with hits
    _hit(cache, X, 2)
    _insert(cache, X + [7, 7], [60, 61, 22], 2, "X is cached")
    _insert(cache, Y, Y_PAGES, 0, "Y shares nothing")
    _hit(cache, Y)
    why = "X had 2 hits when X + [7, 7] added a new leaf (page 22) below it; then Y was matched once: the new leaf "
    inherits = f" (yours gave the new leaf X's 2 hits: {NEW_LEAF_AT_ZERO})" if _leaf_takes_parent_hits(cls) else ""
    nodes = {tuple(X + [7, 7]): [X_PAGES, [22]], tuple(Y): [Y_PAGES]}
    _expect_freed(cache, 1, nodes, [22], why + "has 0 hits, Y 1: it goes first", {tuple(Y_PAGES): inherits})


B = [1, 2, 3, 4, 9, 9]  # shares A's first two pages: P = (10, 11), C = (12, 13), B's leaf = (22)
CHAIN_NODES = {tuple(A): [[10, 11], [12, 13]], tuple(B): [[10, 11], [22]], tuple(Q): [Q_PAGES]}


def _chain(cls):
    cache = _fresh(cls, (A, [10, 11, 12, 13]))
    _hit(cache, A)  # P and C: 1 hit each (P gets its count in the split below)
    _insert(cache, B, [60, 61, 22], 2, "B shares A's first two pages")
    _insert(cache, Q, Q_PAGES, 0, "Q shares nothing")
    _hit(cache, Q, 3)
    return cache


def case_chain(cls):
    cache = _chain(cls)
    why = (
        "B's leaf (0 hits, 1 page) and C (1 hit, 2 pages) go first; that leaves their parent P (pages 10, 11, "
        "1 hit) childless, and in the same call it competes with its own count: 1 hit against Q's 3, so P goes"
    )
    try:
        _expect_freed(cache, 5, CHAIN_NODES, [22, 12, 13, 10, 11], why, {(12, 13, 22, 30, 31): NEVER})
    except Mistake as e:  # P went after Q when evict(7) is asked for: it was a candidate, queued last
        if e.hint != NEVER.strip(" ()") or len(_chain(cls).evict(7)) != 7:
            raise
        raise Mistake(str(e).replace(NEVER, TOO_LATE), TOO_LATE.strip(" ()")) from None
    _counts(cache, 2, 2, "evicting the chain")
    cache = _chain(cls)
    _expect_freed(
        cache, 3, CHAIN_NODES, [22, 12, 13], "exactly 3 pages: B's leaf and C; stop once at least 3 are freed"
    )
    _counts(cache, 4, 4, "evicting 3 pages")
    _expect_freed(cache, 1, CHAIN_NODES, [10, 11], "P (1 hit) before Q (3 hits); a node goes whole")
    _counts(cache, 2, 2, "evicting P")
    check_parent_own_count(cls)


def _reference_prefix_lens(seed: int) -> list[int]:
    return remember(f"prefix_cache_lfu/workload {seed}", lambda: _play(SOLUTION, _workload(seed), POOL_PAGES))


def case_manager(cls):
    for seed in range(3, 6):
        try:
            got = _play(cls, _workload(seed), POOL_PAGES)  # few pages: evictions all the time
        except AssertionError as e:
            raise AssertionError(f"workload {seed}: {e}") from None
        want = _reference_prefix_lens(seed)
        for i, (g, w) in enumerate(zip(got, want)):
            if g == w:
                continue
            said = count_changed_by(cls)  # the manager locks and inserts: a count those calls change
            raise Mistake(
                f"workload {seed}, admission {i}: the cache matched {g} prompt tokens, but with the "
                f"contract's eviction order it would match {w}: an earlier evict() freed other pages "
                f"than fewest-hits-first{said}",
                said.strip(" ()") or "the unit cases must pass first",
            )


# ---------------------------------------------------------------------------- the real engine
def case_real_engine(cls):
    check_recycled_ids(cls)  # first: stale counts by id() make the unit cases below fail by luck, elsewhere
    require_passing([c for c in CASES if c.hand_unit], cls)
    try:
        starts, tokens, s = _run(cls)
    except AssertionError as e:
        raise AssertionError(f"in the real engine, the KV pages stopped adding up: {e}") from None
    ref_starts, ref_tokens, lru = _reference_run()
    for uid, text in ENGINE_REQUESTS:
        got, want = starts.get(uid), ref_starts[uid]
        if got == want:
            continue
        extra = ""
        if got == lru[uid]:
            extra = " (that is what least-recently-used eviction gives)"
        raise AssertionError(
            f"request {uid} ({text!r}) started its prefill at token {got}, expected {want}: the cache kept "
            f"other pages than fewest-hits-first eviction would{extra}"
        )
    assert tokens == ref_tokens, "the requests got different tokens than with the reference cache"
    assert s.cache.num_available == ENGINE_PAGES, (
        "KV pages are missing after every request finished (cached pages must all be evictable)"
    )


CASES = [
    Case(
        "stretch: fewest hits go first",
        case_fewest_hits,
        "order the unlocked leaves by hits, then by last use",
    ),
    Case(
        "stretch: equal hits, least recently used first",
        case_ties,
        "the last use breaks a tie in hits, oldest first",
    ),
    Case(
        "stretch: a match counts its whole path",
        case_path,
        "match_prefix adds a hit to every node whose pages it returns",
    ),
    Case(
        "stretch: a split keeps the count in both parts",
        case_split,
        "the new upper node copies the hits of the edge it is cut from; the lower part keeps them",
    ),
    Case("stretch: insert is not a hit", case_insert_no_hit, "only match_prefix counts hits; insert marks use only"),
    Case(
        "stretch: locked nodes stay, whatever their count",
        case_locked,
        "candidates are leaves with lock_ref == 0, whatever their hits",
    ),
    Case(
        "stretch: a node inserted again starts at 0 hits",
        case_new_node_starts_at_zero,
        "a node evicted with hits, then the same tokens inserted again in its recycled pages",
    ),
    Case(
        "stretch: a childless parent competes with its own count",
        case_chain,
        "a parent left childless joins the candidates in the same call, with its own hits",
    ),
    Case("stretch: inside the cache manager", case_manager, "the unit cases must pass first"),
    Case(
        "stretch: in the real engine",
        case_real_engine,
        "a prompt that three requests used survives an eviction that a recent, unused one does not",
        engine=True,
    ),
    tree_case(ReferenceLFURadixCache, lfu=True),
]
# A hand case's failure that a probe confirms is named by that probe's hint (probe_named.py); each line wraps
# the ones above it, so where two probes confirm, the lower line's hint is shown.
CASES = named_by_probe(CASES, KeyError, no_count_for_unmatched, NO_COUNT_YET)  # a leaf never matched
CASES = named_by_probe(CASES, Exception, split_pages_wrong, SPLIT_PAGES)  # pages cut in the wrong unit
CASES = named_by_probe(CASES, Exception, split_returns_lower, SPLIT_RETURNS_LOWER)  # the lower part returned
CASES = named_by_probe(CASES, AttributeError, hits_taken_for_the_node, HITS_TAKEN_FOR_THE_NODE)  # count for node
CASES = named_by_probe(CASES, KeyError, leaf_pushed_again, LEAF_PUSHED_AGAIN)  # the evicted leaf pushed again
CASES = named_by_probe(CASES, AssertionError, frees_whole_tier, WHOLE_TIER)  # past n, a tier of equal hits at once
CASES = named_by_probe(CASES, AssertionError, folded_into_last_use, FOLDED_INTO_LAST_USE)  # hits left in last use
CASES = named_by_probe(CASES, AssertionError, hits_through_stale_map, STALE_MAP)  # a page map split/evict left stale
CASES = named_by_probe(CASES, AssertionError, split_parts_share, SHARED_COUNT)  # one counter for both parts of a split
SYMBOL = "LFURadixCache"
SOLUTION = ReferenceLFURadixCache
# The package's RadixCache is the base part's answer (the student's own from the base part is fine).
REFERENCES = [PackageRadixCache]
