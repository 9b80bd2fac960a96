"""free() puts each page on the free list before checking that it is in use. A refused page is then
on the free list although it was not in use: free([p, p]) gives p back once, puts it on the free
list a second time and only then raises, so page p is handed out twice by the next allocate. A
page is checked before it goes back, so the page a free() is refused for never goes back."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {
    "the same page twice in one free()",
    "free of a page never handed out",
    "a refused free() loses no page",
}
MUST_SAY = "on the free list while it was already free"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a refused free() put the page it refused on the free list"


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
            self.free_list.append(p)
            if p not in self.in_use:
                raise ValueError(f"page {p} is not in use")
            self.in_use.remove(p)
