"""Exercise 6, stretch: the real engine run of the LFU grader's last hand case (`case_real_engine`
in lfu.py). A few requests run one at a time through the real scheduler with the class as its
prefix cache and a KV pool cut down to ENGINE_PAGES pages, so that a long request must evict: a
prompt that three requests used survives with fewest-hits-first eviction, and a recent prompt used
once goes. `_run` plays it for any class; `_reference_run` plays it once for the grader's reference
and for the package's LRU cache (the set-up check: the two orders must differ here).
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.harness import collect, new_scheduler, remember
from minisgl_edu.grading.prefix_cache.lfu_reference import ReferenceLFURadixCache
from minisgl_edu.kvcache.allocator import PageAllocator
from minisgl_edu.kvcache.radix_cache import RadixCache as PackageRadixCache

HOT = "Please list the colours of the rainbow in order, one per line."
COLD = "Name three animals that live in the sea."
BIG = "Write the numbers from one to twenty in words, separated by commas, without anything else."
# (uid, text). Each request runs alone. HOT runs three times (its prefix: 2 hits), then COLD once
# (0 hits, but used after HOT); BIG needs more pages than are free and forces an eviction. Then HOT
# comes back: with fewest-hits-first COLD's pages went and HOT's prefix is still cached; least
# recently used order would have freed HOT's.
ENGINE_REQUESTS = [(0, HOT), (1, HOT), (2, HOT), (3, COLD), (4, BIG), (5, HOT)]
ENGINE_PARAMS = SamplingParams(max_tokens=3, ignore_eos=True)
ENGINE_PAGES = 9


def _check_pages(s) -> None:
    """CacheManager.check() for a pool cut down to ENGINE_PAGES pages."""
    cache = s.cache
    owned = {p for row in cache.page_table.used_rows() for p in cache.page_table.pages[row]}
    used = cache.allocator.used_pages()
    assert used == set(cache.prefix_cache.cached_pages()) | owned, "a page is allocated but nobody holds it (leak)"
    assert cache.allocator.num_free + len(used) == ENGINE_PAGES, "a page is neither free nor allocated"


def _run(cls):
    s = new_scheduler(cache="radix")
    s.cache.allocator = PageAllocator(ENGINE_PAGES)  # a small KV pool: BIG must evict
    if cls is not PackageRadixCache:
        s.cache.prefix_cache = cls(s.cache.page_size)
    starts = {}
    for uid, text in ENGINE_REQUESTS:
        s.add_request(uid, s.tokenizer.encode(text), ENGINE_PARAMS)
        for _ in range(50):
            if s.is_idle:
                break
            rec = s.step()
            if rec is not None and rec.phase == "prefill":
                starts.update({u: start for u, start, _ in rec.items})
            _check_pages(s)
    out = collect(s)
    return starts, out.tokens, s


def _reference_run():
    def compute():
        starts, tokens, _ = _run(ReferenceLFURadixCache)
        lru, _, _ = _run(PackageRadixCache)
        last = ENGINE_REQUESTS[-1][0]
        assert starts[last] > 0 and lru[last] < starts[last], (
            f"setup: the last request should keep its prefix with LFU ({starts}) and lose it with LRU ({lru})"
        )
        return starts, tokens, lru

    return remember("prefix_cache_lfu", compute)
