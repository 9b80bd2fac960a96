"""free() validates each page with `assert p in self.in_use` instead of raising ValueError. A bad free
then raises AssertionError, which the caller's `except ValueError` does not catch (and python -O drops
the check altogether), so the contract's ValueError is never raised."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"double free"}
MUST_SAY = "raised AssertionError"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "raise ValueError"


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
            assert p in self.in_use, f"page {p} freed twice"
            self.in_use.remove(p)
            self.free_list.append(p)
