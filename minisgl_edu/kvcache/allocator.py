"""The page allocator: a free list of KV pages.

Where this sits on the request path: the scheduler asks for pages before a request's tokens are
computed and gives them back when the request finishes or is aborted. Every page is either on the
free list, owned by a running request, or held by the prefix cache; `check()` asserts it.
"""

from __future__ import annotations


class OutOfPages(RuntimeError):
    """Raised when more pages are asked for than are free (the scheduler checks first)."""


class PageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        # Pop from the end, so page 0 is handed out first: page maps read naturally left to right.
        self._free: list[int] = list(range(num_pages - 1, -1, -1))
        self._used: set[int] = set()

    @property
    def num_free(self) -> int:
        return len(self._free)

    def allocate(self, n: int) -> list[int]:
        if n > len(self._free):
            raise OutOfPages(f"asked for {n} pages, {len(self._free)} free")
        pages = [self._free.pop() for _ in range(n)]
        self._used.update(pages)
        return pages

    def free(self, pages: list[int]) -> None:
        for p in pages:
            if p not in self._used:
                raise ValueError(f"page {p} freed twice (or never allocated)")
            self._used.remove(p)
            self._free.append(p)

    def is_free(self, page: int) -> bool:
        return page not in self._used

    def used_pages(self) -> set[int]:
        return set(self._used)
