"""Exercise 6 — the radix prefix cache: a class `cls(page_size)` with `match_prefix`, `lock`,
`unlock`, `insert`, `evict`, `num_evictable`, `num_cached` and `cached_pages`.

The scheduler's cache manager builds one per scheduler (`CacheManager.prefix_cache`). The unit
cases build small trees (page size 2) through the public methods only and look at what comes
back: pages of matches, the count `insert` returns, what `evict` frees and what stays. Then the
class runs inside a `CacheManager` on a workload with shared prefixes and evictions (no model),
and last inside the real engine, where a request reuses the pages of an earlier one.
"""

from __future__ import annotations

import random

import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import collect, new_scheduler, remember, require_passing
from minisgl_edu.kvcache import CacheManager, KVPool, OutOfPages, PageTable, pages_for
from minisgl_edu.kvcache.radix_cache import RadixCache as reference

PS = 2  # page size of the hand-built trees
A = [1, 2, 3, 4, 5, 6, 7, 8]  # four pages
A_PAGES = [10, 11, 12, 13]


def _new(cls, page_size: int = PS):
    cache = cls(page_size)
    for name in ("match_prefix", "lock", "unlock", "insert", "evict", "cached_pages"):
        assert callable(getattr(cache, name, None)), f"your class has no method {name}()"
    return cache


def _match(cache, ids: list[int]) -> tuple[object, list[int]]:
    got = cache.match_prefix(list(ids))
    assert isinstance(got, tuple) and len(got) == 2, (
        f"match_prefix must return a pair (node, pages), not {type(got).__name__}"
    )
    node, pages = got
    assert isinstance(pages, list) and all(isinstance(p, int) for p in pages), (
        f"match_prefix's pages must be a list of page ids (ints), not {pages!r}"
    )
    return node, pages


def _pages(cache, ids: list[int]) -> list[int]:
    return _match(cache, ids)[1]


def _insert(cache, ids: list[int], pages: list[int], expect: int, why: str) -> None:
    got = cache.insert(list(ids), list(pages))
    assert got == expect, (
        f"insert({ids}, {pages}) returned {got!r}, expected {expect}: {why}. The count tells the "
        "cache manager which of its own pages are duplicates to free; a wrong count leaks pages or "
        "frees pages the tree still holds"
    )


def _expect_pages(cache, ids: list[int], want: list[int], why: str) -> None:
    got = _pages(cache, ids)
    assert got == want, f"match_prefix({ids}) returned pages {got}, expected {want}: {why}"


def _expect_cached(cache, want: set[int], after: str) -> None:
    got = set(cache.cached_pages())
    lost, extra = sorted(want - got), sorted(got - want)
    assert not lost, (
        f"after {after}, page(s) {lost} vanished from the tree: they are neither cached nor given back (leaked)"
    )
    assert not extra, f"after {after}, the tree holds page(s) {extra} that it should not have"
    assert cache.num_cached == len(want), (
        f"after {after}, num_cached is {cache.num_cached} but the tree holds {len(want)} distinct pages "
        "(a page stored twice?)"
    )


def _evict(cache, n: int, sequences: dict[tuple, list[list[int]]]) -> list[int]:
    """evict(n), then check that nothing was lost or double-owned and that only leaves went.

    `sequences` maps each inserted sequence to the pages of the nodes on its path, top down: a
    node goes whole, and a node may go only if every node below it on the path went too."""
    before = set(cache.cached_pages())
    freed = cache.evict(n)
    assert isinstance(freed, list), f"evict must return a list of page ids, not {type(freed).__name__}"
    after = set(cache.cached_pages())
    assert len(freed) == len(set(freed)), f"evict({n}) returned a page twice: {freed}"
    for seq, nodes in sequences.items():
        for pages in nodes:
            got = [p for p in pages if p in freed]
            if got and len(got) < len(pages) and not set(pages) & after:
                raise AssertionError(
                    f"evict({n}) removed the node holding pages {pages} but returned only {got}: the "
                    "others are now in neither the tree nor the free list (leaked). A node goes whole: "
                    "return all its pages"
                )
        gone = [any(p in freed for p in pages) for pages in nodes]
        if any(gone) and not all(gone[gone.index(True) :]):
            first = nodes[gone.index(True)][0]
            raise AssertionError(
                f"evict({n}) freed page {first} of {list(seq)} but not the pages after it: it removed a "
                "node that still has children. Evict leaves only; a parent becomes a leaf once its last "
                "child is gone"
            )
    both = sorted(set(freed) & after)
    assert not both, (
        f"evict({n}) returned page(s) {both} but the tree still holds them: the allocator "
        "would hand them out while the tree still serves them"
    )
    lost = sorted(before - after - set(freed))
    assert not lost, (
        f"evict({n}) removed page(s) {lost} from the tree without returning them (leaked): "
        "return every page of every node you remove"
    )
    return freed


