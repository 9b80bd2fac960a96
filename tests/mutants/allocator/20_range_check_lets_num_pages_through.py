"""Keeps one in-use flag per page and checks a freed id with `p < 0 or p > self.num_pages` before
reading its flag: an off-by-one at the top of the range. `free([num_pages])` passes the range check
and then reads `self.used[num_pages]`, one past the end of the list: IndexError instead of the
ValueError the contract asks for ("a page that is not in use raises ValueError: ... not a page id at
all (-1, num_pages)"); the cache manager and any caller catching ValueError crash. Differs e.g. on
PageAllocator(4): allocate(1); free([4]) raises IndexError here, ValueError for the reference."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out", "a refused free() loses no page"}
MUST_SAY = "must raise ValueError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an id past the end (p >= num_pages)"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.used = [False] * num_pages

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        for p in pages:
            self.used[p] = True
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p < 0 or p > self.num_pages or not self.used[p]:
                raise ValueError(f"page {p} is not in use")
            self.used[p] = False
            self.free_list.append(p)
