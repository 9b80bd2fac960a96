"""Gives pages back one by one and, on a bad page, tries to undo the call ("a refused free changes
nothing"): it marks the pages it already gave back as in use again, but leaves them on the free
list. Those pages are now both in use and free: allocate() can hand them out while their owner still
holds them, and the owner's own later free() is accepted and lists them a second time, so num_free
grows past num_pages. Differs e.g. for 6 pages, allocate(4) -> [0, 1, 2, 3], then free([0, 1, 6,
2]) (refused at page 6) and each page freed again: num_free is 8 of 6, and allocate(8) hands pages
0 and 1 out twice."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"a refused free() loses no page"}
MUST_SAY = "on the free list while they were still in use"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "take them off the free list too"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use: set[int] = set()

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
        done = []
        for p in pages:
            if p not in self.in_use:
                self.in_use.update(done)  # the call is refused: those pages stay in use
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
            done.append(p)
