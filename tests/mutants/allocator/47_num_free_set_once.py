"""Sets `self.num_free = num_pages` in __init__, reading "a property or attribute" as "an attribute
set at the start", and never updates it. num_free must say how many pages are free now: after any
allocate() it overstates the free pages, so the cache manager admits work that cannot get pages."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages"}
MUST_SAY = "it never changes"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "must change with every allocate() and free()"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()
        self.num_free = num_pages

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
            self.free_list.append(p)
