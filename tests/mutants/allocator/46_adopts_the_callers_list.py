"""When nothing is free, free() takes the caller's list as its new free list (`self.free_list = pages`,
"no copy needed, they are all free now") instead of copying the ids. The list still belongs to the
caller: when it later reuses or clears it, the allocator's free pages change with it (pages vanish,
or ids appear twice), and a later allocate() pops pages out of the caller's list."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"exact fit, then nothing left"}
MUST_SAY = "the very list the caller passed to free()"
CAUGHT_BY = {"hand"}
HINT_SAYS = "never keeps the caller's list object"


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
            if p not in self.in_use or pages.count(p) > 1:
                raise ValueError(f"page {p} freed twice")
        if not self.free_list:
            self.free_list = pages  # nothing else is free: these are the free list now
            self.in_use.difference_update(pages)
            return
        for p in pages:
            self.in_use.remove(p)
            self.free_list.append(p)
