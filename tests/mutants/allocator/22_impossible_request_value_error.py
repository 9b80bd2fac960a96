"""Tells two refusals apart: a request for more pages than the whole pool (`n > num_pages`) raises
ValueError ("a bad argument: it can never be served"), and only a request that could fit later
raises OutOfPages. The contract has one rule: "If fewer than n are free, raise OutOfPages and take
nothing"; the cache manager and scheduler catch OutOfPages, so PageAllocator(4).allocate(5) must
raise OutOfPages, where this answer raises ValueError."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"out of pages"}
MUST_SAY = "more than the whole pool"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "more pages than the whole pool is a shortage like any other"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > self.num_pages:
            raise ValueError(f"asked for {n} pages, the pool has only {self.num_pages}")
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
