"""free() rejects ids that are not pages with `if not 0 < p < self.num_pages`, a strict `<` at the
bottom of the range where `0 <= p` was meant. Page 0 is a real page (the first one handed out), so
giving it back raises ValueError ("not a page id") and it stays in use for good: the pool is one
page short after the first request, and every free() that lists page 0 is refused."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse", "a refused free() loses no page", "pages given back in any order"}
MUST_SAY = "free([0]) of page 0, which is in use, was refused"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test 0 <= p < num_pages, not 0 < p"


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
            if not 0 < p < self.num_pages:
                raise ValueError(f"{p} is not a page id")
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
