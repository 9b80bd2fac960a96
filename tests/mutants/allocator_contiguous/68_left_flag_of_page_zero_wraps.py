"""Keeps a flag per page (free or not) beside the run indexes and, in free(), tests the neighbours with
the flags: the right one guarded (`p + 1 < num_pages`, or IndexError at the last page), the left one
not: `self.is_free[p - 1]`. For page 0 that reads is_free[-1], the LAST page's flag (Python counts -1 from
the end): freeing page 0 while the last page is free looks for a run ending at 0 and fails with KeyError."""

from __future__ import annotations

from minisgl_edu.kvcache import OutOfPages

MUST_FAIL = {"stretch: coalescing, right neighbour freed first", "stretch: many steps against the reference"}
MUST_SAY = "read at p - 1 = -1, a list gives the last page's entry"
CAUGHT_BY = {"hand", "generated"}
HINT_SAYS = "test p > 0 before reading the left neighbour"


class ContiguousPageAllocator:
    def __init__(self, num_pages: int) -> None:
        self.num_pages = num_pages
        self.is_free = [True] * num_pages
        self.by_start: dict[int, int] = {0: num_pages} if num_pages > 0 else {}
        self.by_end: dict[int, int] = {num_pages: 0} if num_pages > 0 else {}

    @property
    def num_free(self) -> int:
        return sum(self.is_free)

    @property
    def runs(self) -> list[tuple[int, int]]:
        return sorted(self.by_start.items())

    def allocate(self, n: int) -> list[int]:
        if n > self.num_free:
            raise OutOfPages(f"asked for {n} pages, {self.num_free} free")
        pages: list[int] = []
        while len(pages) < n:
            need = n - len(pages)
            fitting = [(length, start) for start, length in self.by_start.items() if length >= need]
            if fitting:
                length, start = min(fitting)
                count = need
            else:
                _, start = min((-length, start) for start, length in self.by_start.items())
                length = count = self.by_start[start]
            del self.by_start[start]
            del self.by_end[start + length]
            if count < length:
                self.by_start[start + count] = length - count
                self.by_end[start + length] = start + count
            pages.extend(range(start, start + count))
        for p in pages:
            self.is_free[p] = False
        return sorted(pages)

    def free(self, pages: list[int]) -> None:
        pages = list(pages)
        for p in pages:
            if not (isinstance(p, int) and 0 <= p < self.num_pages) or self.is_free[p]:
                raise ValueError(f"page {p!r} is not in use")
        if len(set(pages)) != len(pages):
            raise ValueError(f"the same page twice in one call: {pages}")
        for p in pages:
            start, length = p, 1
            if self.is_free[p - 1]:  # a free run ends just before p
                start = self.by_end.pop(p)
                length += self.by_start.pop(start)
            if p + 1 < self.num_pages and self.is_free[p + 1]:  # a free run starts just after p
                after = self.by_start.pop(p + 1)
                del self.by_end[p + 1 + after]
                length += after
            self.by_start[start] = length
            self.by_end[start + length] = start
            self.is_free[p] = True
