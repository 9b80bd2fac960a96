from cells import code, md

CELLS = [
    md("""
# Exercise 4 — The page allocator

**Goal:** write the free list that hands out KV-cache pages. **Time:** about 15 minutes.

The KV pool (`minisgl_edu/kvcache/pool.py`) is cut into pages of `page_size` token slots. Before
each forward pass the scheduler's cache manager asks the allocator for the pages the new tokens
need (`CacheManager.reserve`); when a request finishes or is aborted the pages come back
(`CacheManager.release`). Every page must at any moment be either free or held by exactly one
owner: a page handed out twice means two requests overwrite each other's keys and values, and
nothing crashes; the answers are just wrong.

Write a class `PageAllocator(num_pages)`. The contract:

* `num_free`: how many pages are free (a property or attribute: the cache manager reads
  `allocator.num_free` as a number);
* `allocate(n) -> list[int]`: `n` distinct free page ids from `range(num_pages)`, which are in use
  from then on. Asking for exactly `num_free` pages gets every free page; `allocate(0)` returns
  `[]`, even when no page is free (the cache manager asks for 0 pages whenever a step's tokens fit
  in a request's last page). If fewer than `n` are free, raise `OutOfPages` and take nothing;
* `free(pages)`: the pages are free again and may be handed out by a later `allocate`. Requests
  finish in any order, so pages come back in any order and in any grouping (a whole request, or
  part of one); `free([])` gives back nothing and is not an error. A page that is not in use
  raises `ValueError`: freed twice, listed twice in the same call, never handed out, or not a page
  id at all (`-1`, `num_pages`). Each of those would put an id on the free list that is not free,
  and it would be handed out twice. When a call is refused, the pages listed before the bad one
  may have been given back or not, but no page is ever lost: each is still either in use or free.

The invariant behind all of it: at every moment each page is either free or held by exactly one
owner, however many requests have come and gone. Keep the state on `self`: every scheduler builds
its own allocator. The package's own version is `PageAllocator` in
`minisgl_edu/kvcache/allocator.py`; don't peek before you try.
"""),
    code("""
from __future__ import annotations

from minisgl_edu.grading import check
from minisgl_edu.kvcache import OutOfPages
"""),
    code("""
class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()
        ### END SOLUTION

    @property
    def num_free(self) -> int:
        ### BEGIN SOLUTION
        return len(self.free_list)
        ### END SOLUTION

    def allocate(self, n: int) -> list[int]:
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages
        ### END SOLUTION

    def free(self, pages: list[int]) -> None:
        ### BEGIN SOLUTION
        ### HINT: see the contract above
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
        ### END SOLUTION
"""),
    md("""
## Check your answer

Unit cases first: distinct ids, `allocate(0)`, reuse after `free`, running out (nothing taken),
every kind of bad `free` above, an exact fit that leaves nothing free, `free([])`, a `free` refused
in the middle of its list, pages given back newest first and oldest first, 400 random steps
of allocations and frees on 13 pages with the invariant checked after each, and two allocators
side by side. Then the grader swaps your
allocator into a real scheduler (`scheduler.cache.allocator = PageAllocator(num_pages)`), runs
three requests on the default model, and checks that the tokens equal the reference and that
every page came back.

Each case has a time limit, so an answer that loops fails that case instead of hanging the
notebook; and the class must be your own code (wrapping the package's `PageAllocator` scores 0).
When a case fails, its message says which call went wrong and why, and a hint follows.
"""),
    code("""
result = check("allocator", PageAllocator)
"""),
    md("""
## Stretch: contiguous runs, best fit (not in this engine)

The allocator above may hand out any free ids, and this engine does not mind: its attention
kernels read a request's pages through the page table, one id at a time, wherever they lie. An
allocator can still try to give a request *consecutive* pages. Its page-table row then compresses
into a few ranges (`[(40, 6), (3, 2)]` instead of eight ids), and code that copies a request's
K/V as a whole (to host memory, to another GPU; this engine does neither) could move a few large
ranges instead of many pages. This is a variation for you to build, not what the engines below
do: mini-sglang's `CacheManager` keeps its free pages in a tensor, takes the first `n` and puts
freed pages at the end; SGLang's `PagedTokenToKVPoolAllocator` also takes the first `n` of its free list, and (with
`need_sort`) sorts freed pages back in only when that list runs short, so consecutive ids tend to
come out together without anyone tracking runs; vLLM's `FreeKVCacheBlockQueue` hands out blocks
from the front of a queue ordered for prefix-cache eviction (least recently used first), with no
regard to contiguity.

Write `ContiguousPageAllocator(num_pages)`, with the interface of `PageAllocator` above
(`num_free`, `allocate(n)`, `free(pages)`, `OutOfPages`, `ValueError`), plus:

* `runs` (a property): the free pages as a list of `(start, length)` pairs of *maximal* runs of
  consecutive ids, sorted by `start`. Two runs never touch: free pages 3, 4, 5 are `(3, 3)`,
  never `(3, 1), (4, 2)`. A new allocator of 10 pages has `runs == [(0, 10)]`.
* `allocate(n)`:
  * if some free run has at least `n` pages, take the first `n` pages of the *smallest* such run
    (best fit); of runs of the same length, the one with the lowest start;
  * if no single run holds `n` pages but `num_free >= n`, it must still succeed: the cache
    manager checks `num_free` only, and a request it admitted must get its pages. Then take the
    *largest* run whole (of equal ones, the lowest start) and serve the pages still needed by
    these same two rules, again and again;
  * if `num_free < n`, raise `OutOfPages` and take nothing;
  * return the pages in increasing order; `allocate(0)` returns `[]`.
* `free(pages)`: the pages, in any order, join the free runs, merged with the free run just
  before them and the one just after. A call with any page that is not in use (freed twice,
  never handed out, `-1`, `num_pages`), or with the same page twice, raises `ValueError` and
  changes nothing, not even for the good pages of that call.

The answer is fully determined, so the grader compares your pages and `runs` with its own after
every step: best fit against first fit, ties, a fragmented pool, running out, runs merging on
either side, refused frees, and two long random workloads. Then it puts your allocator into a
real scheduler (`scheduler.cache.allocator`), gives it 28 pages for eight requests, three at a
time, and compares every `allocate` the cache manager makes with its own, the tokens, and that
every page is back at the end (`runs == [(0, 28)]`). It is graded on its own score line,
`allocator_contiguous`; keeping a package `PageAllocator` inside is not an answer (your own
`PageAllocator` from above is fine, if it helps).
"""),
    code("""
class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        ### BEGIN SOLUTION
        # Each free run twice: by its start (start -> length) and by its end (end -> start, where
        # end is one past its last page), so a freed page finds both its neighbours at once.
        self.by_start: dict[int, int] = {0: num_pages} if num_pages > 0 else {}
        self.by_end: dict[int, int] = {num_pages: 0} if num_pages > 0 else {}
        self.in_use: set[int] = set()
        ### END SOLUTION

    @property
    def num_free(self) -> int:
        ### BEGIN SOLUTION
        return self.num_pages - len(self.in_use)
        ### END SOLUTION

    @property
    def runs(self) -> list[tuple[int, int]]:
        ### BEGIN SOLUTION
        return sorted(self.by_start.items())
        ### END SOLUTION

    def allocate(self, n: int) -> list[int]:
        ### BEGIN SOLUTION
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)  # smallest, then lowest start
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())  # largest
                length = count = self.by_start[start]
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:  # the rest of the run stays free
                self.by_start[start + count] = length - count
                self.by_end[start + length] = start + count
            pages.extend(range(start, start + count))
        self.in_use.update(pages)
        return sorted(pages)
        ### END SOLUTION

    def free(self, pages: list[int]) -> None:
        ### BEGIN SOLUTION
        pages = list(pages)
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p!r} is not in use (freed twice, or never handed out)")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            self.in_use.remove(p)
            start, length = p, 1
            if p in self.by_end:  # a free run ends just before p
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 in self.by_start:  # a free run starts just after p
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
        ### END SOLUTION
"""),
    code("""
result_stretch = check("allocator_contiguous", ContiguousPageAllocator)
"""),
    md("""
## Going further

* The package's allocator hands out page 0 first. Why does that make the page map of chapter 06
  easier to read, and does the engine care?
* With the radix cache, a finished request's pages do not all return to the free list. Where do
  they go, and when do they come back? (`kvcache/radix_cache.py`, `evict`.)
"""),
]
