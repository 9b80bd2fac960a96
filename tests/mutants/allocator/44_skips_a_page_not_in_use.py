"""free() skips a page that is not in use (`if p not in self.in_use: continue`), "freeing twice does no
harm, so ignore it". No page is corrupted, but the contract makes every bad free (twice, twice in one call,
never handed out, -1, num_pages) raise ValueError: it is a bug in the caller, and a silent skip hides it.
(Round 30, issue 46.)"""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"double free", "free of a page never handed out"}
MUST_SAY = "must raise ValueError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "not skip it"


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
                continue  # already free (or not a page): nothing to give back
            self.in_use.remove(p)
            self.free_list.append(p)
