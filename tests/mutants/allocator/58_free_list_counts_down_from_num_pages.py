"""Builds the free list counting down, `list(range(num_pages, -1, -1))`, to pop page 0 first, with the
start off by one: a reversed range starts at num_pages - 1. The pool then holds num_pages + 1 ids:
num_free of a new allocator is one too many, and `num_pages` itself (not a page: the pool's dummy page)
is handed out once the real pages are taken."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"allocate distinct pages", "allocate(0) takes nothing", "a refused free() loses no page"}
MUST_SAY = "one too many: allocate(11) on a new one hands out"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "range(num_pages - 1, -1, -1) starts at num_pages - 1, not at num_pages"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages, -1, -1))  # popped from the end: page 0 first
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
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
