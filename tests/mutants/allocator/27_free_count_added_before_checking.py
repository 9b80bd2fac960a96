"""Keeps num_free as a counter beside the free list, and in free() adds `len(pages)` to it first,
before checking any page. When the call is refused (a page listed twice, freed twice, or not a page
id), the pages the call never gave back are counted as free anyway: num_free grows past the pages
the allocator has, and the cache manager then admits requests that allocate() must refuse."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"the same page twice in one free()", "free of a page never handed out", "a refused free() loses no page"}
MUST_SAY = "page(s) that were never given back"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a refused free() counts none it did not give back"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()
        self.count = num_pages

    @property
    def num_free(self) -> int:
        return self.count

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        self.count -= n
        return pages

    def free(self, pages: list[int]) -> None:
        self.count += len(pages)
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
