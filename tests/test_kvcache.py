"""Page allocator, page table, radix cache and cache manager: pages never leak or double-free."""

from __future__ import annotations

import random

import pytest
import torch

from minisgl_edu.core import Req, SamplingParams
from minisgl_edu.kvcache import CacheManager, KVPool, OutOfPages, PageAllocator, PageTable, RadixCache, pages_for


def test_allocator_free_list_round_trip():
    alloc = PageAllocator(8)
    a = alloc.allocate(3)
    b = alloc.allocate(5)
    assert sorted(a + b) == list(range(8)) and alloc.num_free == 0
    with pytest.raises(OutOfPages):
        alloc.allocate(1)
    alloc.free(a)
    assert alloc.num_free == 3
    with pytest.raises(ValueError):
        alloc.free(a[:1])  # double free is caught
    alloc.free(b)
    assert alloc.num_free == 8


def test_page_table_slots_follow_pages():
    table = PageTable(max_reqs=2, max_pages_per_req=4, device="cpu", fill=99)
    row = table.alloc_row()
    table.append(row, [5, 2])
    assert table.slots(row, 0, 6, page_size=4) == [20, 21, 22, 23, 8, 9]
    assert table.table[row].tolist() == [5, 2, 99, 99]
    table.free_row(row)
    assert table.table[row].tolist() == [99] * 4 and table.pages[row] == []


def test_radix_match_insert_split_and_evict():
    cache = RadixCache(page_size=2)
    assert cache.match_prefix([1, 2, 3])[1] == []
    assert cache.insert([1, 2, 3, 4, 5, 6], [10, 11, 12]) == 0
    node, pages = cache.match_prefix([1, 2, 3, 4, 9, 9])
    assert pages == [10, 11]  # split after two pages
    # Inserting a sequence sharing two pages reports them as already present.
    assert cache.insert([1, 2, 3, 4, 7, 8], [20, 21, 22]) == 2
    assert cache.num_cached == 4 and cache.num_evictable == 4
    cache.lock(node)
    assert cache.num_evictable == 2
    freed = cache.evict(10)
    assert sorted(freed) == [12, 22]  # the locked prefix stays
    cache.unlock(node)
    assert sorted(cache.evict(10)) == [10, 11]
    assert cache.num_cached == 0


def _manager(num_pages=16, page_size=4, cache="radix"):
    pool = KVPool(1, num_pages, page_size, 1, 2, torch.float32, "cpu")
    table = PageTable(4, pages_for(64, page_size), "cpu", fill=pool.dummy_page)
    return CacheManager(pool, table, cache)


def _run(mgr, req, new_tokens):
    """Admit, 'compute' the prompt and `new_tokens` decode steps, as the scheduler would."""
    mgr.admit(req)
    mgr.reserve(req, len(req.input_ids))
    req.cached_len = len(req.input_ids)
    for t in range(new_tokens):
        req.output_ids.append(100 + t)
        mgr.reserve(req, req.total_len)
        req.cached_len = req.total_len - 1 if t == new_tokens - 1 else req.total_len


def test_radix_sequences_are_the_root_to_leaf_keys():
    c = RadixCache(page_size=2)
    assert c.sequences() == set()
    c.insert([1, 2, 3, 4], [10, 11])
    c.insert([1, 2, 5, 6, 7, 8], [10, 12, 13])  # splits the first edge after [1, 2]
    assert c.sequences() == {(1, 2, 3, 4), (1, 2, 5, 6, 7, 8)}
    c.evict(1)  # the least recently used leaf page goes
    assert c.sequences() == {(1, 2, 5, 6, 7, 8)}


@pytest.mark.parametrize("cache", ["radix", "naive"])
def test_manager_release_returns_every_page(cache):
    mgr = _manager(cache=cache)
    a = Req(1, list(range(10)), SamplingParams())
    _run(mgr, a, 3)
    mgr.check()
    mgr.release(a, cache_it=True)
    mgr.check()
    assert mgr.num_available == mgr.num_pages
    # A second request with the same prompt reuses the first two full pages (radix only).
    b = Req(2, list(range(10)) + [42], SamplingParams())
    mgr.admit(b)
    assert b.prefix_len == (8 if cache == "radix" else 0)
    mgr.release(b, cache_it=False)
    mgr.check()
    assert mgr.num_available == mgr.num_pages


def test_manager_random_workload_never_leaks():
    rng = random.Random(0)
    mgr = _manager(num_pages=40, page_size=2)
    live = []
    for step in range(300):
        if live and (rng.random() < 0.4 or len(live) == 4):
            req = live.pop(rng.randrange(len(live)))
            mgr.release(req, cache_it=rng.random() < 0.7)
        else:
            prompt = [rng.randrange(3) for _ in range(rng.randrange(2, 12))]
            req = Req(step, prompt, SamplingParams())
            if mgr.num_available < pages_for(len(prompt) + 4, 2) + 4 * 8:
                continue
            _run(mgr, req, rng.randrange(1, 4))
            live.append(req)
        mgr.check()
    for req in live:
        mgr.release(req)
    mgr.check()
    assert mgr.num_available == mgr.num_pages
