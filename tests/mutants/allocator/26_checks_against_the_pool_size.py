"""Refuses an allocation only when `n > self.num_pages`, the size of the whole pool, instead of the
pages free now. A request that fits in the pool but not in the free pages passes the check and pops
the free list dry: IndexError instead of OutOfPages, which the scheduler does not catch, and the
pages popped before the error are lost for good."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"out of pages", "exact fit, then nothing left", "many steps in random order"}
MUST_SAY = "your check compares n with the pool size"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not with num_pages, the size of the whole pool"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.free_list = list(range(num_pages - 1, -1, -1))
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return len(self.free_list)

    def allocate(self, n: int) -> list[int]:
        if n > self.num_pages:
            raise OutOfPages(f"asked for {n} pages, the pool has {self.num_pages}")
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
            self.free_list.append(p)
