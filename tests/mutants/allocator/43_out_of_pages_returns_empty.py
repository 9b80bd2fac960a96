"""When fewer than n pages are free, allocate() returns an empty list ('nothing could be given') instead
of raising OutOfPages. The caller (the cache manager) then writes a row with no pages for tokens it
believes it has room for, and the refusal is silent. (Round 29, issue 46.)"""

from __future__ import annotations

MUST_FAIL = {"out of pages", "exact fit, then nothing left", "many steps in random order"}
MUST_SAY = "answers a shortage with []"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "do not return []"


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
            return []  # not enough free: nothing to give
        pages = [self.free_list.pop() for _ in range(n)]
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