C = [1, 2, 3, 4, 9, 9, 9, 9]
AC_NODES = {tuple(A): [[10, 11], [12, 13]], tuple(C): [[10, 11], [52, 53]]}  # the nodes on each path


def _tree_a_c(cls):
    """A, then C which shares A's first two pages: a split node with two children."""
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    c = list(C)
    _insert(cache, c, [50, 51, 52, 53], 2, "the first two pages of C (tokens 1, 2, 3, 4) were in the tree")
    return cache, c


# ---------------------------------------------------------------------------- unit cases
def case_empty(cls):
    cache = _new(cls)
    node, pages = _match(cache, [1, 2, 3, 4])
    assert pages == [], f"an empty cache matches nothing, but match_prefix returned pages {pages}"
    cache.lock(node)
    cache.unlock(node)
    assert cache.num_cached == 0 and cache.num_evictable == 0, "an empty cache holds no pages"
    assert cache.evict(3) == [], "evicting from an empty cache frees nothing"


def case_whole_pages(cls):
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    _expect_pages(cache, A, A_PAGES, "all of A is cached")
    _expect_pages(cache, A + [9, 9], A_PAGES, "A is a prefix of these tokens")
    _expect_pages(
        cache,
        A[:7],
        [10, 11, 12],
        "7 tokens cover 3 whole pages and one half page; a page is shared only if all its "
        f"{PS} tokens match (the K/V of the rest is not there)",
    )
    _expect_pages(
        cache, [1, 2, 3, 9, 5, 6], [10], "the tokens differ inside the second page, so only the first page is shared"
    )
    _expect_pages(cache, [1], [], "one token is less than a page")
    _expect_pages(cache, [2, 1, 3, 4], [], "the first page differs")


def case_insert_existing(cls):
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    _insert(cache, A, [20, 21, 22, 23], 4, "all four pages of A were in the tree already")
    _expect_cached(cache, set(A_PAGES), "inserting A twice")
    _expect_pages(cache, A, A_PAGES, "the tree keeps its own pages; the caller frees the duplicates")
    b = [1, 2, 3, 4, 5, 6, 30, 31]
    _insert(cache, b, [40, 41, 42, 43], 3, "B's first three pages (tokens 1..6) were in the tree")
    _expect_cached(cache, {10, 11, 12, 13, 43}, "inserting B, which shares three pages with A")
    _expect_pages(cache, b, [10, 11, 12, 43], "B shares A's first three pages, then has its own")
    _expect_pages(cache, A, A_PAGES, "A must still be there after B")
    _insert(
        cache,
        A[:5],
        [60, 61],
        2,
        "5 tokens are 2 whole pages (a partial page is never cached), both in the tree already",
    )


def case_split(cls):
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    node, pages = _match(cache, [1, 2, 3, 4, 9, 9])
    assert pages == [10, 11], f"match_prefix([1, 2, 3, 4, 9, 9]) returned {pages}, expected [10, 11]"
    cache.lock(node)
    assert cache.num_evictable == 2, (
        f"the match ended inside A's edge (2 of its 4 pages), and lock() pinned that match: pages 12, 13 "
        f"must still be evictable, but num_evictable is {cache.num_evictable}. Split the edge where the "
        "match ends, so that the node returned covers exactly the matched pages"
    )
    freed = _evict(cache, 10, {tuple(A): [[10, 11], [12, 13]]})
    assert sorted(freed) == [12, 13], f"with [1, 2, 3, 4] locked, evict(10) must free pages 12, 13, not {sorted(freed)}"
    _expect_pages(cache, A, [10, 11], "the locked part stays")
    cache.unlock(node)
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    node, _ = _match(cache, A)
    cache.lock(node)
    _expect_pages(cache, [1, 2, 3, 4, 9, 9], [10, 11], "the first two pages of A match")
    assert cache.num_evictable == 0, (
        f"a running request locked all of A, then a match split A's edge: both parts are still in use, "
        f"but num_evictable is {cache.num_evictable}. The upper part of a split keeps the lock count "
        "(lock_ref) of the edge it was cut from"
    )
    cache.unlock(node)
    assert cache.num_evictable == 4, "after the unlock all four pages of A are evictable"
    cache, c = _tree_a_c(cls)
    _expect_cached(cache, {10, 11, 12, 13, 52, 53}, "inserting C, which leaves A after two pages")
    _expect_pages(cache, A, A_PAGES, "A must still match whole after C split its edge")
    _expect_pages(cache, c, [10, 11, 52, 53], "C shares A's first two pages")


