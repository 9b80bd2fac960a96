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

Write a class `PageAllocator(num_pages)` with:

* `num_free` — how many pages are free (a property or attribute);
* `allocate(n) -> list[int]` — `n` distinct free page ids from `range(num_pages)` (`[]` for
  `n == 0`); if fewer than `n` are free, raise `OutOfPages` and take nothing;
* `free(pages)` — give pages back. A page that is not in use raises `ValueError`: freed twice,
  listed twice in the same call, never handed out, or not a page id at all (`-1`,
  `num_pages`). Each of those would put an id on the free list that is not free, and it would be
  handed out twice.

Keep the state on `self`: every scheduler builds its own allocator.
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
        ### HINT: a list of free ids and a set of ids in use
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
        ### HINT: check n against the free count before taking anything
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages
        ### END SOLUTION

    def free(self, pages: list[int]) -> None:
        ### BEGIN SOLUTION
        ### HINT: refuse a page that is not in use, then put it back on the free list
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
every kind of bad `free` above, and two allocators side by side. Then the grader swaps your
allocator into a real scheduler (`scheduler.cache.allocator = PageAllocator(num_pages)`), runs
three requests on the default model, and checks that the tokens equal the reference and that
every page came back.

Each case has a time limit, so an answer that loops fails that case instead of hanging the
notebook; and the class must be your own code (wrapping the package's `PageAllocator` scores 0).
"""),
    code("""
result = check("allocator", PageAllocator)
"""),
    md("""
## Going further

* The package's allocator hands out page 0 first. Why does that make the page map of chapter 06
  easier to read, and does the engine care?
* With the radix cache, a finished request's pages do not all return to the free list. Where do
  they go, and when do they come back? (`kvcache/radix_cache.py`, `evict`.)
"""),
]
