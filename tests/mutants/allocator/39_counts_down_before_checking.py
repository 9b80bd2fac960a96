"""Keeps a count of handed-out copies per page and, in free(), takes one off first and refuses the page
only if the count went below zero. A refused page keeps the -1: the next time that page is handed out
its count is 0, not 1, so giving it back then is refused as a double free and the page is lost for good."""

from __future__ import annotations

from collections import Counter

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out"}
MUST_SAY = "changed page 0's record"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test the page before you take its count down"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.count = Counter()  # how many owners each page has (0 or 1)

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        for p in pages:
            self.count[p] += 1
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            self.count[p] -= 1
            if self.count[p] < 0:
                raise ValueError(f"page {p} is not in use")
            self.free_list.append(p)
