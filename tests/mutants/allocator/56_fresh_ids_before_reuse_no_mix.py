"""Hands out never-used ids first and the freed ids only when the fresh ones cannot cover the
request, taking a request's pages all from one kind, never some of each. When n is more than the
fresh ids left and more than the freed ones, but not more than num_free, it raises OutOfPages: the
contract wants any n free ids, and a free page is free whether it was used before or not."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse"}
MUST_SAY = "your allocate takes a request's pages from one kind only"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "never some of each in one call"


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.next_fresh = 0
        self.freed = []
        self.in_use = set()

    @property
    def num_free(self) -> int:
        return self.num_pages - self.next_fresh + len(self.freed)

    def allocate(self, n: int) -> list[int]:
        if self.next_fresh + n <= self.num_pages:
            pages = list(range(self.next_fresh, self.next_fresh + n))
            self.next_fresh += n
        elif n <= len(self.freed):
            pages = [self.freed.pop() for _ in range(n)]
        else:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        self.in_use.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.freed.append(p)
