"""free() skips every falsy id (`if not p: continue`, meant for a missing page), so page 0, a real
page like any other, is never given back: free([0, 1]) puts only page 1 back, page 0 is neither in
use nor free, and the pool is one page short from then on. E.g. PageAllocator(4): allocate(3) ->
[0, 1, 2], free([0, 1]): num_free is 2 here, 3 for the reference."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse", "pages given back in any order", "many steps in random order"}
MUST_SAY = "never put it back on the free list"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "pages freed but not back on the free list: ids [0]. Page 0 is a real page"


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
            if not p:
                continue
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
