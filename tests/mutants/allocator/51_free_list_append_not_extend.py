"""Checks and takes each page out of the pages in use, then gives the call's pages back in one go with
`self.free_list.append(pages)`, meaning extend(). append() puts the whole list in as ONE element:
num_free grows by 1 whatever the number of pages, and a later allocate() pops that list and hands it out
as if it were a page id."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "put the call's list on the free list as one element"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "free_list.append(pages) adds ONE element"


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
            self.in_use.remove(p)
        self.free_list.append(pages)  # give them back in one go
