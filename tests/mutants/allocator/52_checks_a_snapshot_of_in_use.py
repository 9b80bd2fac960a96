"""free() checks the pages against a copy of the pages in use taken before its loop ("validate against
the state at the call") and removes each page from the real set as it goes. A page listed twice in one
call passes the check the second time (the copy still holds it), and set.remove raises KeyError instead
of the ValueError the contract asks for."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"the same page twice in one free()"}
MUST_SAY = "raised KeyError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "a copy of the pages in use"


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
        used = set(self.in_use)  # the pages in use when the call came in
        for p in pages:
            if p not in used:
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
