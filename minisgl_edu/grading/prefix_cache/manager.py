"""Exercise 6's cases inside the cache manager (no model): the class as `CacheManager.prefix_cache`
on workloads of admissions, finishes and aborts whose prompts share beginnings, first with pages
to spare (every match is the longest one), then with few pages (evictions all the time), compared
with the package's cache at each admission and every 20 operations.
"""

from __future__ import annotations

from minisgl_edu.grading.harness import remember
from minisgl_edu.grading.prefix_cache.tree import LRU_HINT, PLENTY, POOL_PAGES, _play, _workload
from minisgl_edu.kvcache.radix_cache import RadixCache as reference


def _reference_prefix_lens(seed: int) -> list[int]:
    return remember(f"prefix_cache/workload {seed}", lambda: _play(reference, _workload(seed), PLENTY))


def case_manager(cls):
    for seed in range(3):
        ops = _workload(seed)
        got = _play(cls, ops, PLENTY)  # nothing is evicted, so every match is the longest one
        want = list(_reference_prefix_lens(seed))
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, (
                f"workload {seed} (nothing evicted), admission {i}: the cache matched {g} prompt tokens, the "
                f"longest cached prefix in whole pages is {w}. Hint: the match is the longest cached prefix "
                "of the prompt, in whole pages"
            )
    for seed in range(3, 6):
        _play(cls, _workload(seed), POOL_PAGES)  # few pages: evictions all the time


PRESSURE_SEEDS = (6, 7, 8)
PRESSURE_STEPS = 400


def _reference_pressure(seed: int) -> tuple[list[int], list]:
    def compute():
        states: list = []
        lens = _play(reference, _workload(seed, PRESSURE_STEPS), POOL_PAGES, states)
        return lens, states

    return remember(f"prefix_cache/pressure {seed}", compute)


def case_many_steps(cls):
    for seed in PRESSURE_SEEDS:
        states: list = []
        got = _play(cls, _workload(seed, PRESSURE_STEPS), POOL_PAGES, states)
        want, want_states = _reference_pressure(seed)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, (
                f"{PRESSURE_STEPS} operations on {POOL_PAGES} pages (workload {seed}): admission {i} matched {g} "
                f"prompt tokens, the package's cache {w}. Under memory pressure what is still cached decides the "
                "match, so an eviction before it freed other pages than least recently used first. Hint: "
                f"{LRU_HINT}; a node goes whole and evict stops as soon as it has freed at least num_pages"
            )
        for (step, pages, evictable), (_, want_pages, want_evictable) in zip(states, want_states):
            assert pages == want_pages and evictable == want_evictable, (
                f"{PRESSURE_STEPS} operations on {POOL_PAGES} pages (workload {seed}): after operation {step} the "
                f"tree caches {len(pages)} pages, {evictable} evictable; the package's cache {len(want_pages)}, "
                f"{want_evictable} evictable (pages that differ: {sorted(set(pages) ^ set(want_pages))[:8]}). "
                f"Hint: {LRU_HINT}"
            )
