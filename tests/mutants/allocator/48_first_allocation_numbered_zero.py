"""Remembers, for every page in use, which allocation it came from (`self.owner[p] = self.count`,
allocations numbered from 0), to give a clearer error, and refuses a page in free() with `if not
self.owner.get(p)`, meaning "no owner". The first allocation is number 0, which is falsy: its pages read
as not in use, so giving them back raises ValueError and they are lost for good (the first request's
pages never return to the pool)."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "reads the pages of the first allocation as not in use"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a record whose value is 0 is still a record"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.owner: dict[int, int] = {}  # page -> the allocation it came from
        self.count = 0  # allocations so far

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        for p in pages:
            self.owner[p] = self.count
        self.count += 1
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if not self.owner.get(p):
                raise ValueError(f"page {p} is not in use")
            del self.owner[p]
            self.free_list.append(p)
