"""Property tests (hypothesis) for the allocator and the prefix cache.

Random sequences of admit (with prefix sharing), compute, finish (caching), abort and evict:
afterwards no page is leaked, none is freed twice (the allocator raises on that), lock counts
never go negative, and every page is free, owned by one running request, or in the cache.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.kvcache import CacheManager, KVPool, PageTable, pages_for

PAGE = 2
PAGES = 48
MAX_LEN = 24

ops = st.lists(
    st.one_of(
        st.tuples(st.just("admit"), st.lists(st.integers(0, 2), min_size=1, max_size=14), st.integers(1, 6)),
        st.tuples(st.just("finish"), st.integers(0, 7), st.just(0)),
        st.tuples(st.just("abort"), st.integers(0, 7), st.just(0)),
        st.tuples(st.just("evict"), st.integers(1, 10), st.just(0)),
    ),
    max_size=60,
)


def _locks_ok(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.lock_ref < 0:
            return False
        stack.extend(n.children.values())
    return True


@settings(max_examples=150, deadline=None)
@given(ops=ops, cache=st.sampled_from(["radix", "naive"]))
def test_random_workloads_never_leak(ops, cache):
    pool = KVPool(1, PAGES, PAGE, 1, 1, torch.float32, "cpu")
    mgr = CacheManager(pool, PageTable(4, pages_for(MAX_LEN, PAGE), "cpu", fill=pool.dummy_page), cache)
    live: list[Req] = []
    uid = 0
    for op, a, b in ops:
        if op == "admit" and len(live) < 4:
            req = Req(uid, list(a), SamplingParams())
            uid += 1
            final = len(a) + b
            mgr.admit(req)
            if pages_for(final, PAGE) - mgr.held_pages(req) > mgr.num_available:
                mgr.release(req, cache_it=False)
                continue
            mgr.reserve(req, len(a))
            req.cached_len = len(a)
            for t in range(b):  # decode b tokens; the last one's K/V is never computed
                req.output_ids.append(t % 3)
                mgr.reserve(req, req.total_len)
                req.cached_len = req.total_len - (1 if t == b - 1 else 0)
            live.append(req)
        elif op in ("finish", "abort") and live:
            req = live.pop(a % len(live))
            mgr.release(req, cache_it=(op == "finish"))
        elif op == "evict":
            mgr.allocator.free(mgr.prefix_cache.evict(a))
        mgr.check()
        if cache == "radix":
            assert _locks_ok(mgr.prefix_cache.root)
    for req in live:
        mgr.release(req)
    mgr.check()
    assert mgr.num_available == PAGES
    mgr.allocator.free(mgr.prefix_cache.evict(PAGES))
    assert mgr.allocator.num_free == PAGES and mgr.prefix_cache.num_cached == 0
