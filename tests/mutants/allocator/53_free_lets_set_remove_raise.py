"""free() lets the set of pages in use do the checking: `self.in_use.remove(p)` raises when p is not in
use, so a double free, a page never handed out or -1 is refused before it reaches the free list. But
set.remove raises KeyError, not the ValueError of the contract, so a caller that catches ValueError (as
the contract promises it may) sees an exception it does not expect."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"double free", "the same page twice in one free()", "free of a page never handed out"}
MUST_SAY = "raised KeyError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "raise ValueError"


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
            self.in_use.remove(p)  # raises if p is not in use
            self.free_list.append(p)
