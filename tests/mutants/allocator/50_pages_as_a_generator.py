"""Takes the pages with a generator, `pages = (self.free_list.pop() for _ in range(n))`, "no list needed",
marks them in use with `self.in_use.update(pages)` and returns `list(pages)`. update() runs the generator
to its end, so the pages leave the free list and become in use, but the list returned is empty: every
allocation of n > 0 pages gives the caller nothing and loses n pages."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages"}
MUST_SAY = "then returned an empty list"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "in_use.update(pages) used it up"


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
        pages = (self.free_list.pop() for _ in range(n))
        self.in_use.update(pages)
        return list(pages)

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
