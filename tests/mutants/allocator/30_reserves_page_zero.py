"""Keeps page 0 back as a reserved null page, as some engines do: the free list starts as pages
1 .. num_pages - 1, so a new allocator has num_free == num_pages - 1 and page 0 is never handed out.
The contract makes every page id 0 .. num_pages - 1 free at the start: PageAllocator(10) must hand
out ten distinct pages, and the cache manager, which counts on num_pages pages, loses one for good."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "many steps in random order", "in the real engine"}
MUST_SAY = "never page 0"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "page 0 included: no page is kept back as a reserved null page"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, 0, -1))
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
            self.free_list.append(p)
