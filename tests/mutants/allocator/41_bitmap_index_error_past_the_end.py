"""Keeps a bitmap of pages in use and checks a freed page with `if p < 0 or not self.used[p]`: it thought of
-1 (a negative index would read the last page) but not of the other end. free([num_pages]) reads past the end
of the bitmap and raises IndexError instead of the ValueError the contract asks for, so a caller that catches
ValueError for a bad page id crashes instead."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out", "a refused free() loses no page"}
MUST_SAY = "page 2 is past the end"
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
            if p < 0 or not self.used[p]:
                raise ValueError(f"page {p} is not in use")
            self.used[p] = False
            self.free_list.append(p)
