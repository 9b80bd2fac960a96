"""Finds the pages of allocate(n) with `[self.used.index(False) for _ in range(n)]` and marks them in use
only after the comprehension: nothing is marked while it runs, so every index(False) finds the same lowest
free page, and allocate(4) on a new allocator returns [0, 0, 0, 0]. Two requests then share one page and
the second free of it is refused: each page must be marked (or taken off the free list) as it is found."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "allocate distinct pages",
    "allocate(0) takes nothing",
    "free([]) gives back nothing",
    "generated: 200 runs of allocate and free, the invariant checked after each step",
}
MUST_SAY = "allocate(4) returned [0, 0, 0, 0]: page 0 4 times in ONE call"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "Mark each page in use (or take it off the free list) as you find it"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.used = [False] * num_pages  # one flag per page: True while some request holds it

    @property
    def num_free(self) -> int:
        return self.used.count(False)

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages = [self.used.index(False) for _ in range(n)]  # the lowest free pages
        for p in pages:
            self.used[p] = True
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if not 0 <= p < self.num_pages or not self.used[p]:
                raise ValueError(f"page {p} is not in use")
            self.used[p] = False
