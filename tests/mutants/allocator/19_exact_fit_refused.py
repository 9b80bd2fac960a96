"""Refuses an allocation with `if n >= len(self.free_list)` instead of `>`: asking for exactly the
pages that are free raises OutOfPages, and so does allocate(0) once no page is free. E.g.
PageAllocator(4).allocate(4) raises; the reference returns all four pages. In the engine, a request
admitted on an exact fit (which the scheduler allows) cannot get its last page."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "exact fit, then nothing left"}
MUST_SAY = "asking for exactly the free pages fits"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "an exact fit is no shortage: refuse only when n > num_free"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n >= len(self.free_list):
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
