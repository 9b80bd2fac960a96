"""Keeps num_free as a counter and, in allocate(), takes the n pages off it first and raises OutOfPages
only when the counter went negative, without putting it back. A refused allocation takes no page but
leaves num_free too low (even negative), so the cache manager, which reads num_free, thinks pages are in
use that are free and refuses or evicts for nothing from then on."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"out of pages", "exact fit, then nothing left"}
MUST_SAY = "takes n off the count before the check"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "before you take n off the count"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()
        self.num_free = num_pages

    def allocate(self, n: int) -> list[int]:
        self.num_free -= n
        if self.num_free < 0:
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
            self.num_free += 1
