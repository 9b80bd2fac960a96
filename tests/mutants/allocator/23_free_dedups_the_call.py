"""free() walks `set(pages)`, "each page once", so a page listed twice in one call is given back once
and the call succeeds. No page is lost or doubled, but the contract says a page listed twice in
the same call raises ValueError (like one freed twice): the caller's list is wrong (two owners
think they hold the page, or one row lists it twice) and must not pass silently. Differs e.g. on
PageAllocator(4): allocate(2) -> [0, 1]; free([0, 0]): the reference raises ValueError, this
answer returns None."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"the same page twice in one free()"}
MUST_SAY = "the same page twice in one call, [0, 0], must raise ValueError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "refuse a repeat within the list"


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
        for p in set(pages):  # each page once
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
