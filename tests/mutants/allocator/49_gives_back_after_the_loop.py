"""Checks every page of the call in a loop and then gives the page back after that loop, one indentation
level too far out: only `p`, the last page the loop saw, goes back to the free list. Every other page of
a multi-page free() stays marked in use forever (the pool shrinks with each finished request), and
free([]) fails with a NameError instead of doing nothing."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "gives back only the last page of its call"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not only the last"


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
        self.free_list.append(p)
