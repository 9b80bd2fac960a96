"""Returns the allocated pages as a set, `return set(pages)` ("n distinct free page ids": a set says
distinct). The contract's `allocate(n) -> list[int]` is a list of the pages in the order taken: the cache
manager writes them into the request's page-table row position by position, and a set has no order."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "allocate(0) takes nothing"}
MUST_SAY = "returned them as a set, not a list"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a set has no order"


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
        return set(pages)

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