def case_lock_ancestors(cls):
    cache = _new(cls)
    _insert(cache, A, A_PAGES, 0, "the cache was empty")
    d = [1, 2, 3, 4, 5, 6, 8, 8]
    _insert(cache, d, [70, 71, 72, 73], 3, "D shares A's first three pages")
    node, pages = _match(cache, d)
    assert pages == [10, 11, 12, 73], f"match_prefix(D) returned {pages}, expected [10, 11, 12, 73]"
    cache.lock(node)
    assert cache.num_evictable == 1, (
        f"a request locked D's prefix (pages 10, 11, 12, 73): only page 13 is evictable, but num_evictable "
        f"is {cache.num_evictable}. lock() must add one to lock_ref of the node and of every node above "
        "it, up to the root: a running request needs its whole prefix"
    )
    cache.lock(node)
    cache.unlock(node)
    assert cache.num_evictable == 1, (
        "a second request locked the same prefix and one of the two unlocked it: it is still in use. "
        "lock_ref counts the requests, it is not a flag"
    )
    freed = _evict(cache, 10, {tuple(A): [[10, 11, 12], [13]], tuple(d): [[10, 11, 12], [73]]})
    assert freed == [13], (
        f"with D locked, evict(10) may free only page 13, not {sorted(freed)}: the others belong to a "
        "prefix a running request still reads"
    )
    cache.unlock(node)
    assert cache.num_evictable == cache.num_cached == 4, "after the last unlock every page is evictable again"


def case_evict_locked(cls):
    cache, c = _tree_a_c(cls)
    node, _ = _match(cache, c)
    cache.lock(node)
    freed = _evict(cache, 10, AC_NODES)
    locked = sorted(set(freed) & {10, 11, 52, 53})
    assert not locked, (
        f"evict freed page(s) {locked} of a prefix that a running request has locked: its K/V would be "
        "overwritten while it still reads them. Evict only nodes with lock_ref == 0"
    )
    assert sorted(freed) == [12, 13], f"evict(10) must free A's own pages 12, 13, freed {sorted(freed)}"


def case_leaves_first(cls):
    cache, c = _tree_a_c(cls)
    freed = _evict(cache, 3, AC_NODES)
    assert len(freed) >= 3, f"evict(3) freed {len(freed)} pages, but 6 were evictable"
    assert not set(freed) & {10, 11}, (
        "evict(3) freed the shared pages 10, 11 while A's and C's own pages could go first: evict leaves first"
    )


def case_enough_pages(cls):
    cache = _new(cls)
    seqs = {}
    for i, first in enumerate((1, 3, 5)):
        ids, pages = [first, first, 7, 7], [20 + 2 * i, 21 + 2 * i]
        _insert(cache, ids, pages, 0, "these three sequences share no page")
        seqs[tuple(ids)] = [pages]
    assert cache.evict(0) == [], "evict(0) frees nothing"
    freed = _evict(cache, 3, seqs)
    assert len(freed) == 4, (
        f"evict(3) with leaves of 2 pages each must free two whole leaves (4 pages), it freed {len(freed)}: "
        "keep evicting until at least num_pages are freed, and a node goes whole"
    )
    assert cache.num_evictable == cache.num_cached == 2, "after evicting 4 of 6 pages, 2 stay cached and evictable"
    freed = _evict(cache, 100, seqs)
    assert len(freed) == 2, f"evict(100) frees what is left (2 pages), it freed {len(freed)}"
    cache, c = _tree_a_c(cls)
    freed = _evict(cache, 6, AC_NODES)
    assert sorted(freed) == [10, 11, 12, 13, 52, 53], (
        f"evict(6) on A and C (6 pages, none locked) freed {sorted(freed)}: once both leaves are gone, their "
        "parent (pages 10, 11) is a leaf and must be evicted in the same call"
    )
    assert cache.num_cached == 0 and cache.num_evictable == 0, "everything was evicted"


