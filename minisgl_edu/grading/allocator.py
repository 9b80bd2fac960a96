"""Exercise 4 — the page allocator: a class `cls(num_pages)` with `allocate(n)`, `free(pages)`, `num_free`.

The scheduler's cache manager asks it for pages before every forward pass and gives them back
when requests finish or are aborted. The real-engine case swaps it into `scheduler.cache` and
runs requests to the end: same tokens as the reference, every page back.
"""

from __future__ import annotations

from minisgl_edu.core import SamplingParams
from minisgl_edu.grading.core import Case
from minisgl_edu.grading.harness import run_requests
from minisgl_edu.kvcache.allocator import OutOfPages
from minisgl_edu.kvcache.allocator import PageAllocator as reference


def case_allocate_distinct(cls):
    a = cls(10)
    assert a.num_free == 10, "a new allocator has every page free"
    x, y = a.allocate(4), a.allocate(6)
    assert len(x) == 4 and len(y) == 6, "allocate(n) returns n pages"
    assert sorted(x + y) == list(range(10)), "pages are distinct ids in range(num_pages)"
    assert a.num_free == 0


def case_free_and_reuse(cls):
    a = cls(4)
    x = a.allocate(3)
    a.free(x[:2])
    assert a.num_free == 3, "freed pages are free again"
    y = a.allocate(3)
    assert len(set(y)) == 3 and not set(y) & {x[2]}, "a page in use is never handed out twice"


def case_out_of_pages(cls):
    a = cls(3)
    a.allocate(2)
    try:
        a.allocate(2)
    except OutOfPages:
        pass
    else:
        raise AssertionError("asking for more pages than are free must raise OutOfPages")
    assert a.num_free == 1, "a failed allocate must not take any page"


def case_double_free(cls):
    a = cls(3)
    x = a.allocate(1)
    a.free(x)
    try:
        a.free(x)
    except ValueError:
        pass
    else:
        raise AssertionError("freeing a page twice must raise ValueError (it would be handed out twice)")


def case_real_engine(cls):
    params = [SamplingParams(max_tokens=10, ignore_eos=True)] * 3
    got = run_requests(params, cache="naive",
                       setup=lambda s: setattr(s.cache, "allocator", cls(s.cache.num_pages)))
    ref = run_requests(params, cache="naive")
    assert got.tokens == ref.tokens, "the engine produced different tokens with your allocator"
    assert got.scheduler.cache.num_free == got.scheduler.cache.num_pages, "pages are missing after all requests ended"


CASES = [
    Case("allocate distinct pages", case_allocate_distinct, "keep a list of free page ids and pop from it"),
    Case("free and reuse", case_free_and_reuse, "free() puts pages back on the free list"),
    Case("out of pages", case_out_of_pages, "check n against the free count before taking anything"),
    Case("double free", case_double_free, "remember which pages are in use"),
    Case("in the real engine", case_real_engine, "the unit cases must pass first"),
]
SYMBOL = "PageAllocator"
SOLUTION = reference
