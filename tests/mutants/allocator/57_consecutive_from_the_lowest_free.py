"""Hands out n pages as the n consecutive ids starting at the lowest free id, range(lo, lo + n),
as if the free pages above the lowest were consecutive. On a new allocator they are; once frees
leave holes, the ids after the lowest free one include pages still in use, which are handed out a
second time: take the n ids from the free pages themselves."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "the 3 consecutive ids from the lowest free page"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "the free pages are not consecutive after frees"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_pages = set(range(num_pages))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return self.num_pages - len(self.in_use)

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        if n == 0:
            return []
        lo = min(self.free_pages)
        pages = list(range(lo, lo + n))
        self.free_pages.difference_update(pages)
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_pages.add(p)
