"""Validates every page up front (each one in use) and then frees them with set.discard. A page
listed twice in one call passes the check twice (nothing was freed yet when it is checked), is
discarded twice without error, and goes onto the free list twice: the next allocations hand the
same page to two requests, which then write the same KV memory. Differs for free([p, p]) of a page
in use: the reference raises ValueError, this answer accepts it."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"the same page twice in one free()"}
MUST_SAY = "the same page twice in one call"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "refuse a repeat within the list"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
        for p in pages:
            self.in_use.discard(p)
            self.free_list.append(p)