def case_lru(cls):
    cache = _new(cls)
    x, y = [1, 1, 2, 2], [3, 3, 4, 4]
    _insert(cache, x, [20, 21], 0, "the cache was empty")
    _insert(cache, y, [30, 31], 0, "Y shares nothing with X")
    _expect_pages(cache, x, [20, 21], "X is cached")  # X is now the most recently used
    freed = _evict(cache, 1, {tuple(x): [[20, 21]], tuple(y): [[30, 31]]})
    assert sorted(freed) == [30, 31], (
        f"evict(1) freed {sorted(freed)}: X was matched after Y was inserted, so Y (pages 30, 31) is the "
        "least recently used leaf and goes first. match_prefix and insert must mark the nodes they pass "
        "as used"
    )


# ---------------------------------------------------------------------------- with the cache manager
POOL_PAGES = 40  # a few requests' worth: evictions all the time
PLENTY = 4000  # more than a workload ever needs
MAX_LEN = 24


def _manager(cls, num_pages: int) -> CacheManager:
    pool = KVPool(1, num_pages, PS, 1, 1, torch.float32, "cpu")
    table = PageTable(8, pages_for(MAX_LEN + 8, PS), "cpu", fill=pool.dummy_page)
    mgr = CacheManager(pool, table, "radix")
    mgr.prefix_cache = cls(PS)
    return mgr


def _workload(seed: int, n: int = 120) -> list[tuple]:
    """Admit requests whose prompts share beginnings, compute them, finish or abort them."""
    rnd = random.Random(seed)
    stems = [[rnd.randrange(3) for _ in range(rnd.randrange(2, 12))] for _ in range(4)]
    ops = []
    for _ in range(n):
        kind = rnd.choice(["admit", "admit", "finish", "finish", "abort"])
        if kind == "admit":
            prompt = list(rnd.choice(stems)) + [rnd.randrange(3) for _ in range(rnd.randrange(1, 8))]
            ops.append(("admit", prompt[:MAX_LEN], rnd.randrange(1, 6)))
        else:
            ops.append((kind, rnd.randrange(8), 0))
    return ops


DONE = {
    "admit": "a request was admitted",
    "finish": "a request finished",
    "abort": "a request was aborted",
    "end": "the last requests finished and everything was evicted",
}


def _play(cls, ops: list[tuple], num_pages: int) -> list[int]:
    """Run `ops` on a manager with `cls` as its prefix cache; returns each admission's prefix_len."""
    mgr = _manager(cls, num_pages)
    live: list[Req] = []
    prefix_lens = []
    uid = 0
    for op, a, b in ops + [("end", 0, 0)]:
        try:
            if op == "end":
                for req in live:
                    mgr.release(req, cache_it=True)
                assert mgr.prefix_cache.num_evictable == mgr.prefix_cache.num_cached, (
                    "every request has finished, yet some cached pages are still locked: unlock must undo lock exactly"
                )
                mgr.allocator.free(mgr.prefix_cache.evict(num_pages))
            else:
                uid = _play_one(mgr, live, prefix_lens, uid, op, a, b)
        except ValueError as e:
            if "freed twice" not in str(e):
                raise
            raise AssertionError(
                f"when {DONE[op]}, the cache manager freed a page twice ({e}): insert's count or evict's "
                "pages do not match what the tree really holds"
            ) from None
        try:
            mgr.check()
        except AssertionError as e:
            raise AssertionError(f"after {DONE[op]}, the KV pages do not add up: {e}") from None
    assert mgr.allocator.num_free == num_pages, (
        f"every request has finished and everything was evicted, but only {mgr.allocator.num_free} of "
        f"{num_pages} pages are free: pages leaked"
    )
    return prefix_lens


def _play_one(mgr: CacheManager, live: list[Req], prefix_lens: list[int], uid: int, op: str, a, b) -> int:
    """One operation of a workload; returns the next free uid."""
    if op != "admit":
        if live:
            req = live.pop(a % len(live))
            mgr.release(req, cache_it=(op == "finish"))
        return uid
    if len(live) == 8:  # every page-table row is taken
        return uid
    req = Req(uid, list(a), SamplingParams(max_tokens=b))
    mgr.admit(req)
    prefix_lens.append(req.prefix_len)
    need = pages_for(len(a) + b, PS) - mgr.held_pages(req)
    if need > mgr.num_available:  # what the scheduler's admission does: wait
        mgr.release(req, cache_it=False)
        return uid + 1
    try:
        mgr.reserve(req, len(a) + b)
    except OutOfPages:
        raise AssertionError(
            f"num_evictable said {mgr.prefix_cache.num_evictable} cached pages could be evicted, but "
            f"evict() did not give back enough for {need} pages: num_evictable must count exactly the "
            "pages of unlocked nodes, and evict must free them"
        ) from None
    req.output_ids = [0] * b  # "computed": the prompt and all but the last output token
    req.cached_len = len(a) + b - 1
    live.append(req)
    return uid + 1


