"""Defines its own `class OutOfPages(Exception)` in the answer's cell, over the one the notebook imports
from minisgl_edu.kvcache, and raises that. It has the same name but is another class: the cache
manager's `except OutOfPages` (the engine's) does not catch it, so running out of pages, which the
scheduler handles by making requests wait, crashes it instead. (Round 31, issue 46.)"""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages  # noqa: F401  (imported, then shadowed below)

MUST_FAIL = {"out of pages", "exact fit, then nothing left", "many steps in random order"}
MUST_SAY = "raised OutOfPages"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "raise OutOfPages (from minisgl_edu.kvcache.allocator)"


class OutOfPages(Exception):  # noqa: F811
    """Not enough free pages."""


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
                raise ValueError(f"page {p} freed twice")
            self.in_use.remove(p)
            self.free_list.append(p)
