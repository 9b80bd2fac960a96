"""free() pops the pages off the list it is given (while pages: p = pages.pop()), so the caller's list
is empty once free() returns. The list belongs to the caller: code that reads it again after giving
the pages back (to free them a second time and see the refusal, to compare with what allocate hands
out next) finds nothing there. free() must only read its argument."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"free and reuse", "double free", "exact fit, then nothing left"}
MUST_SAY = "changed the list it was given"
CAUGHT_BY = {"hand"}
HINT_SAYS = "must leave the caller's list as it was"


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
        while pages:
            p = pages.pop()
            if p not in self.in_use:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
