"""Keeps the pages in use as a list and, in free(), checks `p in self.in_use` and then removes it with
`del self.in_use[p]`, which deletes the element at POSITION p, not the page id p. As soon as the
list is not exactly [0, 1, 2, ...], the wrong page leaves the in-use list (or IndexError is raised),
so a page still in use can be freed again and handed out twice."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free of a page never handed out"}
MUST_SAY = "took page 2 out of use, the page at position 1"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "deletes the entry at position p of the list, not page p"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = []

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > len(self.free_list):
            raise OutOfPages(f"asked for {n} pages, {len(self.free_list)} free")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.extend(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            del self.in_use[p]
            self.free_list.append(p)