def _reference_prefix_lens(seed: int) -> list[int]:
    return remember(f"prefix_cache/workload {seed}", lambda: _play(reference, _workload(seed), PLENTY))


def case_manager(cls):
    for seed in range(3):
        ops = _workload(seed)
        got = _play(cls, ops, PLENTY)  # nothing is evicted, so every match is the longest one
        want = list(_reference_prefix_lens(seed))
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, (
                f"workload {seed}, admission {i}: the cache matched {g} prompt tokens, the longest cached "
                f"prefix in whole pages is {w}"
            )
    for seed in range(3, 6):
        _play(cls, _workload(seed), POOL_PAGES)  # few pages: evictions all the time


# ---------------------------------------------------------------------------- the real engine
SHARED = "One, two, three, four, five, six, seven, eight,"
ENGINE_REQUESTS = [
    # (uid, arrives before step, text, sampling params). Request 0 runs alone and leaves its pages
    # in the tree; then 1 (which leaves it inside the first edge: a split) and 2 (all of it) run
    # together and lock the shared part twice.
    (0, 1, SHARED, SamplingParams(max_tokens=3, ignore_eos=True)),
    (1, 5, "One, two, three, four, five, and more", SamplingParams(max_tokens=2, ignore_eos=True)),
    (2, 5, SHARED + " ten", SamplingParams(max_tokens=3, ignore_eos=True)),
]


def _run(cls):
    s = new_scheduler(cache="radix")
    if cls is not reference:
        s.cache.prefix_cache = cls(s.cache.page_size)
    steps = []
    for n in range(1, 60):
        for uid, step, text, params in ENGINE_REQUESTS:
            if step == n:
                s.add_request(uid, s.tokenizer.encode(text), params)
        if s.is_idle and n > 5:
            break
        rec = s.step()
        if rec is not None:
            steps.append((rec.phase, rec.items))
        s.cache.check()
    out = collect(s)
    return steps, out.tokens, s


def _reference_run():
    def compute():
        steps, tokens, _ = _run(reference)
        assert any(start > 0 for phase, items in steps if phase == "prefill" for _, start, _ in items), (
            "setup: expected a prefix hit"
        )
        return steps, tokens

    return remember("prefix_cache", compute)


def case_real_engine(cls):
    require_passing(CASES[:-1], cls)
    try:
        steps, tokens, s = _run(cls)
    except AssertionError as e:
        raise AssertionError(f"in the real engine, the KV pages stopped adding up: {e}") from None
    ref_steps, ref_tokens = _reference_run()
    for (phase, items), (ref_phase, ref_items) in zip(steps, ref_steps):
        if phase == ref_phase == "prefill" and items != ref_items:
            got = ", ".join(f"uid {u} from {st}" for u, st, _ in items)
            want = ", ".join(f"uid {u} from {st}" for u, st, _ in ref_items)
            raise AssertionError(
                f"a prefill started at other positions than with the package's cache ({got}; expected "
                f"{want}): the start is the prefix the cache matched"
            )
    assert steps == ref_steps, "the engine ran other batches than with the package's cache"
    assert tokens == ref_tokens, "the requests got different tokens than with the package's cache"
    assert s.cache.num_available == s.cache.num_pages, (
        "KV pages are missing after every request finished (cached pages must all be evictable)"
    )


CASES = [
    Case("empty cache", case_empty, "match on an empty tree returns (root, [])"),
    Case("match whole pages", case_whole_pages, "compare page by page; a partly matching page is not shared"),
    Case(
        "insert over a cached prefix",
        case_insert_existing,
        "walk first; only the part that did not match becomes a new leaf; return the matched pages",
    ),
    Case("split on a partial match", case_split, "cut the edge where the match ends (key, pages, lock_ref)"),
    Case("locks reach the root", case_lock_ancestors, "lock/unlock walk node.parent up to the root, counting"),
    Case("locked nodes are not evicted", case_evict_locked, "only leaves with lock_ref == 0"),
    Case("leaves first", case_leaves_first, "start from the leaves; a node with children stays"),
    Case(
        "evict frees enough pages",
        case_enough_pages,
        "loop until len(freed) >= num_pages; push a parent that just became a leaf",
    ),
    Case("least recently used first", case_lru, "touch nodes in match and insert; a heap on last_access"),
    Case("inside the cache manager", case_manager, "the unit cases must pass first"),
    Case("in the real engine", case_real_engine, "a request reuses an earlier request's pages", engine=True),
]
SYMBOL = "RadixCache"
SOLUTION = reference
