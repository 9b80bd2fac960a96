"""Detects a bad free with a set of the pages given back (plus a range check) instead of a set of
the pages in use, and allocate() never takes a page out of that set when it hands the page out
again. So a page never handed out passes the check (it is in range and not yet freed), and a page
freed once, handed out again and then freed correctly is refused. E.g. PageAllocator(4):
allocate(1) -> [0], then free([1]) is accepted (page 1 was never handed out); and allocate(1),
free([0]), allocate(1) -> [0], free([0]) raises ValueError."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out", "many steps in random order"}
MUST_SAY = "never handed out"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "only a page in use may be freed"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.freed = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        return [self.free_list.pop() for _ in range(n)]

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if not (isinstance(p, int) and 0 <= p < self.num_pages) or p in self.freed:
                raise ValueError(f"page {p} freed twice")
            self.freed.add(p)
            self.free_list.append(p)
